/**
 * The proxy in front of an upstream that changes: tools removed from its list, a list of many pages,
 * an upstream that dies right after each start, calls while it reconnects, and nothing to serve.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { createProxy } from "../../src/mcp/index.js";

const UP = join(fileURLToPath(new URL(".", import.meta.url)), "../fixtures/mcp/changing-upstream.mjs");
const up = (env: Record<string, string> = {}) => ({ kind: "stdio" as const, command: process.execPath, args: [UP], env: { PATH: process.env.PATH ?? "", ...env } });
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("proxy: an upstream that changes", () => {
  it("a tool the upstream removes is refused (DENIED, nothing sent) instead of failing upstream with effect unknown", async () => {
    const logs: string[] = [];
    const p = await createProxy({ upstream: up(), config: {}, onLog: (l) => void logs.push(l) });
    try {
      expect((await p.gate.call("count", {})).ok).toBe(true);
      expect((await p.gate.call("remove", {})).ok).toBe(true);
      for (let i = 0; i < 50 && !logs.some((l) => l.includes("no longer offered")); i++) await pause(20);
      const r = await p.gate.call("count", {});
      expect(r).toMatchObject({ ok: false, code: "DENIED", effect: "none", message: "The upstream no longer offers this tool", meta: { attempts: 0 } });
    } finally {
      await p.close();
    }
  });

  it("its clients are told when the served list changes (listChanged), and the list they read again lacks the removed tool", async () => {
    const p = await createProxy({ upstream: up(), config: {} });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await p.createServer().connect(a);
    const client = new Client({ name: "t", version: "1" });
    let told = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void told++);
    await client.connect(b);
    try {
      expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
      expect((await client.listTools()).tools.some((t) => t.name === "count")).toBe(true);
      await client.callTool({ name: "remove", arguments: {} });
      for (let i = 0; i < 50 && told === 0; i++) await pause(20);
      expect(told).toBe(1);
      expect((await client.listTools()).tools.some((t) => t.name === "count")).toBe(false);
    } finally {
      await client.close();
      await p.close();
    }
  });

  it("a tool list of more than 100 pages is read whole", async () => {
    const p = await createProxy({ upstream: up({ UP_PAGES: "150", UP_PAGE_SIZE: "1" }), config: {} });
    try {
      expect(p.gate.list().filter((l) => /^p\d+$/.test(l.name))).toHaveLength(150);
    } finally {
      await p.close();
    }
  });

  it("an upstream that dies right after each start is restarted with a doubling wait, not every time at once", async () => {
    const restarts: number[] = [];
    const t0 = Date.now();
    const p = await createProxy({
      upstream: up({ UP_DIE_AFTER: "100" }),
      config: { restart: { initialDelayMs: 100, maxDelayMs: 1_600 } },
      onLog: (l) => void (l.includes("restarted") && restarts.push(Date.now() - t0)),
    });
    try {
      await pause(4_500);
      const gaps = restarts.slice(1).map((t, i) => t - restarts[i]!);
      expect(gaps.length).toBeGreaterThanOrEqual(2);
      // Each connection lived 100 ms: the waits double (50–100 ms, then 100–200, 200–400…); without
      // doubling every gap is the same start-up plus life plus one short wait.
      expect(gaps.at(-1)! - gaps[0]!).toBeGreaterThan(150);
    } finally {
      await p.close();
    }
  });

  it("while the restart connects, RETRYABLE carries a usable wait (not 1 ms)", async () => {
    const p = await createProxy({ upstream: up(), config: { restart: { initialDelayMs: 50, maxDelayMs: 100 } } });
    try {
      await p.gate.call("crash", {});
      const waits: number[] = [];
      for (let i = 0; i < 100 && p.upstream.state() !== "up"; i++) {
        const r = await p.gate.call("count", {});
        if (!r.ok && r.code === "RETRYABLE" && r.retryAfterMs !== undefined) waits.push(r.retryAfterMs);
        await pause(5);
      }
      expect(waits.length).toBeGreaterThan(0);
      // The restart is due within 100 ms; once it is connecting, the hint is about a second.
      expect(Math.max(...waits)).toBeGreaterThanOrEqual(500);
    } finally {
      await p.close();
    }
  });

  it("with nothing to serve, the placeholder is neither listed nor callable (UNKNOWN_TOOL)", async () => {
    const p = await createProxy({ upstream: up(), config: { allow: [] } });
    try {
      expect(p.gate.list()).toEqual([]);
      expect(await p.gate.call("__toolgate_none__", {})).toMatchObject({ ok: false, code: "UNKNOWN_TOOL", meta: { attempts: 0 } });
    } finally {
      await p.close();
    }
  });
});
