import { describe, it, expect, beforeAll, afterAll } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { serveHttp, type HttpHandle } from "../../src/mcp/index.js";
import { proxied } from "../mcp/proxy-helpers.js";
import { ADVERSARIAL_CASES } from "./_inputs.js";
import { WIRE, rawSession } from "./_mcp.js";

/** What the fixture upstream says it received, per tool. */
async function received(client: Client): Promise<Record<string, number>> {
  const r = await client.callTool({ name: "received", arguments: {} });
  const block = (r.content as { type: string; text: string }[])[0]!;
  return JSON.parse(block.text) as Record<string, number>;
}

describe("adversarial inputs through the proxy (a real upstream over stdio)", () => {
  let ctx: Awaited<ReturnType<typeof proxied>>;
  let http: HttpHandle;
  beforeAll(async () => {
    ctx = await proxied();
    http = await serveHttp(() => ctx.proxy.createServer(), { port: 0 });
  }, 30_000);
  afterAll(async () => {
    await http.close();
    await ctx.close();
  });

  it("every gate-level case → INVALID_INPUT from the proxy's gate; the upstream never hears of it", async () => {
    const before = (await received(ctx.client)).echo ?? 0;
    for (const c of ADVERSARIAL_CASES) {
      const r = await ctx.proxy.gate.call("echo", c.args());
      expect(r.ok === false && r.code, c.name).toBe("INVALID_INPUT");
      expect(r.ok === false && c.codes.includes(r.issues?.[0]?.code ?? ""), c.name).toBe(true);
    }
    expect((await received(ctx.client)).echo ?? 0).toBe(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("raw JSON bodies to the proxy's HTTP server → INVALID_INPUT envelopes; the upstream never hears of them", async () => {
    const before = (await received(ctx.client)).echo ?? 0;
    const s = await rawSession(http.url);
    for (const c of WIRE) {
      const reply = await s.call("echo", c.args());
      expect(reply.status, c.name).toBe(200);
      const result = reply.message?.result as { isError?: boolean; _meta?: Record<string, unknown> } | undefined;
      const env = result?._meta?.["toolgate/result"] as { code: string; issues?: { code: string }[] } | undefined;
      expect(env?.code, c.name).toBe("INVALID_INPUT");
      expect(c.codes, c.name).toContain(env?.issues?.[0]?.code);
    }
    expect((await received(ctx.client)).echo ?? 0).toBe(before);
    // sanity: a valid call does reach it
    await ctx.client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect((await received(ctx.client)).echo).toBe(before + 1);
  });
});
