/**
 * Breaking-change detection between two contract snapshots. Input side: a change is breaking
 * when the new schema refuses a call the old one accepted (a field removed or renamed, newly
 * required, a narrowed type or enum, a tightened bound, an object closed). Output side: when the
 * new schema lets the tool return what the old one promised it would not (a field removed or
 * made optional, a widened type or enum, a loosened bound). A breaking change needs a version bump.
 * @module
 */
import type { JsonSchema } from "../standard.js";
import { parseSnapshot, type ContractSnapshot } from "./snapshot.js";
import { ToolgateConfigError } from "../errors.js";
import { deref, isRecord, requiredOf, resolveRef, typesOf } from "./_schema.js";

/** What changed. */
export type ChangeKind =
  | "tool_removed" | "tool_added"
  | "field_removed" | "field_added" | "field_now_required" | "field_now_optional"
  | "type_narrowed" | "type_widened" | "enum_narrowed" | "enum_widened"
  | "bound_tightened" | "bound_loosened" | "closed" | "opened"
  | "constraint_added" | "constraint_removed" | "constraint_changed"
  | "union_narrowed" | "union_widened" | "schema_changed" | "output_schema_removed"
  | "default_changed" | "effect_changed";

/** One change between the snapshots. */
export interface ContractChange {
  readonly side: "input" | "output" | "tool";
  /** Field path (`a.b`, `*` for items; `""` for the root). */
  readonly path: string;
  readonly kind: ChangeKind;
  readonly breaking: boolean;
  /** One line: what changed. */
  readonly detail: string;
}

/** One tool's changes. */
export interface ToolChanges {
  readonly name: string;
  /** `null` when the tool is new. */
  readonly oldVersion: string | null;
  /** `null` when the tool was removed. */
  readonly newVersion: string | null;
  readonly changes: readonly ContractChange[];
  /** At least one change is breaking. */
  readonly breaking: boolean;
  /** The version changed in a way that announces a breaking change (see {@link versionBumped}). */
  readonly versionBumped: boolean;
  /** Not breaking, or breaking with a version bump (a removed tool is never ok). */
  readonly ok: boolean;
}

/** The `breaking` part of the check report. */
export interface BreakingReport {
  readonly ok: boolean;
  readonly tools: readonly ToolChanges[];
}

const SEMVER = /^v?(\d+)(?:\.(\d+)(?:\.(\d+)(?:[-+][0-9A-Za-z.+-]+)?)?)?$/;

/**
 * Does `next` announce a breaking change over `prev`? Semver-like versions (`2`, `1.4`, `1.4.2`)
 * need a higher major (or, below 1.0.0, a higher minor); any other version string just has to differ.
 * @example
 * versionBumped("1.2.0", "2.0.0"); // true
 * versionBumped("1.2.0", "1.3.0"); // false
 * versionBumped("2026-01", "2026-02"); // true
 */
export function versionBumped(prev: string, next: string): boolean {
  const a = SEMVER.exec(prev);
  const b = SEMVER.exec(next);
  if (a === null || b === null) return prev !== next;
  const [amaj, amin, bmaj, bmin] = [Number(a[1]), Number(a[2] ?? 0), Number(b[1]), Number(b[2] ?? 0)];
  if (bmaj !== amaj) return bmaj > amaj;
  return amaj === 0 && bmin > amin;
}

interface Ctx {
  readonly side: "input" | "output";
  readonly oldRoot: JsonSchema;
  readonly newRoot: JsonSchema;
  readonly out: ContractChange[];
  /** `$ref` pairs (old → new) being compared above this node: a recursive schema ends there. */
  readonly seen: Set<string>;
  /** Shared by a side's probes: definitions known to be the same in both roots. */
  readonly sameDefs: Map<string, boolean>;
  /** Shared by a side's probes: union branch pairs already compared (changed, breaking). */
  readonly branchMemo: WeakMap<object, WeakMap<object, { readonly changed: boolean; readonly breaking: boolean }>>;
  /** How many paths each `$ref` pair was compared at (bounded by {@link MAX_PATHS_PER_DEFINITION}). */
  readonly uses: Map<string, number>;
}

