/**
 * The tools/call lane (src/mcp/call-lane.ts): what the SDK's request machinery did for a call and
 * the lane must still do — cancellation, no answer after a cancel or a close, the same answer on
 * the SDK path, a fresh (not aborted) signal for the next call.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { CancelledNotificationSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { createGate, defineTool } from "../../src/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createMcpServer, fromCallToolResult, serveHttp } from "../../src/mcp/index.js";
import { until } from "./proxy-helpers.js";

function slowGate() {
  const aborted: string[] = [];
  const started: string[] = [];
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
        started.push(ctx.callId);
        if (ctx.signal.aborted) return reject(new Error("aborted before start"));
        const t = setTimeout(() => resolve({ waited: ms }), ms);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(t);
          aborted.push(ctx.callId);
          reject(new Error("aborted"));
        });
      }),
  });
  return { gate: createGate({ tools: [wait] }), aborted, started };
}

/** A v1 client on the server, and every message the server sent it. */
async function connected(server: ReturnType<typeof createMcpServer>) {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "lane-test", version: "1" });
  await client.connect(b);
  const sent: JSONRPCMessage[] = [];
  const sdk = b.onmessage!;
  b.onmessage = (m, extra) => {
    sent.push(m);
    sdk(m, extra);
  };
  return { client, sent, serverSide: a };
}

const answered = (sent: JSONRPCMessage[], id: number | string) => sent.filter((m) => "id" in m && m.id === id && !("method" in m));

