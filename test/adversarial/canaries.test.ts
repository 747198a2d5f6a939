import { describe, it, expect, afterAll } from "vitest";
import { z } from "zod";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { createGate, defineTool, denied, reject, transient, type ToolResult } from "../../src/index.js";
import { composeHooks, createCallLog } from "../../src/log/index.js";
import { createGateTelemetry } from "../../src/otel/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";
import { memoryTracing } from "../otel/_otel.js";
import { CANARIES, leaks, type Canary } from "./_canaries.js";

const ENV_PREFIX = "TOOLGATE_TEST_CANARY_";
afterAll(() => {
  for (const k of Object.keys(process.env)) if (k.startsWith(ENV_PREFIX)) delete process.env[k];
});

/** A tool whose service misbehaves in every way that could leak a value. */
function leakyTool(outputs: Map<string, unknown>) {
  return defineTool({
    name: "leaky",
    version: "1",
    description: "Fails in leaky ways",
    input: z.object({ mode: z.string(), note: z.string(), env: z.string().optional() }),
    output: z.object({ value: z.string(), status: z.enum(["a", "b"]).optional() }),
    effect: "read",
    retry: { attempts: 2, baseMs: 0, capMs: 0 },
    execute: ({ mode, note, env }) => {
      const fromEnv = env === undefined ? "" : (process.env[env] ?? "");
      switch (mode) {
        case "error":
          throw new Error(`database said: ${note} ${fromEnv}`);
        case "reject":
          throw reject(`declined because ${note}`);
        case "denied":
          throw denied(`credential ${note} expired ${fromEnv}`);
        case "transient":
          throw transient(`busy ${note}`);
        case "http":
          throw Object.assign(new Error(`HTTP 500 ${note}`), { status: 500, response: { body: note, headers: { authorization: note } } });
        case "output":
          return outputs.get(note) as { value: string };
        default:
          return { value: "fine" };
      }
    },
  });
}

type Site = (gate: ReturnType<typeof createGate>, c: Canary, i: number, outputs: Map<string, unknown>) => Promise<ToolResult>;

const SITES: Record<string, Site> = {
  "argument: unknown key's value": (g, c) => g.call("get_order", { customerId: "c_1", token: c.planted }),
  "argument: unknown key's name": (g, c) => g.call("get_order", { customerId: "c_1", [c.planted]: 1 }),
  "argument: wrong type": (g, c) => g.call("create_refund", { orderId: "o_100", amountCents: c.planted }),
  "argument: too long": (g, c) => g.call("create_refund", { orderId: "o_100", amountCents: 5, reason: `${c.planted} `.repeat(20) }),
  "argument: valid field not echoed": (g, c) => g.call("create_refund", { orderId: "o_100", amountCents: 5, reason: `for ${c.planted}` }),
  "argument: malformed JSON text": (g, c) => g.call("get_order", `{"customerId":"c_1","x":"${c.planted}"`),
  "argument: duplicate key text": (g, c) => g.call("get_order", `{"customerId":"${c.planted}","customerId":"c_1"}`),
  "_meta: value": (g, c) => g.call("get_order", { customerId: "c_2", _meta: { authorization: c.planted, nested: { key: c.planted } } }),
  "_meta: in JSON text": (g, c) => g.call("get_order", `{"customerId":"c_2","_meta":{"token":"${c.planted}"}}`),
  "tool exception: Error": (g, c) => g.call("leaky", { mode: "error", note: c.planted }),
  "tool exception: reject": (g, c) => g.call("leaky", { mode: "reject", note: c.planted }),
  "tool exception: denied": (g, c) => g.call("leaky", { mode: "denied", note: c.planted }),
  "tool exception: transient": (g, c) => g.call("leaky", { mode: "transient", note: c.planted }),
  "tool exception: HTTP error body": (g, c) => g.call("leaky", { mode: "http", note: c.planted }),
  "service output: wrong type": (g, c, i, o) => (o.set(`o${i}`, { value: 42, detail: c.planted }), g.call("leaky", { mode: "output", note: `o${i}` })),
  "service output: bad enum": (g, c, i, o) => (o.set(`o${i}`, { value: "x", status: c.planted }), g.call("leaky", { mode: "output", note: `o${i}` })),
  "service output: extra keys": (g, c, i, o) => (o.set(`o${i}`, { value: "x", [c.planted]: c.planted, debug: c.planted }), g.call("leaky", { mode: "output", note: `o${i}` })),
  "environment: in an exception": (g, c, i) => {
    process.env[`${ENV_PREFIX}${i}`] = c.planted;
    return g.call("leaky", { mode: "error", note: "n", env: `${ENV_PREFIX}${i}` });
  },
  "environment: in a denial": (g, c, i) => {
    process.env[`${ENV_PREFIX}${i}`] = c.planted;
    return g.call("leaky", { mode: "denied", note: "n", env: `${ENV_PREFIX}${i}` });
  },
  "environment: in an authorize reason": (g, c, i) => {
    process.env[`${ENV_PREFIX}${i}`] = c.planted;
    return g.call("get_order", { customerId: "c_1", _meta: { envKey: `${ENV_PREFIX}${i}` } });
  },
};

