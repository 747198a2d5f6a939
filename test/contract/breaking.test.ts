import { describe, it, expect } from "vitest";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { compareSnapshots, parseSnapshot, snapshotOf, versionBumped, type ContractSnapshot } from "../../src/testing/index.js";

function snap(input: z.ZodType, version = "1.0.0", output: z.ZodType = z.object({ ok: z.boolean() })): ContractSnapshot {
  const tool = defineTool({ name: "t", version, description: "d", input, output, effect: "read", execute: () => ({ ok: true }) });
  return snapshotOf(createGate({ tools: [tool] }).list());
}

function changes(before: ContractSnapshot, after: ContractSnapshot) {
  const t = compareSnapshots(before, after).tools[0]!;
  return { ...t, list: t.changes.map((c) => `${c.breaking ? "BREAKING" : "ok"} ${c.side} ${c.kind} ${c.path}`) };
}

const base = z.object({ id: z.string().min(1).max(20), kind: z.enum(["a", "b", "c"]), n: z.number().int().min(0).max(100), note: z.string().optional() });

describe("breaking-change detection", () => {
  it("an identical contract has no changes", () => {
    expect(changes(snap(base), snap(base)).list).toEqual([]);
  });

  it("a removed or renamed field is breaking", () => {
    const r = changes(snap(base), snap(base.omit({ note: true }).extend({ memo: z.string().optional() })));
    expect(r.list).toEqual(["BREAKING input field_removed note", "ok input field_added memo"]);
    expect(r.ok).toBe(false);
  });

  it("a newly required field is breaking; an added optional field is compatible", () => {
    expect(changes(snap(base), snap(base.extend({ region: z.string() }))).list).toEqual(["BREAKING input field_added region"]);
    expect(changes(snap(base), snap(base.extend({ note: z.string() }))).list).toEqual(["BREAKING input field_now_required note"]);
    const compatible = changes(snap(base), snap(base.extend({ limit: z.number().int().optional() })));
    expect(compatible.list).toEqual(["ok input field_added limit"]);
    expect(compatible.ok).toBe(true);
  });

  it("a narrowed type or enum is breaking; widening is compatible", () => {
    expect(changes(snap(base), snap(base.extend({ kind: z.enum(["a", "b"]) }))).list).toEqual(["BREAKING input enum_narrowed kind"]);
    expect(changes(snap(base), snap(base.extend({ kind: z.enum(["a", "b", "c", "d"]) }))).list).toEqual(["ok input enum_widened kind"]);
    expect(changes(snap(base), snap(base.extend({ id: z.union([z.string().min(1).max(20), z.number()]) }))).list).toEqual(["ok input union_widened id"]);
    const num = z.object({ v: z.number() });
    expect(changes(snap(num), snap(z.object({ v: z.number().int() }))).list).toEqual(["BREAKING input type_narrowed v", "BREAKING input bound_tightened v", "BREAKING input bound_tightened v"]);
  });

  it("a tightened bound is breaking; a loosened one is compatible", () => {
    expect(changes(snap(base), snap(base.extend({ n: z.number().int().min(1).max(100) }))).list).toEqual(["BREAKING input bound_tightened n"]);
    expect(changes(snap(base), snap(base.extend({ id: z.string().min(1).max(10) }))).list).toEqual(["BREAKING input bound_tightened id"]);
    expect(changes(snap(base), snap(base.extend({ n: z.number().int().min(0).max(1000) }))).list).toEqual(["ok input bound_loosened n"]);
  });

  it("output: a removed or optional field is breaking, an added field is not", () => {
    const out = z.object({ ok: z.boolean(), total: z.number() });
    expect(changes(snap(base, "1.0.0", out), snap(base, "1.0.0", z.object({ ok: z.boolean() }))).list).toEqual(["BREAKING output field_removed total"]);
    expect(changes(snap(base, "1.0.0", out), snap(base, "1.0.0", out.extend({ total: z.number().optional() }))).list).toEqual(["BREAKING output field_now_optional total"]);
    expect(changes(snap(base, "1.0.0", out), snap(base, "1.0.0", out.extend({ extra: z.string() }))).list).toEqual(["ok output field_added extra"]);
    expect(changes(snap(base, "1.0.0", z.object({ s: z.enum(["x"]) })), snap(base, "1.0.0", z.object({ s: z.enum(["x", "y"]) }))).list).toEqual(["BREAKING output enum_widened s"]);
  });

  it("a breaking change needs a version bump", () => {
    const after = base.extend({ region: z.string() });
    expect(changes(snap(base, "1.0.0"), snap(after, "1.0.0")).ok).toBe(false);
    expect(changes(snap(base, "1.0.0"), snap(after, "1.1.0")).ok).toBe(false);
    const bumped = changes(snap(base, "1.0.0"), snap(after, "2.0.0"));
    expect([bumped.ok, bumped.breaking, bumped.versionBumped]).toEqual([true, true, true]);
  });

  it("versionBumped: semver needs a higher major (minor below 1.0), other versions must differ", () => {
    expect(versionBumped("1.2.3", "2.0.0")).toBe(true);
    expect(versionBumped("1.2.3", "1.9.0")).toBe(false);
    expect(versionBumped("0.3.0", "0.4.0")).toBe(true);
    expect(versionBumped("0.3.0", "0.3.9")).toBe(false);
    expect(versionBumped("2", "1")).toBe(false);
    expect(versionBumped("2026-01", "2026-02")).toBe(true);
    expect(versionBumped("beta", "beta")).toBe(false);
  });

  it("a removed tool is breaking, an added one is not", () => {
    const one = snap(base);
    const none: ContractSnapshot = { format: "toolgate-contracts", version: 1, tools: {} };
    expect(compareSnapshots(one, none)).toMatchObject({ ok: false, tools: [{ name: "t", ok: false, newVersion: null, changes: [{ kind: "tool_removed", breaking: true }] }] });
    expect(compareSnapshots(none, one)).toMatchObject({ ok: true, tools: [{ name: "t", ok: true, oldVersion: null }] });
  });

  it("parseSnapshot refuses what is not a snapshot, with the reason", () => {
    expect(parseSnapshot(snap(base))).toMatchObject({ ok: true });
    expect(parseSnapshot({})).toEqual({ ok: false, reason: 'not a toolgate contracts snapshot (expected "format": "toolgate-contracts")' });
    expect(parseSnapshot({ format: "toolgate-contracts", version: 2, tools: {} })).toEqual({ ok: false, reason: "unsupported snapshot version 2 (this toolgate reads version 1)" });
    expect(parseSnapshot({ format: "toolgate-contracts", version: 1, tools: [] })).toEqual({ ok: false, reason: '"tools" must be an object keyed by tool name' });
    expect(parseSnapshot({ format: "toolgate-contracts", version: 1, tools: { t: { version: 1 } } })).toEqual({ ok: false, reason: 'tool "t": expected { version: string, inputSchema: object, … }' });
    expect(parseSnapshot({ format: "toolgate-contracts", version: 1, tools: { t: { version: "1", inputSchema: {}, outputSchema: "x" } } })).toEqual({ ok: false, reason: 'tool "t": outputSchema must be an object' });
  });
});