/**
 * A shared definition's changes are reported at this many paths that use it, at most: a
 * definition used by definitions used by definitions… has paths without end (6 uses per level,
 * 8 levels: 1.7 million). Its verdict is the same at every path, so the report stays right.
 */
const MAX_PATHS_PER_DEFINITION = 8;

function sideCtx(side: "input" | "output", oldRoot: JsonSchema, newRoot: JsonSchema, out: ContractChange[]): Ctx {
  return { side, oldRoot, newRoot, out, seen: new Set(), sameDefs: new Map(), branchMemo: new WeakMap(), uses: new Map() };
}

const show = (p: string): string => (p === "" ? "(root)" : p);
const join = (p: string, k: string): string => (p === "" ? k : `${p}.${k}`);
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Record a change that narrows (new accepts less) or widens; breaking depends on the side. */
function change(c: Ctx, path: string, kind: ChangeKind, narrowing: boolean, detail: string): void {
  c.out.push({ side: c.side, path, kind, breaking: c.side === "input" ? narrowing : !narrowing, detail: `${show(path)}: ${detail}` });
}

/** Record a change that is breaking on either side (neither narrower nor wider, or not known to be). */
function breakingEither(c: Ctx, path: string, kind: ChangeKind, detail: string): void {
  c.out.push({ side: c.side, path, kind, breaking: true, detail: `${show(path)}: ${detail}` });
}

/**
 * The two nodes are the same schema: the same text, and every definition a `$ref` in it points to
 * (and every one those point to) the same text in both roots. Text alone cannot say so when it
 * holds a `$ref`: the definition may have changed.
 */
function identical(c: Ctx, a: unknown, b: unknown): boolean {
  const ja = JSON.stringify(a);
  if (ja !== JSON.stringify(b)) return false;
  return refsIn(ja).every((r) => sameDefinition(c, r));
}

const REF = /"\$ref":"((?:[^"\\]|\\.)*)"/g;
function refsIn(text: string | undefined): string[] {
  return text === undefined ? [] : [...text.matchAll(REF)].map((m) => JSON.parse(`"${m[1]}"`) as string);
}

function sameDefinition(c: Ctx, ref: string, open: Set<string> = new Set(), proven: Set<string> = new Set()): boolean {
  const known = c.sameDefs.get(ref);
  if (known !== undefined) return known;
  if (open.has(ref) || proven.has(ref)) return true; // a cycle (assumed while checked), or shown in this check
  open.add(ref);
  const ja = JSON.stringify(resolveRef(c.oldRoot, ref));
  const same = ja !== undefined && ja === JSON.stringify(resolveRef(c.newRoot, ref)) && refsIn(ja).every((r) => sameDefinition(c, r, open, proven));
  open.delete(ref);
  // "Different" holds whatever was assumed. "The same" is kept once the whole check is done: an
  // answer under an open assumption could be undone by a later branch (which makes the top answer
  // "different", and nothing of this check is kept as the same).
  if (!same) {
    c.sameDefs.set(ref, false);
    return false;
  }
  proven.add(ref);
  if (open.size === 0) for (const p of proven) c.sameDefs.set(p, true);
  return true;
}

/** The keywords beside a node's `$ref`, as text. */
function besideText(node: JsonSchema): string {
  const { $ref: _ref, ...beside } = node;
  return JSON.stringify(beside);
}

/** A `$ref` node with keywords beside it (zod writes `{ "$ref", "default" }`): the target with them. */
function resolved(root: JsonSchema, node: JsonSchema): JsonSchema {
  const target = deref(root, node);
  if (target === node || typeof node.$ref !== "string") return target;
  const { $ref: _ref, ...beside } = node;
  return Object.keys(beside).length === 0 ? target : { ...target, ...beside };
}

function typeSet(s: JsonSchema): Set<string> | undefined {
  const t = typesOf(s);
  if (t.length === 0) return isRecord(s.properties) ? new Set(["object"]) : undefined;
  return new Set(t);
}

const covers = (set: Set<string>, t: string): boolean => set.has(t) || (t === "integer" && set.has("number"));

function enumOf(s: JsonSchema): string[] | undefined {
  if ("const" in s) return [JSON.stringify(s.const)];
  return Array.isArray(s.enum) ? s.enum.map((v) => JSON.stringify(v)) : undefined;
}

