import { describe, expect, it } from "vitest";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { z } from "zod";
import { createGate, defineTool, denied, reject, transient } from "../../src/index.js";
import { ordersGate, stable } from "./helpers.js";

function withOutput(value: unknown, output: z.ZodType = z.object({ found: z.boolean(), orders: z.array(z.object({ id: z.string(), status: z.enum(["pending", "paid", "cancelled"]) })) })) {
  const t = defineTool({ name: "t", version: "2", description: "d", input: z.object({}), output, effect: "read", execute: () => value as never });
  return createGate({ tools: [t] });
}

describe("output that breaks the contract is INVALID_OUTPUT, never success", () => {
  it("unknown status", async () => {
    const { gate, service } = ordersGate();
    service.faults.badStatus = "shipped";
    expect(stable(await gate.call("get_order", { customerId: "c_1" }))).toMatchInlineSnapshot(`
      {
        "code": "INVALID_OUTPUT",
        "effect": "none",
        "issues": [
          {
            "code": "invalid_value",
            "message": "Invalid option: expected one of "pending"|"paid"|"cancelled"",
            "path": "orders.0.status",
          },
        ],
        "message": "The tool returned a result that breaks its output contract",
        "meta": {
          "attempts": 1,
          "callId": "<id>",
          "durationMs": 0,
          "tool": "get_order",
          "version": "1.0.0",
        },
        "ok": false,
        "retryable": false,
      }
    `);
  });

  it.each([
    ["missing field", { orders: [] }, "found"],
    ["wrong type", { found: "yes", orders: [] }, "found"],
    ["wrong nested type", { found: true, orders: [{ id: 1, status: "paid" }] }, "orders.0.id"],
    ["null", null, ""],
    ["a string", "ok", ""],
  ])("%s", async (_label, value, path) => {
    const r = await withOutput(value).call("t", {});
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.code).toBe("INVALID_OUTPUT");
      expect(r.retryable).toBe(false);
      expect(r.issues?.map((i) => i.path)).toContain(path);
    }
  });

  it("extra field when the output schema is strict", async () => {
    const r = await withOutput({ ok: true, secret: "x" }, z.strictObject({ ok: z.boolean() })).call("t", {});
    expect(r.ok ? null : [r.code, r.issues]).toEqual(["INVALID_OUTPUT", [{ path: "secret", code: "unrecognized_key", message: "Unknown field" }]]);
  });

  it("unknown keys are named in paths only, one issue each: never in a message (on output they are the service's data)", async () => {
    const out = await withOutput({ ok: true, "alice@example.com": 1, b: 2 }, z.strictObject({ ok: z.boolean() })).call("t", {});
    expect(out.ok ? null : out.issues).toEqual([
      { path: "alice@example.com", code: "unrecognized_key", message: "Unknown field" },
      { path: "b", code: "unrecognized_key", message: "Unknown field" },
    ]);
    const t = defineTool({ name: "s", version: "1", description: "d", input: z.strictObject({ a: z.object({ b: z.string() }).strict() }), output: z.object({}), effect: "read", execute: () => ({}) });
    const inp = await createGate({ tools: [t] }).call("s", { a: { b: "x", c: 1 } });
    expect(inp.ok ? null : inp.issues).toEqual([{ path: "a.c", code: "unrecognized_key", message: "Unknown field" }]);
    // Valibot's strict object reports the same way.
    const vInput = toStandardJsonSchema(v.strictObject({ a: v.string() })) as unknown as StandardSchemaV1<{ a: string }>;
    const vt = defineTool({ name: "v", version: "1", description: "d", input: vInput, output: z.object({}), effect: "read", execute: () => ({}) });
    const vr = await createGate({ tools: [vt] }).call("v", { a: "x", "alice@example.com": 1 });
    expect(vr.ok ? null : vr.issues).toEqual([{ path: "alice@example.com", code: "unrecognized_key", message: "Unknown field" }]);
  });

  it("many unknown keys do not push the other issues past the cut: those come first", async () => {
    const extra = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`k${i}`, 1]));
    const t = defineTool({ name: "s", version: "1", description: "d", input: z.strictObject({ a: z.strictObject({ x: z.number() }), b: z.number() }), output: z.object({}), effect: "read", execute: () => ({}) });
    const r = await createGate({ tools: [t] }).call("s", { a: { x: 1, ...extra }, b: "not a number" });
    const issues = r.ok ? [] : (r.issues ?? []);
    expect([issues.length, issues[0]?.path, issues[0]?.code, issues[1]?.path, issues.at(-1)?.code]).toEqual([20, "b", "invalid_type", "a.k0", "too_many_issues"]);
  });

  it("extra fields are dropped, never leaked, when the output schema strips", async () => {
    const r = await withOutput({ ok: true, internal: "x" }, z.object({ ok: z.boolean() })).call("t", {});
    expect(r.ok ? r.data : null).toEqual({ ok: true });
  });

  it("a write whose output breaks the contract reports the effect as applied", async () => {
    const t = defineTool({
      name: "w",
      version: "1",
      description: "d",
      input: z.object({}),
      output: z.object({ id: z.string() }),
      effect: "write",
      execute: () => ({ id: 5 }) as never,
    });
    const r = await createGate({ tools: [t] }).call("w", {});
    expect(r.ok ? null : [r.code, r.effect]).toEqual(["INVALID_OUTPUT", "applied"]);
  });

  it("a valid empty list is success with found: false, distinct from FAILED", async () => {
    const { gate } = ordersGate();
    const r = await gate.call("get_order", { customerId: "nobody" });
    expect(stable(r)).toMatchInlineSnapshot(`
      {
        "data": {
          "customerId": "nobody",
          "found": false,
          "orders": [],
        },
        "meta": {
          "attempts": 1,
          "callId": "<id>",
          "durationMs": 0,
          "tool": "get_order",
          "version": "1.0.0",
        },
        "ok": true,
      }
    `);
  });

  it("defaults fill in and the output is what the schema returned", async () => {
    const { gate } = ordersGate();
    const r = await gate.call("get_order", { customerId: "c_1", includeHistory: true });
    expect(r.ok ? r.data.orders.map((o) => o.status) : null).toEqual(["paid", "pending", "cancelled"]);
  });
});