describe("breaking-change detection: definitions, defaults, effects, combinators", () => {
  const Addr = (city: z.ZodString, extra: Record<string, z.ZodType> = {}) => z.object({ city, ...extra }).meta({ id: "Addr" });

  it("a change inside a $defs definition is seen where it is used (a new required field, a tighter bound)", () => {
    const a = Addr(z.string());
    const b = Addr(z.string().max(3), { zip: z.string() });
    const before = snap(z.object({ ship: a, bill: a }));
    const after = snap(z.object({ ship: b, bill: b }));
    expect(JSON.stringify(after.tools.t!.inputSchema)).toContain('"$ref"'); // the case: a shared definition
    const r = changes(before, after);
    expect(r.list).toEqual(
      expect.arrayContaining(["BREAKING input bound_tightened ship.city", "BREAKING input field_added ship.zip", "BREAKING input bound_tightened bill.city", "BREAKING input field_added bill.zip"]),
    );
    expect(r.ok).toBe(false);
  });

  it("keywords beside a $ref count (zod writes a default next to the reference)", () => {
    const D = z.object({ c: z.string() }).meta({ id: "D" });
    const r = changes(snap(z.object({ d: D.default({ c: "x" }) })), snap(z.object({ d: D.default({ c: "y" }) })));
    expect(r.list).toEqual(["BREAKING input default_changed d"]);
  });

  it("an old snapshot without effect compares without an effect change", () => {
    const before = snap(base);
    const { effect: _e, ...old } = before.tools.t!;
    expect(changes({ ...before, tools: { t: old as typeof before.tools.t } } as ContractSnapshot, snap(base)).list).toEqual([]);
  });


  it("a change inside a recursive schema is seen, and the walk ends", () => {
    type Tree = { name: string; children?: Tree[] | undefined };
    const tree = (name: z.ZodString): z.ZodType<Tree> => {
      const T: z.ZodType<Tree> = z.lazy(() => z.object({ name, children: z.array(T).optional() }));
      return T;
    };
    const r = changes(snap(z.object({ tree: tree(z.string()) })), snap(z.object({ tree: tree(z.string().min(5)) })));
    expect(r.list).toEqual(expect.arrayContaining(["BREAKING input bound_tightened tree.name"]));
  });

  it("a changed default is breaking on the input side", () => {
    const r = changes(snap(z.object({ n: z.number().default(5) })), snap(z.object({ n: z.number().default(10) })));
    expect(r.list).toEqual(["BREAKING input default_changed n"]);
  });

  it("a default added or removed is breaking on the input side (an absent field now means something else)", () => {
    expect(changes(snap(z.object({ s: z.string().optional() })), snap(z.object({ s: z.string().default("x") }))).list).toEqual(["BREAKING input default_changed s"]);
    expect(changes(snap(z.object({ s: z.string().default("x") })), snap(z.object({ s: z.string().optional() }))).list).toEqual(["BREAKING input default_changed s"]);
  });

  it("minimum and exclusiveMinimum are one bound (and maximum likewise): gt(0) → min(0) is looser, positive() equals min(1) for integers", () => {
    const n = (s: z.ZodType) => snap(z.object({ n: s }));
    expect(changes(n(z.number().gt(0)), n(z.number().min(0))).list).toEqual(["ok input bound_loosened n"]);
    expect(changes(n(z.number().min(0)), n(z.number().gt(0))).list).toEqual(["BREAKING input bound_tightened n"]);
    expect(changes(n(z.number().lt(10)), n(z.number().max(10))).list).toEqual(["ok input bound_loosened n"]);
    expect(changes(n(z.number().int().positive()), n(z.number().int().min(1))).list).toEqual([]);
    expect(changes(n(z.number().int().lt(10)), n(z.number().int().max(9))).list).toEqual([]);
    const out = (s: z.ZodType) => snap(z.object({}), "1.0.0", z.object({ n: s }));
    const narrower = changes(out(z.number().max(10)), out(z.number().lt(10)));
    expect(narrower.list).toEqual(["ok output bound_tightened n"]);
    expect(narrower.ok).toBe(true);
  });

  it("compareSnapshots refuses what is not a snapshot this version reads, naming which side", () => {
    const good = snap(base);
    expect(() => compareSnapshots({} as ContractSnapshot, good)).toThrow(expect.objectContaining({ code: "E_CHECK_OPTIONS", message: expect.stringContaining("compareSnapshots: prev: not a toolgate contracts snapshot") }));
    expect(() => compareSnapshots(good, { ...good, version: 2 } as unknown as ContractSnapshot)).toThrow(/compareSnapshots: next: unsupported snapshot version 2/);
    const numbered = { ...good, tools: { t: { ...good.tools.t!, version: 3 } } } as unknown as ContractSnapshot;
    expect(() => compareSnapshots(good, numbered)).toThrow(/tool "t": expected \{ version: string/);
    expect(() => snapshotOf(undefined as never)).toThrow(/snapshotOf: the argument must be a gate's listings/);
  });

  it("a changed effect is breaking (retries and idempotency follow it)", () => {
    const t = (effect: "read" | "write") =>
      snapshotOf(createGate({ tools: [defineTool({ name: "t", version: "1.0.0", description: "d", input: z.object({}), output: z.object({ ok: z.boolean() }), effect, execute: () => ({ ok: true }) })] }).list());
    expect(changes(t("read"), t("write")).list).toEqual(["BREAKING tool effect_changed "]);
  });

  it("output side: a changed `not` or pattern is breaking too (the docs' table: breaking | breaking)", () => {
    const out = (o: z.ZodType) => snap(z.object({}), "1.0.0", o);
    expect(changes(out(z.object({ id: z.string().regex(/^[a-z]+$/) })), out(z.object({ id: z.string().regex(/^[0-9]+$/) }))).list).toEqual(["BREAKING output constraint_changed id"]);
    const not = (v: string) => z.object({ v: z.string() }).meta({ not: { const: v } }); // `meta` keys land in the JSON Schema
    const r = changes(out(not("a")), out(not("b")));
    expect(r.list).toEqual(["BREAKING output schema_changed "]);
  });

  it("a description edit inside union branches is no change", () => {
    const u = (d: string) => z.object({ v: z.union([z.object({ a: z.string().describe(d) }), z.object({ b: z.number() })]) });
    expect(changes(snap(u("first")), snap(u("second"))).list).toEqual([]);
  });
});

describe("breaking-change detection over definitions that use definitions", () => {
  const raw = (inputSchema: Record<string, unknown>): ContractSnapshot =>
    ({ format: "toolgate-contracts", version: 1, tools: { t: { version: "1.0.0", description: "d", effect: "read", inputSchema } } }) as ContractSnapshot;

  it("a leaf used through levels of shared definitions is reported at a bounded number of paths, and still breaks", () => {
    const build = (max: number) => {
      const defs: Record<string, unknown> = { L0: { type: "string", maxLength: max } };
      for (let d = 1; d <= 8; d++) defs[`L${d}`] = { type: "object", properties: Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`k${i}`, { $ref: `#/$defs/L${d - 1}` }])) };
      return raw({ type: "object", properties: { v: { $ref: "#/$defs/L8" } }, $defs: defs });
    };
    const t = compareSnapshots(build(5), build(3)).tools[0]!; // 6^8 paths reach the leaf
    expect(t.breaking).toBe(true);
    expect(t.changes.length).toBe(8);
    expect(t.changes.every((c) => c.kind === "bound_tightened")).toBe(true);
  });

  it("the path cap counts what is beside the reference: a default changed at the ninth use is still seen", () => {
    const addr = (zip: boolean) => ({ type: "object", properties: { city: { type: "string" }, ...(zip ? { zip: { type: "string" } } : {}) } });
    const mk = (zip: boolean, dflt: string) =>
      raw({
        type: "object",
        properties: { ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`a${i}`, { $ref: "#/$defs/Addr" }])), z: { default: { city: dflt }, $ref: "#/$defs/Addr" } },
        $defs: { Addr: addr(zip) },
      });
    const t = compareSnapshots(mk(false, "Paris"), mk(true, "Lyon")).tools[0]!;
    expect(t.changes.filter((c) => c.breaking).map((c) => `${c.kind} ${c.path}`)).toEqual(["default_changed z"]);
  });

  it("many definitions that refer to each other, unchanged, are compared without walking them again and again", () => {
    const mesh = (n: number, extra: string) => {
      const defs: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) defs[`D${i}`] = { type: "object", properties: { p: { $ref: `#/$defs/D${(i + 1) % n}` }, q: { $ref: `#/$defs/D${(i + 7) % n}` } } };
      return raw({ type: "object", properties: { root: { $ref: "#/$defs/D0" }, x: { type: extra } }, $defs: defs });
    };
    const t = compareSnapshots(mesh(28, "string"), mesh(28, "number")).tools[0]!;
    expect(t.changes.map((c) => `${c.kind} ${c.path}`)).toEqual(["type_narrowed x", "type_widened x"]);
  });

  it("definitions that refer to each other: a change is found whichever path is compared first", () => {
    const mk = (rType: string, props: Record<string, unknown>) =>
      raw({
        type: "object",
        properties: props,
        $defs: { P: { type: "object", properties: { b: { $ref: "#/$defs/Q" }, c: { $ref: "#/$defs/R" } } }, Q: { type: "object", properties: { a: { $ref: "#/$defs/P" } } }, R: { type: rType } },
      });
    const paths = (props: Record<string, unknown>) => compareSnapshots(mk("string", props), mk("number", props)).tools[0]!.changes.filter((c) => c.breaking).map((c) => c.path).sort();
    expect(paths({ x: { $ref: "#/$defs/P" }, y: { $ref: "#/$defs/Q" } })).toEqual(["x.c", "y.a.c"]);
    expect(paths({ y: { $ref: "#/$defs/Q" }, x: { $ref: "#/$defs/P" } })).toEqual(["x.c", "y.a.c"]);
  });
});
