import { describe, it, expect } from "vitest";
import { z } from "zod";
import type { JsonSchema } from "../../src/index.js";
import { checkTool, type DriftFinding, type ToolReport } from "../../src/testing/index.js";
import { toolOf } from "./_corpus.js";

/** The drift classes the issue names, each reproduced the way frameworks produce it. */

function drift(r: ToolReport, target: string): DriftFinding[] {
  return (r.targets.find((t) => t.target === target)?.findings ?? []).filter((f): f is DriftFinding => f.kind === "drift");
}

const outputSide = (s: unknown, target: "draft-2020-12" | "draft-07" = "draft-2020-12"): JsonSchema =>
  (s as { "~standard": { jsonSchema: { output(o: { target: string }): JsonSchema } } })["~standard"].jsonSchema.output({ target });

describe("the named drift cases are detected, with the right path", () => {
  it("a field with a default advertised as required (zod's output side, as z.toJSONSchema does)", async () => {
    const input = z.object({ q: z.string(), limit: z.number().int().default(10) });
    const tool = toolOf("defaults_required", input);
    const r = await checkTool(tool, { targets: ["mcp"], advertised: () => outputSide(input) });
    const f = drift(r, "mcp");
    expect(f.map((x) => [x.path, x.accepted, x.mutation.kind])).toEqual([["limit", "runtime", "missing"]]);
    expect(f[0]?.counterexample).toEqual({ q: "" });
    expect(f[0]?.explanation).toMatch(/advertised as required, but the runtime accepts the call without it/);
    expect(f[0]?.advertised.accepted).toBe(false);
    expect(f[0]?.runtime).toEqual({ accepted: true, code: null, reasons: [] });
  });

  it("additionalProperties: false advertised while the runtime strips extra keys", async () => {
    const input = z.object({ id: z.string() });
    const tool = toolOf("closed_but_strips", input, { unknownKeys: "strip" });
    const r = await checkTool(tool, { targets: ["mcp"], advertised: () => outputSide(input) });
    const f = drift(r, "mcp");
    expect(f.map((x) => [x.path, x.accepted, x.mutation.kind])).toEqual([["unexpectedField", "runtime", "extra"]]);
    expect(f[0]?.explanation).toMatch(/refuses the extra key `unexpectedField`, but the runtime accepts it/);
  });

  it("a union advertised as an empty schema ({})", async () => {
    const input = z.object({ value: z.union([z.string(), z.number()]) });
    const tool = toolOf("union_as_empty", input);
    const advertised = { type: "object", properties: { value: {} }, required: ["value"], additionalProperties: false };
    const r = await checkTool(tool, { targets: ["mcp"], advertised: () => advertised });
    const f = drift(r, "mcp");
    expect(f.length).toBeGreaterThan(0);
    expect(new Set(f.map((x) => x.path))).toEqual(new Set(["value"]));
    expect(f.every((x) => x.accepted === "advertised")).toBe(true);
    expect(f[0]?.runtime.code).toBe("INVALID_INPUT");
  });

  it("OpenAI strict mode: optional became nullable, the model sends null, the runtime refuses it (without mapping back)", async () => {
    const input = z.object({ orderId: z.string(), note: z.string().max(50).optional() });
    const tool = toolOf("strict_null", input);
    const unmapped = await checkTool(tool, { targets: ["openai"], mapBack: false });
    const f = drift(unmapped, "openai");
    expect(f.map((x) => [x.path, x.accepted, x.mutation.kind])).toEqual([["note", "advertised", "none"]]);
    expect(f[0]?.counterexample).toEqual({ orderId: "", note: null });
    expect(f[0]?.explanation).toMatch(/strict mode makes `note` nullable, but the runtime refuses null there: map calls back with fromOpenAIStrictArgs/);
    // With the gate's mapping (the default), the same tool is clean.
    const mapped = await checkTool(tool, { targets: ["openai"] });
    expect(mapped.ok).toBe(true);
    expect(mapped.targets[0]?.nullable).toEqual(["note"]);
  });

  it("a clean schema reports none, on every target", async () => {
    const tool = toolOf("clean", z.object({ sku: z.string().min(1).max(20), qty: z.number().int().min(1).max(10), gift: z.boolean().optional(), kind: z.enum(["a", "b"]).default("a") }));
    const r = await checkTool(tool);
    expect(r.targets.map((t) => [t.target, t.findings.length])).toEqual([
      ["mcp", 0],
      ["draft-07", 0],
      ["openai", 0],
      ["anthropic", 0],
    ]);
    expect(r.targets.every((t) => t.payloads >= 300)).toBe(true);
  });

  it("is deterministic for a seed, and a different seed still finds the same drift", async () => {
    const input = z.object({ a: z.string().refine((s) => s.length !== 3), b: z.number().int().min(0).max(9) });
    const tool = toolOf("seeded", input);
    const one = await checkTool(tool, { seed: 42, runs: 150 });
    const two = await checkTool(tool, { seed: 42, runs: 150 });
    expect(JSON.stringify(two)).toBe(JSON.stringify(one));
    const other = await checkTool(tool, { seed: 7, runs: 150 });
    const paths = (r: ToolReport) => r.targets.flatMap((t) => t.findings.filter((f) => f.kind === "drift").map((f) => `${t.target}:${f.path}`));
    expect(paths(other)).toEqual(paths(one));
  });

  it("shrinks counterexamples to a small payload", async () => {
    const input = z.object({ lines: z.array(z.object({ sku: z.string(), qty: z.number().int().min(0).max(1000).refine((n) => n <= 50, "at most 50 per line") })).min(1) });
    const tool = toolOf("shrinks", input);
    const r = await checkTool(tool, { targets: ["mcp"], seed: 3 });
    const f = drift(r, "mcp")[0];
    expect(f?.path).toBe("lines.0.qty");
    expect(f?.counterexample).toEqual({ lines: [{ sku: "", qty: 51 }] });
  });
});

