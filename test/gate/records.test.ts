import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createCallLog, createGate, createRedactor, defineTool, type CallRecord } from "../../src/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";

describe("onCall records what a reviewer needs and never the payload", () => {
  it("one record per call with tool, version, code, attempts, duration, effect", async () => {
    const records: CallRecord[] = [];
    const service = createFakeOrders();
    const gate = createGate({ tools: makeOrderTools(service), onCall: (r) => void records.push(r), retry: { baseMs: 0, capMs: 0 } });
    await gate.call("get_order", { customerId: "c_1" }, { callId: "call-1" });
    await gate.call("get_order", { customerId: 42 }, { callId: "call-2" });
    await gate.call("create_refund", { orderId: "o_100", amountCents: 7 }, { callId: "call-3" });
    service.faults.transientReads = 1;
    await gate.call("get_order", { customerId: "c_2" }, { callId: "call-4" });
    expect(records.map(({ durationMs, startedAt, ...r }) => (expect(durationMs).toBeGreaterThanOrEqual(0), expect(startedAt).toBeGreaterThan(0), r))).toEqual([
      { tool: "get_order", version: "1.0.0", callId: "call-1", ok: true, code: "OK", attempts: 1, effect: "none", retryable: false, replayed: false },
      { tool: "get_order", version: "1.0.0", callId: "call-2", ok: false, code: "INVALID_INPUT", attempts: 0, effect: "none", retryable: false, replayed: false, issuePaths: ["customerId"] },
      { tool: "create_refund", version: "1.0.0", callId: "call-3", ok: true, code: "OK", attempts: 1, effect: "applied", retryable: false, replayed: false },
      { tool: "get_order", version: "1.0.0", callId: "call-4", ok: true, code: "OK", attempts: 2, effect: "none", retryable: false, replayed: false },
    ]);
    expect(JSON.stringify(records)).not.toMatch(/c_1|c_2|o_100/);
  });
});

describe("redaction", () => {
  it("scrubs API keys and bearer tokens by default, plus configured patterns", () => {
    const redact = createRedactor({ patterns: [/ACME-\d{6}/] });
    expect(redact("use sk-proj-abcdefghijklmnopqrstuv and Bearer abc.def.ghijklmnop or ACME-123456")).toBe(
      "use [REDACTED] and [REDACTED] or [REDACTED]",
    );
    expect(redact("AKIAABCDEFGHIJKLMNOP ghp_abcdefghijklmnopqrstuvwxyz0123456789")).toBe("[REDACTED] [REDACTED]");
    expect(redact("nothing to see")).toBe("nothing to see");
  });

  it("issue messages never echo the received value and are bounded", async () => {
    const { z } = await import("zod");
    const { defineTool } = await import("../../src/index.js");
    const t = defineTool({
      name: "t",
      version: "1",
      description: "d",
      input: z.object({
        token: z.string().refine(() => false, { message: "value sk-live-not-a-real-key-but-shaped-1234567890 rejected" }),
        code: z.string().refine((s) => s.length > 100, { error: (iss) => `bad code ${String(iss.input)}` }),
        many: z.array(z.number()),
      }),
      output: z.object({}),
      effect: "read",
      execute: () => ({}),
    });
    const gate = createGate({ tools: [t] });
    const r = await gate.call("t", { token: "x", code: "hunter2-secret", many: Array.from({ length: 50 }, () => "n") });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const text = JSON.stringify(r);
    expect(text).not.toContain("hunter2-secret");
    expect(text).not.toContain("sk-live-not-a-real-key");
    expect(r.issues).toHaveLength(20);
    expect(r.issues?.at(-1)).toEqual({ path: "", code: "too_many_issues", message: "33 more issues not shown" });
    for (const i of r.issues ?? []) expect(i.message.length).toBeLessThanOrEqual(200);
  });
});

describe("issue paths in records carry no payload keys", () => {
  const tool = defineTool({
    name: "set_scores",
    version: "1",
    description: "d",
    effect: "read",
    input: z.object({ scores: z.record(z.string(), z.number()), tags: z.array(z.object({ id: z.string() })).optional() }),
    output: z.object({ ok: z.boolean() }),
    execute: () => ({ ok: true }),
  });
  const args = { scores: { "alice.smith@example.com": "x" }, tags: [{ id: 5 }], "patient_jane_doe": 1 };

  it("a record's key and an unknown key are `*` in onCall's issuePaths; the envelope keeps them for the model", async () => {
    const records: CallRecord[] = [];
    const gate = createGate({ tools: [tool], onCall: (r) => void records.push(r) });
    const r = await gate.call("set_scores", args);
    expect(!r.ok && (r.issues ?? []).map((i) => i.path)).toEqual(expect.arrayContaining(["tags.0.id"]));
    expect(JSON.stringify(!r.ok && r.issues)).toMatch(/alice\.smith@example\.com|patient_jane_doe/);
    const paths = records[0]!.issuePaths ?? [];
    expect(paths.length).toBeGreaterThan(0);
    expect(JSON.stringify(paths)).not.toMatch(/alice|smith|example|patient|jane/);
    for (const p of paths) expect(p).toMatch(/^(\*|scores\.\*(\.\*)*|tags\.0\.id)$/);
  });

  it("the same through createCallLog().instrument without the hooks (paths taken from the envelope)", async () => {
    const lines: Record<string, unknown>[] = [];
    const gate = createCallLog({ sink: (_l, e) => void lines.push(e as unknown as Record<string, unknown>) }).instrument(createGate({ tools: [tool] }));
    await gate.call("set_scores", args);
    const paths = lines[0]!["toolgate.issue.paths"] as string[];
    expect(paths.length).toBeGreaterThan(0);
    expect(JSON.stringify(paths)).not.toMatch(/alice|smith|example|patient|jane/);
  });
});
