import { describe, it, expect } from "vitest";
import type { ToolResult } from "../../src/index.js";
import { createLoopPolicy, type AdmittedCall } from "../../src/loop/index.js";

/** An executor that fails every call the same way (INVALID_INPUT on customerId), under any call id. */
const failing = (c: AdmittedCall): ToolResult => ({
  ok: false,
  code: "INVALID_INPUT",
  message: "Arguments do not match the tool's input schema; fix the listed fields",
  retryable: false,
  effect: "none",
  issues: [{ path: "customerId", code: "invalid_type", message: "Expected string" }],
  meta: { tool: c.tool, version: "1", callId: c.callId, attempts: 0, durationMs: 0 },
});

describe("evidence: repeatOf is written as callId is", () => {
  it("passes the redact patterns: a call id that carries a secret is redacted in repeatOf too", async () => {
    const s = createLoopPolicy().start();
    const secret = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
    await s.run({ tool: "get_order", args: '{"customerId":42}', callId: secret }, failing);
    const again = await s.run({ tool: "get_order", args: '{"customerId":42}', callId: "call_2" }, failing);
    expect(again.decision).toMatchObject({ action: "stop", reason: "no_new_evidence" });
    expect(s.evidence.at(-1)).toMatchObject({ callId: "call_2", repeatOf: "[REDACTED]" });
    expect(JSON.stringify(s.evidence)).not.toContain("AbCdEfGh");
  });

  it("passes the host's own patterns", async () => {
    const s = createLoopPolicy({ redact: { patterns: [/tenant-\d+/g] } }).start();
    await s.run({ tool: "get_order", args: { customerId: 42 }, callId: "tenant-4711/call-1" }, failing);
    await s.run({ tool: "get_order", args: { customerId: 42 }, callId: "call-2" }, failing);
    expect(s.evidence.at(-1)?.repeatOf).not.toContain("4711");
  });

  it("is cut to 200 characters, as callId is", async () => {
    const s = createLoopPolicy().start();
    const long = "c".repeat(1_000);
    await s.run({ tool: "get_order", args: { customerId: 42 }, callId: long }, failing);
    await s.run({ tool: "get_order", args: { customerId: 42 }, callId: long + "2" }, failing);
    const ev = s.evidence.at(-1)!;
    expect(ev.reason).toBe("no_new_evidence");
    expect(ev.callId.length).toBeLessThanOrEqual(200);
    expect(ev.repeatOf!.length).toBeLessThanOrEqual(200);
    expect(ev.repeatOf!.startsWith("c".repeat(150))).toBe(true);
  });
});