describe("checkTool options", () => {
  it("refuses bad options with ToolgateConfigError", async () => {
    const { isToolgateConfigError } = await import("../../src/index.js");
    const tool = toolOf("opts", z.object({ a: z.string() }));
    for (const bad of [{ runs: 0 }, { runs: 1.5 }, { seed: Number.NaN }, { maxFindings: 0 }, { targets: ["gemini"] }]) {
      const e = await checkTool(tool, bad as never).then(() => undefined, (x: unknown) => x);
      expect(isToolgateConfigError(e), JSON.stringify(bad)).toBe(true);
    }
  });
});

describe("odd advertised schemas never hang or throw", () => {
  const weird: Record<string, JsonSchema> = {
    tightPatternAndLength: { type: "object", properties: { s: { type: "string", pattern: "^[a-c]{2,3}$", minLength: 10 } }, required: ["s"] },
    namesEqualProps: { type: "object", properties: { a: { type: "number" } }, propertyNames: { enum: ["a"] }, additionalProperties: { type: "number" } },
    tinyExclusiveInterval: { type: "object", properties: { x: { type: "number", exclusiveMinimum: 0.5, exclusiveMaximum: 0.5000001 } } },
    unknownFormat: { type: "object", properties: { f: { type: "string", format: "x-made-up" } } },
    recursiveRef: { type: "object", properties: { next: { $ref: "#" }, v: { type: "integer" } }, required: ["next"] },
    notAndIf: { type: "object", properties: { n: { not: { type: "string" } }, c: { if: { type: "number" }, then: { minimum: 3 } } } },
    booleanSchemas: { type: "object", properties: { t: true, f: false } },
    badPattern: { type: "object", properties: { p: { type: "string", pattern: "(?<=a)b[" } } },
  };
  for (const [name, advertised] of Object.entries(weird)) {
    it(name, async () => {
      const tool = toolOf(`weird_${name}`, z.object({}).passthrough(), { unknownKeys: "strip" });
      const r = await checkTool(tool, { targets: ["mcp", "openai"], runs: 50, advertised: () => advertised });
      expect(r.targets).toHaveLength(2);
      for (const t of r.targets) for (const f of t.findings) expect(["drift", "unrepresentable"]).toContain(f.kind);
    });
  }
});