function spanText(s: ReadableSpan): string {
  return JSON.stringify({ name: s.name, attributes: s.attributes, events: s.events.map((e) => [e.name, e.attributes]), status: s.status });
}

async function run(capture: boolean) {
  const t = memoryTracing();
  const lines: string[] = [];
  const observe = { ...(capture ? { capture: { arguments: true, result: true } } : {}) };
  const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false, ...observe });
  const log = createCallLog({ sink: (l) => void lines.push(l), ...observe });
  const outputs = new Map<string, unknown>();
  const gate = otel.instrument(
    log.instrument(
      createGate({
        tools: [...makeOrderTools(createFakeOrders()), leakyTool(outputs)],
        ...composeHooks(otel.hooks, log.hooks),
        breaker: false,
        authorize: (call) => {
          const envKey = call.meta.envKey;
          return typeof envKey === "string" ? { allow: false, reason: `policy ${process.env[envKey] ?? ""} refused` } : true;
        },
      }),
    ),
  );
  const sites = Object.entries(SITES);
  const envelopes: string[] = [];
  const bySite = new Map<string, string[]>();
  for (const [i, c] of CANARIES.entries()) {
    const [name, site] = sites[i % sites.length]!;
    const r = await site(gate, c, i, outputs);
    envelopes.push(JSON.stringify(r));
    bySite.set(name, [...(bySite.get(name) ?? []), r.ok ? "OK" : r.code]);
  }
  return { envelopes, lines, spans: t.spans().map(spanText), bySite };
}

describe("canaries: 100 secret-looking values planted everywhere", () => {
  it("the detector finds planted values (positive control)", () => {
    expect(leaks(CANARIES.map((c) => c.planted))).toHaveLength(100);
    expect(new Set(CANARIES.map((c) => c.needle)).size).toBe(100);
  });

  it.each([false, true])("capture %s: 0 in envelopes, log lines, span attributes and events", async (capture) => {
    const { envelopes, lines, spans, bySite } = await run(capture);
    expect(envelopes).toHaveLength(100);
    expect(lines).toHaveLength(100);
    expect(spans).toHaveLength(100);
    // every site ran and ended where it should
    expect(Object.fromEntries([...bySite].map(([k, v]) => [k, [...new Set(v)]]))).toEqual({
      "argument: unknown key's value": ["INVALID_INPUT"],
      "argument: unknown key's name": ["INVALID_INPUT"],
      "argument: wrong type": ["INVALID_INPUT"],
      "argument: too long": ["INVALID_INPUT"],
      "argument: valid field not echoed": ["OK"],
      "argument: malformed JSON text": ["INVALID_INPUT"],
      "argument: duplicate key text": ["INVALID_INPUT"],
      "_meta: value": ["OK"],
      "_meta: in JSON text": ["OK"],
      "tool exception: Error": ["FAILED"],
      "tool exception: reject": ["REJECTED"],
      "tool exception: denied": ["DENIED"],
      "tool exception: transient": ["RETRYABLE"],
      "tool exception: HTTP error body": ["FAILED"],
      "service output: wrong type": ["INVALID_OUTPUT"],
      "service output: bad enum": ["INVALID_OUTPUT"],
      "service output: extra keys": ["OK"],
      "environment: in an exception": ["FAILED"],
      "environment: in a denial": ["DENIED"],
      "environment: in an authorize reason": ["DENIED"],
    });
    expect(leaks(envelopes)).toEqual([]);
    expect(leaks(lines)).toEqual([]);
    expect(leaks(spans)).toEqual([]);
    const captured = spans.filter((s) => s.includes("gen_ai.tool.call.arguments"));
    if (capture) {
      expect(captured.length).toBeGreaterThan(20);
      expect(captured.some((s) => s.includes("[REDACTED]"))).toBe(true);
    } else expect(captured).toEqual([]);
  });

  // The envelope shows the name only when it is shaped like a tool name (and redacted), else "<invalid>".
  it("an UNKNOWN_TOOL envelope does not echo a secret-shaped tool name", async () => {
    const gate = createGate({ tools: makeOrderTools(createFakeOrders()) });
    const c = CANARIES[0]!;
    const r = await gate.call(c.planted, {});
    expect(r.ok === false && r.code).toBe("UNKNOWN_TOOL");
    expect(leaks([JSON.stringify(r)])).toEqual([]);
  });
});