describe("business check", () => {
  it("turns a transport success into REJECTED", async () => {
    const { gate, service } = ordersGate();
    const r = await gate.call("create_refund", { orderId: "o_999", amountCents: 100 });
    expect(stable(r)).toMatchInlineSnapshot(`
      {
        "code": "REJECTED",
        "effect": "none",
        "message": "The refund was declined: the order is not refundable",
        "meta": {
          "attempts": 1,
          "callId": "<id>",
          "durationMs": 0,
          "tool": "create_refund",
          "version": "1.0.0",
        },
        "ok": false,
        "retryable": false,
      }
    `);
    expect(service.calls.createRefund).toBe(1);
  });

  it("a check that throws is FAILED, and the effect of a write is applied", async () => {
    const t = defineTool({
      name: "w",
      version: "1",
      description: "d",
      input: z.object({}),
      output: z.object({ id: z.string() }),
      effect: "write",
      execute: () => ({ id: "x" }),
      check: () => {
        throw new Error("boom sk-proj-abcdefghijklmnopqrstuvwxyz");
      },
    });
    const r = await createGate({ tools: [t] }).call("w", {});
    expect(r.ok ? null : [r.code, r.effect, r.message]).toEqual(["FAILED", "applied", "The tool's business check failed"]);
  });

  it("on a write that ran, a verdict other than reject is FAILED with the effect applied, never DENIED/none or retryable", async () => {
    const verdicts = { denied: denied("not allowed"), transient: transient("busy"), rejected: reject("declined", { effect: "applied" }) };
    const seen: Record<string, unknown> = {};
    for (const [name, verdict] of Object.entries(verdicts)) {
      let writes = 0;
      const t = defineTool({ name: "w", version: "1", description: "d", input: z.object({}), output: z.object({ id: z.string() }), effect: "write", execute: () => (writes++, { id: "x" }), check: () => verdict });
      const r = await createGate({ tools: [t] }).call("w", {});
      seen[name] = [writes, ...(r.ok ? [] : [r.code, r.effect, r.retryable])];
    }
    expect(seen).toEqual({ denied: [1, "FAILED", "applied", false], transient: [1, "FAILED", "applied", false], rejected: [1, "REJECTED", "applied", false] });
    // A read's verdict keeps its own code: nothing was applied.
    const read = defineTool({ name: "r", version: "1", description: "d", input: z.object({}), output: z.object({ id: z.string() }), effect: "read", execute: () => ({ id: "x" }), check: () => denied("not yours") });
    const r = await createGate({ tools: [read] }).call("r", {});
    expect(r.ok ? null : [r.code, r.effect]).toEqual(["DENIED", "none"]);
  });
});

describe("the text a tool's error shows the model", () => {
  it("denied(message) is shown; denied() shows the gate's own text, as a 403 does; transient's is never shown", async () => {
    const make = (name: string, error: () => unknown) =>
      defineTool({ name, version: "1", description: "d", input: z.object({}), output: z.object({}), effect: "read", retry: false, execute: () => Promise.reject(error()) });
    const gate = createGate({
      tools: [
        make("said", () => denied("missing scope orders:read")),
        make("silent", () => denied()),
        make("status", () => Object.assign(new Error("forbidden: token=abc"), { status: 403 })),
        make("busy", () => transient("upstream busy at 10.0.0.7")),
      ],
    });
    const messages = await Promise.all(["said", "silent", "status", "busy"].map(async (n) => {
      const r = await gate.call(n, {});
      return r.ok ? "ok" : `${r.code}: ${r.message}`;
    }));
    expect(messages).toEqual([
      "DENIED: missing scope orders:read",
      "DENIED: The service denied the call",
      "DENIED: The service denied the call",
      "RETRYABLE: The tool failed transiently; try again later",
    ]);
  });
});
