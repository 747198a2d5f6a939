/**
 * A cancelled call over Streamable HTTP: MCP sends no answer for it, and the transport ends a POST's
 * response only once every request it carried is answered, so the response of the POST that
 * carried it must still end (src/mcp/cancelled-response.ts) — in SSE mode (serveHttp) and in JSON
 * mode (a transport built with `enableJsonResponse`), on the lane and on the SDK's own path,
 * without costing another request of the same POST its answer.
 */
import { createServer, type Server as NodeServer } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createGate, defineTool } from "../../src/index.js";
import { createMcpServer, fromCallToolResult, serveHttp } from "../../src/mcp/index.js";
import { until } from "./proxy-helpers.js";

/** A gate with one tool that waits `ms` or until cancelled; `started` holds each call's request id. */
function waitGate() {
  const started: string[] = [];
  const aborted: string[] = [];
  const wait = defineTool({
    name: "wait",
    version: "1",
    description: "Wait ms milliseconds, or until cancelled",
    input: z.object({ ms: z.number().int().min(0) }),
    output: z.object({ waited: z.number() }),
    effect: "read",
    timeoutMs: 10_000,
    execute: ({ ms }, ctx) =>
      new Promise<{ waited: number }>((resolve, reject) => {
        const id = ctx.callId.replace(/^.*:/, ""); // "<session>:<request id>"
        started.push(id);
        const t = setTimeout(() => resolve({ waited: ms }), ms);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(t);
          aborted.push(id);
          reject(new Error("aborted"));
        });
      }),
  });
  return { gate: createGate({ tools: [wait] }), started, aborted };
}

/** Everything to undo after a test, run even when it fails: fetches to abort, servers to close. */
const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The body of a response as it arrives: its JSON-RPC messages (SSE `data:` lines), and whether it ended. */
function watch(res: Response): { messages: unknown[]; ended: () => boolean; text: () => string } {
  const messages: unknown[] = [];
  let text = "";
  let ended = false;
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body ?? []) {
        text += decoder.decode(chunk as Uint8Array, { stream: true });
        let cut: number;
        while ((cut = text.indexOf("\n\n")) >= 0) {
          const event = text.slice(0, cut);
          text = text.slice(cut + 2);
          const data = /^data: (.*)$/m.exec(event);
          if (data !== null) messages.push(JSON.parse(data[1]!));
        }
      }
      ended = true;
    } catch {
      // aborted by the test's cleanup
    }
  })();
  return { messages, ended: () => ended, text: () => text };
}

/** Still open after `ms`: true when the body did not end meanwhile. */
async function stillOpen(w: { ended: () => boolean }, ms: number): Promise<boolean> {
  await new Promise((r) => setTimeout(r, ms));
  return !w.ended();
}

const idsOf = (messages: unknown[]): unknown[] => messages.map((m) => (m as { id?: unknown }).id);

/** A raw client of one session: POSTs bounded by a shared abort (the test's cleanup). */
async function rawSession(url: URL) {
  const stop = new AbortController();
  cleanups.push(() => stop.abort());
  const post = (body: unknown, sessionId?: string) =>
    fetch(url, {
      method: "POST",
      body: JSON.stringify(body),
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" }),
      },
      signal: AbortSignal.any([stop.signal, AbortSignal.timeout(15_000)]),
    });
  const init = await post({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
  const sessionId = init.headers.get("mcp-session-id") ?? "";
  await init.text();
  expect((await post({ jsonrpc: "2.0", method: "notifications/initialized" }, sessionId)).status).toBe(202);
  return {
    post: (body: unknown) => post(body, sessionId),
    cancel: async (requestId: number) => {
      const r = await post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId, reason: "stop" } }, sessionId);
      expect(r.status).toBe(202);
    },
  };
}

const call = (id: number, ms: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "wait", arguments: { ms } } });

async function served() {
  const g = waitGate();
  const http = await serveHttp(() => createMcpServer(g.gate, { name: "t", version: "1" }), { port: 0 });
  cleanups.push(() => http.close());
  return { ...g, http };
}

