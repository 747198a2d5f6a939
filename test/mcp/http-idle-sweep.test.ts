/**
 * serveHttp's idle-session sweep closes only idle sessions: a call still being answered (an
 * approval wait, a long tool, a call whose POST the client dropped) keeps its session, and the
 * idle time counts from when it ends. An open GET stream alone does not keep a session.
 * `sessionIdleMs` is small here; the sweep runs every second, so each call outlasts two sweeps.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createGate, defineTool } from "../../src/index.js";
import { createMcpServer, serveHttp, type HttpHandle } from "../../src/mcp/index.js";
import { until } from "./proxy-helpers.js";

/** Longer than two sweeps (1 s apart) and far longer than `sessionIdleMs`. */
const LONG_MS = 2_500;
const IDLE_MS = 100;

/** A gate with a slow read and a write a person approves after LONG_MS; `events` says how each ended. */
function slowGate() {
  const events: string[] = [];
  const slow = defineTool({
    name: "slow",
    version: "1",
    description: "Answers after ms milliseconds",
    input: z.object({ ms: z.number().int().min(0) }),
    output: z.object({ done: z.boolean() }),
    effect: "read",
    timeoutMs: 10_000,
    retry: false,
    execute: ({ ms }, ctx) =>
      new Promise<{ done: boolean }>((resolve, reject) => {
        const t = setTimeout(() => {
          events.push("slow:done");
          resolve({ done: true });
        }, ms);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(t);
          events.push("slow:aborted");
          reject(new Error("aborted"));
        });
      }),
  });
  const refund = defineTool({
    name: "refund",
    version: "1",
    description: "A write that needs approval",
    input: z.object({ amount: z.number() }),
    output: z.object({ ok: z.boolean() }),
    effect: "write",
    approval: true,
    execute: () => ({ ok: true }),
  });
  const gate = createGate({
    tools: [slow, refund],
    approvalTimeoutMs: 60_000,
    approve: (call) =>
      new Promise<boolean>((resolve) => {
        const t = setTimeout(() => {
          events.push("approval:given");
          resolve(true);
        }, LONG_MS);
        call.signal.addEventListener("abort", () => {
          clearTimeout(t);
          events.push("approval:aborted");
          resolve(false);
        });
      }),
  });
  return { gate, events };
}

/** Everything to undo after a test, run even when it fails: fetches to abort, clients and servers to close. */
const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function served(): Promise<{ http: HttpHandle; events: string[] }> {
  const { gate, events } = slowGate();
  const http = await serveHttp(() => createMcpServer(gate, { name: "idle", version: "1" }), { port: 0, sessionIdleMs: IDLE_MS });
  cleanups.push(() => http.close());
  return { http, events };
}

/** A raw session (no GET stream): `post` is bounded by the test's cleanup and a timeout, or by `signal`. */
async function rawSession(url: URL) {
  const stop = new AbortController();
  cleanups.push(() => stop.abort());
  const send = (method: string, body: unknown, sessionId?: string, signal?: AbortSignal) =>
    fetch(url, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      headers: {
        "content-type": "application/json",
        accept: method === "GET" ? "text/event-stream" : "application/json, text/event-stream",
        ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" }),
      },
      signal: AbortSignal.any([stop.signal, signal ?? AbortSignal.timeout(10_000)]),
    });
  const init = await send("POST", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
  const sessionId = init.headers.get("mcp-session-id") ?? "";
  await init.text();
  expect((await send("POST", { jsonrpc: "2.0", method: "notifications/initialized" }, sessionId)).status).toBe(202);
  return {
    post: (body: unknown, signal?: AbortSignal) => send("POST", body, sessionId, signal),
    get: (signal: AbortSignal) => send("GET", undefined, sessionId, signal),
  };
}

const callSlow = (id: number, ms: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "slow", arguments: { ms } } });

describe("serveHttp: the idle sweep leaves a session with work in flight", () => {
  it("an approval wait and a long tool, each longer than sessionIdleMs, are answered; the session closes once idle after them", async () => {
    const { http, events } = await served();
    const client = new Client({ name: "idle", version: "1" });
    cleanups.push(() => client.close());
    await client.connect(new StreamableHTTPClientTransport(http.url));
    const [refund, slow] = await Promise.all([
      client.callTool({ name: "refund", arguments: { amount: 5 } }, undefined, { timeout: 6_000 }),
      client.callTool({ name: "slow", arguments: { ms: LONG_MS } }, undefined, { timeout: 6_000 }),
    ]);
    expect(refund.structuredContent).toEqual({ ok: true });
    expect(slow.structuredContent).toEqual({ done: true });
    expect(events.sort()).toEqual(["approval:given", "slow:done"]);
    // The answers ended the last requests: the session is seen then, and idle from then on.
    expect(http.sessions()).toBe(1);
    await until(() => http.sessions() === 0, 3_000);
  }, 15_000);

  it("a call whose POST the client dropped runs on and keeps the session until it ends", async () => {
    const { http, events } = await served();
    const session = await rawSession(http.url);
    const drop = new AbortController();
    const pending = session
      .post(callSlow(1, LONG_MS), drop.signal)
      .then((r) => r.text())
      .catch(() => "dropped");
    await new Promise((r) => setTimeout(r, 200));
    drop.abort(); // MCP does not count a disconnect as a cancel
    expect(await pending).toBe("dropped");
    await new Promise((r) => setTimeout(r, 1_500)); // past a sweep, the call still running
    expect(http.sessions()).toBe(1);
    await until(() => events.length > 0, 3_000);
    expect(events).toEqual(["slow:done"]);
    await until(() => http.sessions() === 0, 3_000);
  }, 15_000);

  it("an open GET stream alone does not keep a session: it is closed after sessionIdleMs, and the stream ends", async () => {
    const { http } = await served();
    const session = await rawSession(http.url);
    const get = await session.get(AbortSignal.timeout(5_000));
    expect(get.status).toBe(200);
    const ended = get.text().then(
      () => "ended",
      () => "aborted",
    );
    await until(() => http.sessions() === 0, 3_000);
    expect(await ended).toBe("ended");
    const after = await session.post(callSlow(2, 0));
    expect(after.status).toBe(404);
    await after.text();
  }, 15_000);
});