const LOWER = ["minLength", "minItems", "minProperties"] as const;
const UPPER = ["maxLength", "maxItems", "maxProperties"] as const;

/** A numeric bound: its value, and whether the value itself is outside (`exclusive*`). */
interface Bound {
  readonly v: number;
  readonly excl: boolean;
}

/**
 * The bound `minimum` and `exclusiveMinimum` (or the maximum pair) set together, the tighter of
 * the two; for integers an exclusive bound is the inclusive one next to it (`> 0` is `≥ 1`), so
 * `positive()` and `min(1)` are the same bound.
 */
function boundOf(s: JsonSchema, lower: boolean, integer: boolean): Bound | undefined {
  const inc = s[lower ? "minimum" : "maximum"];
  const exc = s[lower ? "exclusiveMinimum" : "exclusiveMaximum"];
  let b: Bound | undefined = typeof inc === "number" ? { v: inc, excl: false } : undefined;
  if (typeof exc === "number") {
    const e = { v: exc, excl: true };
    b = b === undefined || tighter(b, e, lower) ? e : b;
  }
  if (b === undefined || !integer) return b;
  // Integers: the nearest integer inside the bound, inclusive.
  const v = lower ? (b.excl ? Math.floor(b.v) + 1 : Math.ceil(b.v)) : b.excl ? Math.ceil(b.v) - 1 : Math.floor(b.v);
  return { v, excl: false };
}

/** True when `b` allows fewer values than `a` (a lower bound when `lower`). */
function tighter(a: Bound, b: Bound, lower: boolean): boolean {
  if (a.v !== b.v) return lower ? b.v > a.v : b.v < a.v;
  return b.excl && !a.excl;
}

function showBound(b: Bound | undefined, lower: boolean): string {
  return b === undefined ? "none" : `${lower ? (b.excl ? ">" : "≥") : b.excl ? "<" : "≤"} ${b.v}`;
}

function compareBounds(c: Ctx, o: JsonSchema, n: JsonSchema, path: string): void {
  const integer = (s: JsonSchema) => {
    const t = typeSet(s);
    return t !== undefined && [...t].every((x) => x === "integer");
  };
  const int = integer(o) && integer(n);
  for (const lower of [true, false]) {
    const a = boundOf(o, lower, int);
    const b = boundOf(n, lower, int);
    if (a === undefined && b === undefined) continue;
    const narrower = a === undefined || (b !== undefined && tighter(a, b, lower));
    const wider = b === undefined || (a !== undefined && tighter(b, a, lower));
    if (!narrower && !wider) continue;
    change(c, path, narrower ? "bound_tightened" : "bound_loosened", narrower, `${lower ? "minimum" : "maximum"} ${showBound(a, lower)} → ${showBound(b, lower)}`);
  }
}
const EXACT = ["pattern", "format", "multipleOf", "uniqueItems"] as const;

function compare(c: Ctx, oldNode: unknown, newNode: unknown, path: string, depth: number): void {
  if (depth > 32 || identical(c, oldNode, newNode)) return;
  if (!isRecord(oldNode) || !isRecord(newNode)) {
    if (oldNode === false || newNode === true) change(c, path, "schema_changed", newNode === false, "schema changed from true/false");
    else change(c, path, "schema_changed", true, "schema replaced");
    return;
  }
  // A pair of references already being compared above: a recursive definition ends here (each
  // path that uses a shared definition is still compared, and reported, on its own).
  const pair = typeof oldNode.$ref === "string" && typeof newNode.$ref === "string" ? `${oldNode.$ref}\u0000${newNode.$ref}` : undefined;
  if (pair !== undefined) {
    if (c.seen.has(pair)) return;
    // Keywords beside the references (a default) are part of what is compared at this path.
    const use = `${pair}\u0000${besideText(oldNode)}\u0000${besideText(newNode)}`;
    const used = (c.uses.get(use) ?? 0) + 1;
    c.uses.set(use, used);
    if (used > MAX_PATHS_PER_DEFINITION) return;
    c.seen.add(pair);
  }
  try {
    compareResolved(c, resolved(c.oldRoot, oldNode), resolved(c.newRoot, newNode), path, depth);
  } finally {
    if (pair !== undefined) c.seen.delete(pair);
  }
}

