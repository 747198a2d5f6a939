import { describe, expect, it } from "vitest";
import { ordersGate, stable } from "./helpers.js";

describe("invalid input never reaches the service", () => {
  const cases: [string, unknown][] = [
    ["customerId is a number", { customerId: 42 }],
    ["customerId missing", {}],
    ["null", null],
    ["extra field", { customerId: "c_1", admin: true }],
    ["includeHistory wrong type", { customerId: "c_1", includeHistory: "yes" }],
    ["array", [{ customerId: "c_1" }]],
    ["number", 7],
    ["empty customerId", { customerId: "" }],
    ["JSON text with a number", '{"customerId":42}'],
    ["broken JSON text", '{"customerId":'],
    ["empty string", ""],
    ["JSON text of an array", "[]"],
  ];
  for (const [label, args] of cases) {
    it(label, async () => {
      const { gate, service } = ordersGate();
      const r = await gate.call("get_order", args);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.code).toBe("INVALID_INPUT");
        expect(r.retryable).toBe(false);
        expect(r.effect).toBe("none");
        expect(r.meta.attempts).toBe(0);
        expect(r.issues?.length).toBeGreaterThan(0);
      }
      expect(service.calls.findOrders).toBe(0);
    });
  }

  it("names the field: customerId 42", async () => {
    const { gate } = ordersGate();
    expect(stable(await gate.call("get_order", { customerId: 42 }))).toMatchInlineSnapshot(`
      {
        "code": "INVALID_INPUT",
        "effect": "none",
        "issues": [
          {
            "code": "invalid_type",
            "message": "Invalid input: expected string, received number",
            "path": "customerId",
          },
        ],
        "message": "Arguments do not match the tool's input schema; fix the listed fields",
        "meta": {
          "attempts": 0,
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

  it("names the unknown field", async () => {
    const { gate } = ordersGate();
    expect(stable(await gate.call("get_order", '{"customerId":"c_1","admin":true}'))).toMatchInlineSnapshot(`
      {
        "code": "INVALID_INPUT",
        "effect": "none",
        "issues": [
          {
            "code": "unrecognized_key",
            "message": "Unknown field",
            "path": "admin",
          },
        ],
        "message": "Arguments do not match the tool's input schema; fix the listed fields",
        "meta": {
          "attempts": 0,
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

  it("several wrong fields in a write", async () => {
    const { gate, service } = ordersGate();
    const r = await gate.call("create_refund", { orderId: "o_100", amountCents: 1.5, reason: 3 });
    expect(stable(r)).toMatchInlineSnapshot(`
      {
        "code": "INVALID_INPUT",
        "effect": "none",
        "issues": [
          {
            "code": "invalid_type",
            "message": "Invalid input: expected int, received number",
            "path": "amountCents",
          },
          {
            "code": "invalid_type",
            "message": "Invalid input: expected string, received number",
            "path": "reason",
          },
        ],
        "message": "Arguments do not match the tool's input schema; fix the listed fields",
        "meta": {
          "attempts": 0,
          "callId": "<id>",
          "durationMs": 0,
          "tool": "create_refund",
          "version": "1.0.0",
        },
        "ok": false,
        "retryable": false,
      }
    `);
    expect(service.calls.createRefund).toBe(0);
  });

  it("unknown enum value", async () => {
    const { z } = await import("zod");
    const { createGate, defineTool } = await import("../../src/index.js");
    let ran = 0;
    const t = defineTool({
      name: "set_status",
      version: "1",
      description: "d",
      input: z.object({ status: z.enum(["pending", "paid", "cancelled"]) }),
      output: z.object({}),
      effect: "write",
      execute: () => (ran++, {}),
    });
    const r = await createGate({ tools: [t] }).call("set_status", '{"status":"shipped"}');
    expect(r.ok ? null : r.issues).toEqual([{ path: "status", code: "invalid_value", message: 'Invalid option: expected one of "pending"|"paid"|"cancelled"' }]);
    expect(ran).toBe(0);
  });

  it("malformed JSON", async () => {
    const { gate } = ordersGate();
    expect(stable(await gate.call("get_order", "{customerId: 'c_1'}"))).toMatchInlineSnapshot(`
      {
        "code": "INVALID_INPUT",
        "effect": "none",
        "issues": [
          {
            "code": "invalid_json",
            "message": "Arguments are not valid JSON",
            "path": "",
          },
        ],
        "message": "Arguments are not valid JSON",
        "meta": {
          "attempts": 0,
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

  it("unknown tool", async () => {
    const { gate } = ordersGate();
    expect(stable(await gate.call("delete_everything", {}))).toMatchInlineSnapshot(`
      {
        "code": "UNKNOWN_TOOL",
        "effect": "none",
        "message": "Unknown tool; pick one of the listed tools",
        "meta": {
          "attempts": 0,
          "callId": "<id>",
          "durationMs": 0,
          "tool": "delete_everything",
          "version": "",
        },
        "ok": false,
        "retryable": false,
      }
    `);
  });

  it("a per-tool opt-out strips unknown keys instead", async () => {
    const { z } = await import("zod");
    const { createGate, defineTool } = await import("../../src/index.js");
    let seen: unknown;
    const t = defineTool({
      name: "loose",
      version: "1",
      description: "d",
      input: z.object({ a: z.string() }),
      output: z.object({ ok: z.boolean() }),
      effect: "read",
      unknownKeys: "strip",
      execute: (input) => {
        seen = input;
        return { ok: true };
      },
    });
    const gate = createGate({ tools: [t] });
    const r = await gate.call("loose", { a: "x", b: 1 });
    expect(r.ok).toBe(true);
    expect(seen).toEqual({ a: "x" });
    expect(gate.list()[0]!.inputSchema.additionalProperties).toBeUndefined();
  });

  it("unknown keys are found at depth", async () => {
    const { z } = await import("zod");
    const { createGate, defineTool } = await import("../../src/index.js");
    const t = defineTool({
      name: "nested",
      version: "1",
      description: "d",
      input: z.object({ items: z.array(z.object({ id: z.string() })) }),
      output: z.object({}),
      effect: "read",
      execute: () => ({}),
    });
    const r = await createGate({ tools: [t] }).call("nested", { items: [{ id: "a" }, { id: "b", extra: 1 }] });
    expect(r.ok ? [] : r.issues).toEqual([{ path: "items.1.extra", code: "unrecognized_key", message: "Unknown field" }]);
  });
});

describe("_meta", () => {
  it("is split off before validation and handed to ctx.meta", async () => {
    const { z } = await import("zod");
    const { createGate, defineTool } = await import("../../src/index.js");
    const seen: unknown[] = [];
    const t = defineTool({
      name: "m",
      version: "1",
      description: "d",
      input: z.object({ a: z.string() }),
      output: z.object({}),
      effect: "read",
      execute: (input, ctx) => {
        seen.push(input, ctx.meta);
        return {};
      },
    });
    const gate = createGate({ tools: [t] });
    const r = await gate.call("m", '{"a":"x","_meta":{"traceparent":"00-abc"}}');
    expect(r.ok).toBe(true);
    expect(seen).toEqual([{ a: "x" }, { traceparent: "00-abc" }]);
    const bad = await gate.call("m", { a: "x", _meta: "nope" });
    expect(bad.ok ? null : bad.issues).toEqual([{ path: "_meta", code: "invalid_meta", message: "_meta must be an object" }]);
  });
});

describe("the tool's context", () => {
  it("can be destructured: every field and recordEffect work without `this`", async () => {
    const { z } = await import("zod");
    const { createGate, defineTool, reject } = await import("../../src/index.js");
    const t = defineTool({
      name: "w",
      version: "1",
      description: "d",
      input: z.object({ a: z.string() }),
      output: z.object({ callId: z.string(), attempt: z.number(), aborted: z.boolean() }),
      effect: "write",
      execute: async (_input, { callId, attempt, signal, recordEffect }) => {
        await recordEffect({ kind: "row", ref: "r_1" });
        return { callId, attempt, aborted: signal.aborted };
      },
      check: (out) => (out.callId === "c_no" ? reject("refused after the effect") : undefined),
    });
    const gate = createGate({ tools: [t] });
    expect(await gate.call("w", { a: "x" }, { callId: "c_ok" })).toMatchObject({ ok: true, data: { callId: "c_ok", attempt: 1, aborted: false } });
    const r = await gate.call("w", { a: "x" }, { callId: "c_no" });
    // The check refuses after a recorded effect: the failure says the effect applied and lists it.
    expect(r).toMatchObject({ ok: false, code: "REJECTED", effect: "applied", effects: [{ kind: "row", ref: "r_1" }], meta: { callId: "c_no", attempts: 1 } });
  });
});
