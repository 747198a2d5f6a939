import { describe, it, expect, afterAll } from "vitest";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { createGate, defineTool, reject, type ToolResult } from "../../src/index.js";
import { sqliteLedger } from "../../src/ledger/index.js";
import { CANARIES, leaks, type Canary } from "./_canaries.js";

const dir = tmpdir();
const base = join(dir, `toolgate-canary-${randomUUID()}.db`);
const files = [base, `${base}-wal`, `${base}-shm`, `${base}-journal`];
const ENV = "TOOLGATE_LEDGER_CANARY_";
afterAll(() => {
  for (const f of files) rmSync(f, { force: true });
  for (const k of Object.keys(process.env)) if (k.startsWith(ENV)) delete process.env[k];
});

const Input = z.object({ orderId: z.string(), mode: z.string(), note: z.string().optional(), env: z.string().optional() });
const Output = z.object({ refundId: z.string(), status: z.enum(["accepted", "declined"]) });

function writeTool(outputs: Map<string, unknown>) {
  return defineTool({
    name: "refund_write",
    version: "1",
    description: "a write whose service misbehaves",
    input: Input,
    output: Output,
    effect: "write",
    execute: async ({ orderId, mode, note, env }, ctx) => {
      const fromEnv = env === undefined ? "" : (process.env[env] ?? "");
      switch (mode) {
        case "effect-then-fail":
          await ctx.recordEffect({ kind: "refund", ref: note ?? "r" });
          throw new Error(`lost response ${note ?? ""}`);
        case "error":
          throw Object.assign(new Error(`db said ${note ?? ""} ${fromEnv}`), { response: { body: note } });
        case "reject":
          throw reject(`declined: ${note ?? ""}`);
        case "output":
          return outputs.get(orderId) as z.infer<typeof Output>;
        default:
          return { refundId: `rf_${orderId}`, status: "accepted" as const };
      }
    },
  });
}

type Site = (gate: ReturnType<typeof createGate>, c: Canary, i: number, outputs: Map<string, unknown>) => Promise<ToolResult>;
const SITES: Record<string, Site> = {
  "argument not stored": (g, c, i) => g.call("refund_write", { orderId: `o${i}`, mode: "ok", note: c.planted }),
  "caller's idempotency key": (g, c, i) => g.call("refund_write", { orderId: `o${i}`, mode: "ok" }, { idempotencyKey: `k ${c.planted}` }),
  "_meta": (g, c, i) => g.call("refund_write", { orderId: `o${i}`, mode: "ok", _meta: { authorization: c.planted } }),
  "exception with a body": (g, c, i) => g.call("refund_write", { orderId: `o${i}`, mode: "error", note: c.planted }),
  "rejection message": (g, c, i) => g.call("refund_write", { orderId: `o${i}`, mode: "reject", note: c.planted }),
  "effect ref": (g, c, i) => g.call("refund_write", { orderId: `o${i}`, mode: "effect-then-fail", note: `ref ${c.planted}` }),
  "output: secret-shaped field": (g, c, i, o) => (o.set(`o${i}`, { refundId: c.planted, status: "accepted" }), g.call("refund_write", { orderId: `o${i}`, mode: "output" })),
  "output: extra keys": (g, c, i, o) => (o.set(`o${i}`, { refundId: "rf", status: "accepted", token: c.planted, [c.planted]: 1 }), g.call("refund_write", { orderId: `o${i}`, mode: "output" })),
  "output: invalid": (g, c, i, o) => (o.set(`o${i}`, { refundId: "rf", status: c.planted }), g.call("refund_write", { orderId: `o${i}`, mode: "output" })),
  "environment": (g, c, i) => {
    process.env[`${ENV}${i}`] = c.planted;
    return g.call("refund_write", { orderId: `o${i}`, mode: "error", env: `${ENV}${i}` });
  },
};

describe("canaries in the ledger (SQLite file bytes)", () => {
  it("0 of 100 planted values appear in the database, its WAL or its journal", async () => {
    const ledger = sqliteLedger({ path: base });
    await ledger.ready();
    const outputs = new Map<string, unknown>();
    const gate = createGate({ tools: [writeTool(outputs)], ledger, breaker: false });
    const sites = Object.entries(SITES);
    const codes = new Map<string, Set<string>>();
    for (const [i, c] of CANARIES.entries()) {
      const [name, site] = sites[i % sites.length]!;
      const r = await site(gate, c, i, outputs);
      codes.set(name, (codes.get(name) ?? new Set()).add(r.ok ? "OK" : r.code));
    }
    expect(Object.fromEntries([...codes].map(([k, v]) => [k, [...v]]))).toEqual({
      "argument not stored": ["OK"],
      "caller's idempotency key": ["OK"],
      _meta: ["OK"],
      "exception with a body": ["FAILED"],
      "rejection message": ["REJECTED"],
      "effect ref": ["FAILED"],
      "output: secret-shaped field": ["OK"],
      "output: extra keys": ["OK"],
      "output: invalid": ["INVALID_OUTPUT"],
      environment: ["FAILED"],
    });
    const bytes = files.filter((f) => existsSync(f)).map((f) => readFileSync(f).toString("latin1"));
    expect(bytes.join("").length).toBeGreaterThan(4096);
    // positive control: the stores hold the calls (the tool name is in the file)
    expect(bytes.some((b) => b.includes("refund_write"))).toBe(true);
    expect(bytes.some((b) => b.includes("rf_o0"))).toBe(true); // a stored envelope (non-secret data survives)
    expect(leaks(bytes)).toEqual([]);
    await ledger.close();
    const after = files.filter((f) => existsSync(f)).map((f) => readFileSync(f).toString("latin1"));
    expect(leaks(after)).toEqual([]);
  });
});
