import { describe, it, expect } from "vitest";
import { PassThrough } from "node:stream";
import { createMcpServer, serveStdio } from "../../src/mcp/index.js";
import { adversarialGate } from "./_inputs.js";
import { WIRE } from "./_mcp.js";

/** The stdio transport over in-process streams: raw JSON-RPC lines in, replies by id out. */
function stdioPeer() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const waiting = new Map<number, (m: Record<string, unknown>) => void>();
  let buf = "";
  stdout.on("data", (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const m = JSON.parse(line) as Record<string, unknown>;
      if (typeof m.id === "number") waiting.get(m.id)?.(m);
    }
  });
  let id = 0;
  const send = (method: string, paramsText: string): Promise<Record<string, unknown>> =>
    new Promise((resolve) => {
      const n = ++id;
      waiting.set(n, resolve);
      stdin.write(`{"jsonrpc":"2.0","id":${n},"method":"${method}","params":${paramsText}}\n`);
    });
  return { stdin, stdout, send, notify: (method: string) => stdin.write(`{"jsonrpc":"2.0","method":"${method}"}\n`) };
}

describe("adversarial inputs through the MCP stdio server (raw lines)", () => {
  it("every wire case → INVALID_INPUT envelope with 0 attempts and no service call", async () => {
    const { gate, serviceCalls } = adversarialGate();
    const peer = stdioPeer();
    const handle = await serveStdio(createMcpServer(gate, { name: "adversarial", version: "1.0.0" }), { stdin: peer.stdin, stdout: peer.stdout });
    try {
      await peer.send("initialize", JSON.stringify({ protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "adversary", version: "1" } }));
      peer.notify("notifications/initialized");
      for (const c of WIRE) {
        const m = await peer.send("tools/call", `{"name":${JSON.stringify(c.tool)},"arguments":${c.args()}}`);
        const result = m.result as { isError?: boolean; _meta?: Record<string, unknown> } | undefined;
        const env = result?._meta?.["toolgate/result"] as { code: string; issues?: { code: string }[]; meta: { attempts: number } } | undefined;
        expect(env?.code, c.name).toBe("INVALID_INPUT");
        expect(c.codes, c.name).toContain(env?.issues?.[0]?.code);
        expect(env?.meta.attempts, c.name).toBe(0);
      }
      expect(serviceCalls()).toBe(0);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const ok = await peer.send("tools/call", '{"name":"get_order","arguments":{"customerId":"c_1"}}');
      expect((ok.result as { isError?: boolean }).isError).toBeUndefined();
      expect(serviceCalls()).toBe(1);
    } finally {
      await handle.close();
    }
  });
});