function compareResolved(c: Ctx, o: JsonSchema, n: JsonSchema, path: string, depth: number): void {
  if (identical(c, o, n)) return;
  const bo = branchesOf(o);
  const bn = branchesOf(n);
  if (bo !== undefined || bn !== undefined) {
    // A union on either side: compare branch sets (a plain schema is a union of one, its `default`
    // left beside it), then what stands beside the union (zod writes a union's `default` there)
    // as any other node's keywords.
    compareUnions(c, bo ?? [withoutDefault(o)], bn ?? [withoutDefault(n)], path, depth);
    compareResolved(c, besideUnion(o, bo !== undefined), besideUnion(n, bn !== undefined), path, depth);
    return;
  }
  const to = typeSet(o);
  const tn = typeSet(n);
  if (to === undefined && tn !== undefined) change(c, path, "type_narrowed", true, `any type → ${[...tn].join("|")}`);
  else if (to !== undefined && tn === undefined) change(c, path, "type_widened", false, `${[...to].join("|")} → any type`);
  else if (to !== undefined && tn !== undefined) {
    const lost = [...to].filter((t) => !covers(tn, t));
    const gained = [...tn].filter((t) => !covers(to, t));
    if (lost.length > 0) change(c, path, "type_narrowed", true, `type no longer allows ${lost.join(", ")}`);
    if (gained.length > 0) change(c, path, "type_widened", false, `type now also allows ${gained.join(", ")}`);
  }
  const eo = enumOf(o);
  const en = enumOf(n);
  if (en !== undefined && (eo === undefined || eo.some((v) => !en.includes(v)))) {
    change(c, path, "enum_narrowed", true, eo === undefined ? `now limited to ${en.join(", ")}` : `no longer allows ${eo.filter((v) => !en.includes(v)).join(", ")}`);
  }
  if (eo !== undefined && (en === undefined || en.some((v) => !eo.includes(v)))) {
    change(c, path, "enum_widened", false, en === undefined ? "no longer limited to a list" : `now also allows ${en.filter((v) => !eo.includes(v)).join(", ")}`);
  }
  compareBounds(c, o, n, path);
  for (const k of [...LOWER, ...UPPER]) {
    const a = typeof o[k] === "number" ? (o[k] as number) : undefined;
    const b = typeof n[k] === "number" ? (n[k] as number) : undefined;
    if (a === b) continue;
    const lower = (LOWER as readonly string[]).includes(k);
    const tighter = a === undefined || (b !== undefined && (lower ? b > a : b < a));
    change(c, path, tighter ? "bound_tightened" : "bound_loosened", tighter, `${k} ${a ?? "none"} → ${b ?? "none"}`);
  }
  for (const k of EXACT) {
    if (same(o[k], n[k])) continue;
    const kind = o[k] === undefined ? "constraint_added" : n[k] === undefined ? "constraint_removed" : "constraint_changed";
    const detail = `${k} ${JSON.stringify(o[k]) ?? "none"} → ${JSON.stringify(n[k]) ?? "none"}`;
    // A changed pattern or format both refuses old values and allows new ones: breaking either way.
    if (kind === "constraint_changed") breakingEither(c, path, kind, detail);
    else change(c, path, kind, kind !== "constraint_removed", detail);
  }
  if ((o.default !== undefined || n.default !== undefined) && !same(o.default, n.default)) {
    // An absent field now means something else (a default changed, added or removed): callers
    // relying on the absence get another call.
    c.out.push({ side: c.side, path, kind: "default_changed", breaking: c.side === "input", detail: `${show(path)}: default ${JSON.stringify(o.default) ?? "none"} → ${JSON.stringify(n.default) ?? "none"}` });
  }
  compareObjects(c, o, n, path, depth);
  compareArrays(c, o, n, path, depth);
  for (const k of ["allOf", "not", "if", "then", "else", "propertyNames", "dependentRequired", "dependentSchemas", "patternProperties"] as const) {
    if (!same(o[k], n[k])) breakingEither(c, path, "schema_changed", `\`${k}\` changed (treated as breaking)`);
  }
}