describe("tools/call lane", () => {
  it("a client's cancel aborts the tool's signal, no answer is sent for it, and the next call is not cancelled", async () => {
    const { gate, aborted, started } = slowGate();
    const { client, sent } = await connected(createMcpServer(gate, { name: "t", version: "1" }));
    const stop = new AbortController();
    const cancelled = client.callTool({ name: "wait", arguments: { ms: 5_000 } }, undefined, { signal: stop.signal });
    await until(() => started.length === 1);
    stop.abort("the user stopped");
    await expect(cancelled).rejects.toBeDefined();
    await until(() => aborted.length === 1);
    expect(aborted).toEqual(started);
    await new Promise((r) => setTimeout(r, 50));
    expect(answered(sent, Number(started[0]))).toEqual([]);
    // The next calls get a signal of their own (an aborted controller is never reused).
    for (let i = 0; i < 5; i++) {
      const r = fromCallToolResult(await client.callTool({ name: "wait", arguments: { ms: 1 } }));
      expect(r).toMatchObject({ ok: true, data: { waited: 1 } });
    }
    expect(aborted).toHaveLength(1);
    await client.close();
  });

  it("closing the connection aborts the calls in flight and sends nothing for them", async () => {
    const { gate, aborted, started } = slowGate();
    const { client, sent, serverSide } = await connected(createMcpServer(gate, { name: "t", version: "1" }));
    const calls = [1, 2, 3].map(() => client.callTool({ name: "wait", arguments: { ms: 5_000 } }).catch((e: unknown) => e));
    await until(() => started.length === 3);
    const before = sent.length;
    await serverSide.close();
    await until(() => aborted.length === 3);
    expect([...aborted].sort()).toEqual([...started].sort());
    for (const r of await Promise.all(calls)) expect(r).toBeInstanceOf(Error); // the client saw the connection close
    expect(sent.length).toBe(before);
  });

  it("a cancel still reaches a cancelled-notification handler set on the server", async () => {
    const { gate, aborted, started } = slowGate();
    const server = createMcpServer(gate, { name: "t", version: "1" });
    const heard: unknown[] = [];
    server.setNotificationHandler(CancelledNotificationSchema, (n) => void heard.push(n.params.requestId));
    const { client } = await connected(server);
    const stop = new AbortController();
    const call = client.callTool({ name: "wait", arguments: { ms: 5_000 } }, undefined, { signal: stop.signal });
    await until(() => started.length === 1);
    stop.abort("stop");
    await expect(call).rejects.toBeDefined();
    await until(() => aborted.length === 1 && heard.length === 1);
    expect(String(heard[0])).toBe(started[0]);
    await client.close();
  });

  it("a transport whose send of the answer throws: the failure reaches onerror, and the request is still answered (an internal error)", async () => {
    const { gate } = slowGate();
    const server = createMcpServer(gate, { name: "t", version: "1" });
    const errors: string[] = [];
    server.onerror = (e) => void errors.push(e.message);
    const { client, serverSide } = await connected(server);
    const send = serverSide.send.bind(serverSide);
    serverSide.send = (m, o) => {
      if ("result" in m && (m.result as { content?: unknown }).content !== undefined) throw new Error("socket gone");
      return send(m, o);
    };
    const call = client.callTool({ name: "wait", arguments: { ms: 1 } }, undefined, { timeout: 5_000 });
    await expect(call).rejects.toMatchObject({ code: -32603, message: expect.stringMatching(/Internal error/) });
    expect(errors).toEqual([expect.stringMatching(/Failed to send a tools\/call answer: socket gone/)]);
    await client.close();
  });

  it("a task-augmented call goes to the SDK (which refuses it here) and the tool does not run", async () => {
    const { gate, started } = slowGate();
    const server = createMcpServer(gate, { name: "t", version: "1" });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const got: JSONRPCMessage[] = [];
    b.onmessage = (m) => void got.push(m);
    await b.start();
    await b.send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "wait", arguments: { ms: 1 }, task: { ttl: 1_000 } } });
    await until(() => got.length === 1);
    expect(got[0]).toMatchObject({ id: 5, error: { code: expect.any(Number) } });
    expect(started).toEqual([]);
    await server.close();
  });

  it("over Streamable HTTP: answers reach their own request, a cancel aborts the tool, the session goes on", async () => {
    const { gate, aborted, started } = slowGate();
    const http = await serveHttp(() => createMcpServer(gate, { name: "t", version: "1" }), { port: 0 });
    const client = new Client({ name: "lane-http", version: "1" });
    try {
      await client.connect(new StreamableHTTPClientTransport(http.url));
      const many = await Promise.all([30, 1, 20, 5, 10].map((ms) => client.callTool({ name: "wait", arguments: { ms } })));
      expect(many.map((r) => (fromCallToolResult(r) as { data?: { waited: number } }).data?.waited)).toEqual([30, 1, 20, 5, 10]);
      const stop = new AbortController();
      const cancelled = client.callTool({ name: "wait", arguments: { ms: 5_000 } }, undefined, { signal: stop.signal });
      await until(() => started.length === 6);
      stop.abort("stop");
      await expect(cancelled).rejects.toBeDefined();
      await until(() => aborted.length === 1);
      expect(aborted[0]).toBe(started[5]);
      expect(fromCallToolResult(await client.callTool({ name: "wait", arguments: { ms: 1 } }))).toMatchObject({ ok: true });
    } finally {
      await client.close();
      await http.close();
    }
  });

  it("a tools/call delivered while the transport starts takes the SDK path, with the same answer", async () => {
    const { gate } = slowGate();
    const server = createMcpServer(gate, { name: "t", version: "1" });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const got: JSONRPCMessage[] = [];
    b.onmessage = (m) => void got.push(m);
    await b.start();
    const call = (id: number, args: unknown): JSONRPCMessage => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "wait", arguments: args } });
    // Queued in the in-memory transport: delivered by start(), before the lane is opened.
    await b.send(call(1, { ms: 1 }));
    await b.send(call(2, { ms: "x" }));
    await b.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { arguments: {} } });
    await server.connect(a);
    // Through the lane.
    await b.send(call(11, { ms: 1 }));
    await b.send(call(12, { ms: "x" }));
    await b.send({ jsonrpc: "2.0", id: 13, method: "tools/call", params: { arguments: {} } });
    await until(() => got.length === 6);
    const byId = new Map(got.map((m) => ["id" in m ? Number(m.id) : -1, m]));
    // The same message but for the request id, the callId made from it and the duration (escaped in the text block too);
    // the bytes are the SDK's otherwise, key order included.
    const normal = (m: JSONRPCMessage | undefined): string =>
      JSON.stringify(m)
        .replace(/(\\*"callId\\*":\\*")\d+/g, "$1ID")
        .replace(/(\\*"durationMs\\*":)[\d.]+/g, "$10")
        .replace(/"id":\d+\}$/, '"id":0}')
        .replace(/^\{"jsonrpc":"2.0","id":\d+,/, '{"jsonrpc":"2.0","id":0,');
    for (const id of [1, 2, 3]) expect(normal(byId.get(id + 10)), `request ${id}`).toEqual(normal(byId.get(id)));
    expect(byId.get(11)).toMatchObject({ result: { structuredContent: { waited: 1 } } });
    expect(byId.get(12)).toMatchObject({ result: { isError: true } });
    expect(byId.get(13)).toMatchObject({ error: { code: -32602, message: expect.stringMatching(/params.name must be a string/) } });
    await server.close();
  });
  it("a throwing principal hook: DENIED with a fixed message on both paths, the detail to onerror only", async () => {
    const { gate, started } = slowGate();
    const SECRET = "postgres://admin:hunter2@db.internal/users";
    const server = createMcpServer(gate, {
      name: "t",
      version: "1",
      principal: () => {
        throw new Error(`lookup failed: ${SECRET}`);
      },
    });
    const errors: string[] = [];
    server.onerror = (e) => void errors.push(e.message);
    const [a, b] = InMemoryTransport.createLinkedPair();
    const got: JSONRPCMessage[] = [];
    b.onmessage = (m) => void got.push(m);
    await b.start();
    const call = (id: number, name = "wait"): JSONRPCMessage => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: { ms: 1 } } });
    await b.send(call(1)); // queued: the SDK path
    await b.send(call(2, "nope"));
    await server.connect(a);
    await b.send(call(11)); // the lane
    await b.send(call(12, "nope"));
    await until(() => got.length === 4);
    const byId = new Map(got.map((m) => ["id" in m ? Number(m.id) : -1, m]));
    for (const id of [1, 11]) {
      const result = (byId.get(id) as { result?: unknown }).result;
      expect(fromCallToolResult(result), `request ${id}`).toMatchObject({
        ok: false,
        code: "DENIED",
        message: "The caller could not be identified; the call was refused",
        retryable: false,
        effect: "none",
        meta: { attempts: 0 },
      });
    }
    // An unknown tool stays the unknown-tool protocol error.
    for (const id of [2, 12]) expect(byId.get(id)).toMatchObject({ error: { code: -32602 } });
    expect(JSON.stringify(got)).not.toMatch(/hunter2|lookup failed/);
    expect(started).toEqual([]); // nothing ran
    expect(errors.filter((e) => e.includes(SECRET))).toHaveLength(2); // the hook is not asked about a tool that does not exist
    await server.close();
  });

  it("any other throw is -32603 \"Internal error\" on both paths, never its message", async () => {
    const { gate } = slowGate();
    // A wrapped gate whose call throws (a programmer error): nothing of its message may reach the client.
    const broken = { ...gate, list: () => gate.list(), tool: (n: string) => gate.tool(n), call: () => Promise.reject(new Error("db password=hunter2")) };
    const server = createMcpServer(broken as typeof gate, { name: "t", version: "1" });
    const errors: string[] = [];
    server.onerror = (e) => void errors.push(e.message);
    const [a, b] = InMemoryTransport.createLinkedPair();
    const got: JSONRPCMessage[] = [];
    b.onmessage = (m) => void got.push(m);
    await b.start();
    const call = (id: number): JSONRPCMessage => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "wait", arguments: { ms: 1 } } });
    await b.send(call(1));
    await server.connect(a);
    await b.send(call(11));
    await until(() => got.length === 2);
    for (const m of got) expect(m).toMatchObject({ error: { code: -32603, message: "Internal error" } });
    expect(JSON.stringify(got)).not.toMatch(/hunter2/);
    expect(errors.filter((e) => e.includes("hunter2"))).toHaveLength(2);
    await server.close();
  });
});