describe("serveHttp: the response of a cancelled call's POST ends", () => {
  it("the official client cancels a call and keeps its session: the POST's SSE response ends, and the session goes on", async () => {
    const { http, started, aborted } = await served();
    // The responses of the POSTs that carried a tools/call, as the client reads them.
    const bodies: { ended: boolean }[] = [];
    const tracking = async (input: string | URL, init?: RequestInit): Promise<Response> => {
      const res = await fetch(input, init);
      if (init?.method !== "POST" || typeof init.body !== "string" || !init.body.includes('"tools/call"') || res.body === null) return res;
      const entry = { ended: false };
      bodies.push(entry);
      const body = res.body.pipeThrough(new TransformStream({ flush: () => void (entry.ended = true) }));
      return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
    const client = new Client({ name: "cancel-http", version: "1" });
    cleanups.push(() => client.close());
    await client.connect(new StreamableHTTPClientTransport(http.url, { fetch: tracking }));
    const stop = new AbortController();
    const cancelled = client.callTool({ name: "wait", arguments: { ms: 8_000 } }, undefined, { signal: stop.signal });
    await until(() => started.length === 1);
    stop.abort("the user stopped");
    await expect(cancelled).rejects.toBeDefined();
    await until(() => aborted.length === 1);
    expect(bodies).toHaveLength(1);
    await until(() => bodies[0]!.ended, 3_000);
    // The session is still there and serves the next call, whose response ends as usual.
    expect(fromCallToolResult(await client.callTool({ name: "wait", arguments: { ms: 1 } }))).toMatchObject({ ok: true, data: { waited: 1 } });
    await until(() => bodies.length === 2 && bodies[1]!.ended, 3_000);
    expect(http.sessions()).toBe(1);
  });

  it("raw: the cancelled call's SSE response ends without any answer for its id", async () => {
    const { http, started, aborted } = await served();
    const s = await rawSession(http.url);
    const res = await s.post(call(7, 8_000));
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const w = watch(res);
    await until(() => started.length === 1);
    await s.cancel(7);
    await until(() => aborted.length === 1);
    await until(w.ended, 3_000);
    expect(w.messages).toEqual([]);
  });

  it("a batch with one cancelled and one answered call: the answer is delivered, then the response ends", async () => {
    const { http, started, aborted } = await served();
    const s = await rawSession(http.url);
    // Cancelled while its partner still runs: the partner's answer ends the response.
    const first = watch(await s.post([call(10, 8_000), call(11, 1_000)]));
    await until(() => started.length === 2);
    await s.cancel(10);
    await until(() => aborted.length === 1);
    expect(await stillOpen(first, 100)).toBe(true); // 11 is still to be answered
    await until(first.ended, 3_000);
    expect(idsOf(first.messages)).toEqual([11]);
    expect(first.messages[0]).toMatchObject({ result: { structuredContent: { waited: 1_000 } } });
    // Cancelled after its partner was answered: the response was only waiting for it.
    const second = watch(await s.post([call(20, 1), call(21, 8_000)]));
    await until(() => second.messages.length === 1);
    expect(idsOf(second.messages)).toEqual([20]);
    expect(await stillOpen(second, 100)).toBe(true);
    await s.cancel(21);
    await until(second.ended, 3_000);
    expect(idsOf(second.messages)).toEqual([20]);
    expect(aborted).toEqual(["10", "21"]);
  });

  it("a cancel ends only its own POST's response: a call on another POST is answered and ends as before", async () => {
    const { http, started, aborted } = await served();
    const s = await rawSession(http.url);
    const kept = watch(await s.post(call(30, 1_500)));
    const dropped = watch(await s.post(call(31, 8_000)));
    await until(() => started.length === 2);
    await s.cancel(31);
    await until(dropped.ended, 3_000);
    expect(dropped.messages).toEqual([]);
    expect(kept.ended()).toBe(false);
    await until(kept.ended, 3_000);
    expect(idsOf(kept.messages)).toEqual([30]);
    expect(kept.messages[0]).toMatchObject({ result: { structuredContent: { waited: 1_500 } } });
    // A cancel for an id that was already answered, or never sent, changes nothing.
    await s.cancel(30);
    await s.cancel(999);
    const after = watch(await s.post(call(32, 1)));
    await until(after.ended, 3_000);
    expect(idsOf(after.messages)).toEqual([32]);
    expect(aborted).toEqual(["31"]);
  });
});

/** A node:http server with one transport built by hand (`enableJsonResponse`), as a library user may wire createMcpServer. */
async function handWired(server: Server, enableJsonResponse: boolean): Promise<URL> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse });
  await server.connect(transport);
  const http: NodeServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => void transport.handleRequest(req, res, chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8"))));
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  cleanups.push(async () => {
    await server.close();
    await new Promise<void>((r) => {
      http.close(() => r());
      http.closeAllConnections();
    });
  });
  return new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
}

describe("a transport in JSON mode (enableJsonResponse): the pending response of a cancelled call's POST is sent", () => {
  it("alone in its POST: 202 with no body; in a batch: the other answer, once it is ready", async () => {
    const { gate, started, aborted } = waitGate();
    const url = await handWired(createMcpServer(gate, { name: "t", version: "1" }), true);
    const s = await rawSession(url);
    const alone = s.post(call(40, 8_000));
    await until(() => started.length === 1);
    await s.cancel(40);
    const res = await Promise.race([alone, new Promise<undefined>((r) => setTimeout(r, 3_000, undefined))]);
    expect(res?.status).toBe(202);
    expect(await res?.text()).toBe("");
    const batch = s.post([call(41, 8_000), call(42, 300)]);
    await until(() => started.length === 3);
    await s.cancel(41);
    const answered = await Promise.race([batch, new Promise<undefined>((r) => setTimeout(r, 3_000, undefined))]);
    expect(answered?.status).toBe(200);
    // One answer: sent as the SDK sends a single one, not as an array.
    expect(await answered?.json()).toMatchObject({ id: 42, result: { structuredContent: { waited: 300 } } });
    expect(aborted).toEqual(["40", "41"]);
  });
});

describe("the SDK's own path (a plain SDK Server from serveHttp's factory)", () => {
  it("a handler the SDK aborts on a cancel: the POST's SSE response ends without an answer", async () => {
    let running = 0;
    let abortedCalls = 0;
    const factory = () => {
      const server = new Server({ name: "plain", version: "1" }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
      server.setRequestHandler(
        CallToolRequestSchema,
        (_req, extra) =>
          new Promise((_resolve, reject) => {
            running++;
            extra.signal.addEventListener("abort", () => {
              abortedCalls++;
              reject(new Error("aborted"));
            });
          }),
      );
      return server;
    };
    const http = await serveHttp(factory, { port: 0 });
    cleanups.push(() => http.close());
    const s = await rawSession(http.url);
    const w = watch(await s.post(call(50, 0)));
    await until(() => running === 1);
    await s.cancel(50);
    await until(() => abortedCalls === 1);
    await until(w.ended, 3_000);
    expect(w.messages).toEqual([]);
  });
});