function compareObjects(c: Ctx, o: JsonSchema, n: JsonSchema, path: string, depth: number): void {
  const po = isRecord(o.properties) ? o.properties : undefined;
  const pn = isRecord(n.properties) ? n.properties : undefined;
  if (po === undefined && pn === undefined && o.additionalProperties === undefined && n.additionalProperties === undefined) return;
  const ro = requiredOf(o);
  const rn = requiredOf(n);
  const input = c.side === "input";
  for (const [k, sub] of Object.entries(po ?? {})) {
    const p = join(path, k);
    if (pn === undefined || !Object.hasOwn(pn, k)) {
      c.out.push({ side: c.side, path: p, kind: "field_removed", breaking: true, detail: `${p}: field removed or renamed` });
      continue;
    }
    if (!ro.has(k) && rn.has(k)) c.out.push({ side: c.side, path: p, kind: "field_now_required", breaking: input, detail: `${p}: optional → required` });
    if (ro.has(k) && !rn.has(k)) c.out.push({ side: c.side, path: p, kind: "field_now_optional", breaking: !input, detail: `${p}: required → optional` });
    compare(c, sub, pn[k], p, depth + 1);
  }
  for (const k of Object.keys(pn ?? {})) {
    if (po !== undefined && Object.hasOwn(po, k)) continue;
    const p = join(path, k);
    const req = rn.has(k);
    c.out.push({ side: c.side, path: p, kind: "field_added", breaking: input && req, detail: `${p}: ${req ? "required" : "optional"} field added` });
  }
  const ao = o.additionalProperties;
  const an = n.additionalProperties;
  if (ao !== false && an === false) change(c, path, "closed", true, "no longer accepts extra keys");
  else if (ao === false && an !== false) change(c, path, "opened", false, "now accepts extra keys");
  else if (isRecord(ao) && isRecord(an)) compare(c, ao, an, join(path, "*"), depth + 1);
}

function compareArrays(c: Ctx, o: JsonSchema, n: JsonSchema, path: string, depth: number): void {
  const po = Array.isArray(o.prefixItems) ? o.prefixItems : [];
  const pn = Array.isArray(n.prefixItems) ? n.prefixItems : [];
  for (let i = 0; i < Math.max(po.length, pn.length); i++) compare(c, po[i] ?? true, pn[i] ?? true, join(path, String(i)), depth + 1);
  if (o.items !== undefined || n.items !== undefined) compare(c, o.items ?? true, n.items ?? true, join(path, "*"), depth + 1);
}

/** A plain schema as the one branch of a union: its `default` belongs to the node, not the branch. */
function withoutDefault(s: JsonSchema): JsonSchema {
  if (!("default" in s)) return s;
  const { default: _default, ...rest } = s;
  return rest;
}

/** What stands beside a node's union: every keyword but the branches; of a plain schema, its `default`. */
function besideUnion(s: JsonSchema, union: boolean): JsonSchema {
  if (!union) return "default" in s ? { default: s.default } : {};
  const { anyOf: _anyOf, oneOf: _oneOf, ...rest } = s;
  return rest;
}

function branchesOf(s: JsonSchema): unknown[] | undefined {
  const list = [...(Array.isArray(s.anyOf) ? s.anyOf : []), ...(Array.isArray(s.oneOf) ? s.oneOf : [])];
  return list.length > 0 ? list : undefined;
}

