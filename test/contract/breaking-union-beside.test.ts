/**
 * Keywords beside a union (`anyOf`/`oneOf`): zod writes a nullable's, a discriminated union's and a
 * union's `default` there. They are compared as any node's keywords are (docs/contract.md,
 * "Breaking changes"), not skipped because the node is a union.
 */
import { describe, it, expect } from "vitest";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { compareSnapshots, snapshotOf, type ContractSnapshot } from "../../src/testing/index.js";

function snap(input: z.ZodType, output: z.ZodType = z.object({ ok: z.boolean() })): ContractSnapshot {
  const tool = defineTool({ name: "t", version: "1.0.0", description: "d", input, output, effect: "read", execute: () => ({ ok: true }) as never });
  return snapshotOf(createGate({ tools: [tool] }).list());
}

function changes(before: ContractSnapshot, after: ContractSnapshot) {
  const t = compareSnapshots(before, after).tools[0]!;
  return { ok: t.ok, list: t.changes.map((c) => `${c.breaking ? "BREAKING" : "ok"} ${c.side} ${c.kind} ${c.path}`) };
}

const input = (s: z.ZodType) => snap(z.object({ s }));

describe("breaking changes beside a union", () => {
  const U = () => z.union([z.string().min(2), z.number()]);
  const D = () => z.discriminatedUnion("k", [z.object({ k: z.literal("a") }), z.object({ k: z.literal("b") })]);
  const O = () => z.object({ x: z.number() }).nullable();
  const E = () => z.enum(["open", "closed"]).nullable();

  it.each([
    ["a union", input(U().default("xx")), input(U().default(5))],
    ["a discriminated union", input(D().default({ k: "a" })), input(D().default({ k: "b" }))],
    ["a nullable object", input(O().default({ x: 1 })), input(O().default({ x: 2 }))],
    ["a nullable string with a bound", input(z.string().min(1).nullable().default("a")), input(z.string().min(1).nullable().default("b"))],
    ["a nullable enum", input(E().default("open")), input(E().default("closed"))],
  ])("a changed default of %s is breaking on the input side", (_what, before, after) => {
    expect(JSON.stringify(before.tools.t!.inputSchema.properties)).toMatch(/"(anyOf|oneOf)"/); // the case: a union
    const r = changes(before, after);
    expect(r.list).toEqual(["BREAKING input default_changed s"]);
    expect(r.ok).toBe(false);
  });

  it("a default added to or removed from a union is breaking on the input side", () => {
    expect(changes(input(E().optional()), input(E().default("open"))).list).toEqual(["BREAKING input default_changed s"]);
    expect(changes(input(E().default("open")), input(E().optional())).list).toEqual(["BREAKING input default_changed s"]);
  });

  it("on the output side a union's changed default is listed, not breaking", () => {
    const out = (s: z.ZodType) => snap(z.object({}), z.object({ s }));
    const r = changes(out(E().default("open")), out(E().default("closed")));
    expect(r.list).toEqual(["ok output default_changed s"]);
    expect(r.ok).toBe(true);
  });

  it("another keyword beside a union counts too (a changed `not`)", () => {
    const notX = (v: string) => z.union([z.string().min(2), z.number()]).meta({ not: { const: v } });
    expect(JSON.stringify(input(notX("a")).tools.t!.inputSchema.properties)).toContain('"anyOf"');
    expect(changes(input(notX("a")), input(notX("b"))).list).toEqual(["BREAKING input schema_changed s"]);
  });

  it("a field with a default made nullable is a widening (its default is compared once, beside the union)", () => {
    const before = input(z.string().min(1).default("a"));
    const after = input(z.string().min(1).nullable().default("a"));
    const r = changes(before, after);
    expect(r.list).toEqual(["ok input union_widened s"]);
    expect(r.ok).toBe(true);
  });
});