function compareUnions(c: Ctx, bo: unknown[], bn: unknown[], path: string, depth: number): void {
  // Old → new branch pairs that differ only compatibly (for this side) count as the same branch.
  // A branch pair's verdict depends on the two branches only (a fresh walk, its own recursion
  // guard), so it is computed once: nested unions would otherwise compare the same pairs again
  // and again.
  const verdict = (a: unknown, b: unknown): { readonly changed: boolean; readonly breaking: boolean } => {
    const memo = isRecord(a) && isRecord(b) ? c.branchMemo.get(a)?.get(b) : undefined;
    if (memo !== undefined) return memo;
    const probe: Ctx = { ...c, out: [], seen: new Set(), uses: new Map() };
    compare(probe, a, b, path, depth + 1);
    const v = { changed: probe.out.length > 0, breaking: probe.out.some((x) => x.breaking) };
    if (isRecord(a) && isRecord(b)) {
      let inner = c.branchMemo.get(a);
      if (inner === undefined) c.branchMemo.set(a, (inner = new WeakMap()));
      inner.set(b, v);
    }
    return v;
  };
  const fine = (a: unknown, b: unknown): boolean => !verdict(a, b).breaking;
  // The same branch: no change at all (a description edit is none).
  const eq = (a: unknown, b: unknown): boolean => !verdict(a, b).changed;
  if (c.side === "input") {
    const lost = bo.filter((a) => !bn.some((b) => fine(a, b)));
    const added = bn.filter((b) => !bo.some((a) => eq(a, b)));
    if (lost.length > 0) change(c, path, "union_narrowed", true, `${lost.length} union branch(es) removed or narrowed`);
    else if (added.length > 0) change(c, path, "union_widened", false, `${added.length} union branch(es) added or widened`);
  } else {
    const uncovered = bn.filter((b) => !bo.some((a) => fine(a, b)));
    const dropped = bo.filter((a) => !bn.some((b) => eq(a, b)));
    if (uncovered.length > 0) change(c, path, "union_widened", false, `${uncovered.length} union branch(es) added or widened`);
    else if (dropped.length > 0) change(c, path, "union_narrowed", true, `${dropped.length} union branch(es) removed or narrowed`);
  }
}

/**
 * Compare two snapshots (old → new). Throws {@link ToolgateConfigError} `E_CHECK_OPTIONS` when
 * either is not a toolgate contracts snapshot this version reads ({@link parseSnapshot}).
 * @example
 * const report = compareSnapshots(JSON.parse(readFileSync("contracts.json", "utf8")), snapshotOf(gate.list()));
 * for (const t of report.tools) if (!t.ok) console.log(t.name, t.changes.filter((c) => c.breaking));
 */
export function compareSnapshots(prev: ContractSnapshot, next: ContractSnapshot): BreakingReport {
  // Either may come from a file: a snapshot of another format or version is refused, not compared.
  for (const [which, s] of [["prev", prev], ["next", next]] as const) {
    const parsed = parseSnapshot(s);
    if (!parsed.ok) throw new ToolgateConfigError("E_CHECK_OPTIONS", `compareSnapshots: ${which}: ${parsed.reason}`);
  }
  const tools: ToolChanges[] = [];
  const names = [...new Set([...Object.keys(prev.tools), ...Object.keys(next.tools)])].sort();
  for (const name of names) {
    const a = prev.tools[name];
    const b = next.tools[name];
    if (b === undefined) {
      const changes: ContractChange[] = [{ side: "tool", path: "", kind: "tool_removed", breaking: true, detail: `tool ${name} removed` }];
      tools.push({ name, oldVersion: a?.version ?? null, newVersion: null, changes, breaking: true, versionBumped: false, ok: false });
      continue;
    }
    if (a === undefined) {
      const changes: ContractChange[] = [{ side: "tool", path: "", kind: "tool_added", breaking: false, detail: `tool ${name} added` }];
      tools.push({ name, oldVersion: null, newVersion: b.version, changes, breaking: false, versionBumped: false, ok: true });
      continue;
    }
    const changes: ContractChange[] = [];
    if (typeof a.effect === "string" && typeof b.effect === "string" && a.effect !== b.effect) {
      // Retries, idempotency keys and the ledger follow the effect: every caller's assumptions change.
      changes.push({ side: "tool", path: "", kind: "effect_changed", breaking: true, detail: `effect ${a.effect} → ${b.effect}` });
    }
    compare(sideCtx("input", a.inputSchema, b.inputSchema, changes), a.inputSchema, b.inputSchema, "", 0);
    if (a.outputSchema !== undefined && b.outputSchema === undefined) {
      changes.push({ side: "output", path: "", kind: "output_schema_removed", breaking: true, detail: "(root): output schema no longer advertised" });
    } else if (a.outputSchema !== undefined && b.outputSchema !== undefined) {
      compare(sideCtx("output", a.outputSchema, b.outputSchema, changes), a.outputSchema, b.outputSchema, "", 0);
    }
    const breaking = changes.some((x) => x.breaking);
    const bumped = versionBumped(a.version, b.version);
    tools.push({ name, oldVersion: a.version, newVersion: b.version, changes, breaking, versionBumped: bumped, ok: !breaking || bumped });
  }
  return { ok: tools.every((t) => t.ok), tools };
}
