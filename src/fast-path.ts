/**
 * Compiled fast path for a subset of zod 4 schemas: one generated function (`new Function`) that
 * fuses the payload hardening of `harden.ts`, the schema's validation and the unknown-key refusal.
 * It only ever says "yes, and here is exactly what zod's parse returns" or {@link NO} ("run the
 * normal path"): every doubt — an unusual object, an extra key, a thrown getter — is a NO, so the
 * normal path stays the one that decides and reports failures.
 * @module
 */
import { types } from "node:util";
import { $ZodCheckMinLength, globalConfig, version as zodVersion } from "zod/v4/core";
import { jsonNumberSize, jsonStringSize, type CompiledLimits } from "./harden.js";
import { MAX_OUTPUT_VALUES } from "./json-data.js";

/**
 * "Cannot decide here": the caller runs the normal path (harden, validate, unknown keys).
 * @example
 * const r = fast(args);
 * if (r === NO) slowPath(args);
 */
export const NO: unique symbol = Symbol("toolgate.fast-path.no");

/**
 * The limits the fused input function enforces: the same as {@link CompiledLimits}.
 * @example
 * const limits: FastLimits = compileLimits(DEFAULT_LIMITS);
 */
export type FastLimits = CompiledLimits;

/** A zod 4 internal node, read defensively. */
interface Node {
  readonly _zod: { readonly def: Record<string, unknown>; readonly traits: ReadonlySet<string>; readonly version?: { major: number }; readonly optin?: string; readonly optout?: string; readonly values?: ReadonlySet<unknown> };
}
type Def = Record<string, unknown>;

/** zod's own `when` for length checks (always true for strings and arrays): the only `when` accepted. */
const BUILTIN_WHEN: unknown = (() => {
  try {
    return (new $ZodCheckMinLength({ check: "min_length", minimum: 0 }) as unknown as Node)._zod.def.when;
  } catch {
    return undefined;
  }
})();

/** `isWellFormed`, with short strings scanned in JS (cheaper than the builtin call for them). */
function wellFormed(s: string): boolean {
  const n = s.length;
  if (n > 32) return s.isWellFormed();
  for (let i = 0; i < n; i++) if ((s.charCodeAt(i) & 0xf800) === 0xd800) return s.isWellFormed();
  return true;
}

/** Unicode code points, as zod 4.6 counts string lengths (a lone surrogate counts as one). */
function codePoints(s: string): number {
  const n = s.length;
  let count = n;
  for (let i = 0; i < n - 1; i++) {
    if ((s.charCodeAt(i) & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}

/** Static nesting cap for generated code (the input side also stops at `limits.maxDepth`). */
const MAX_GEN_DEPTH = 32;
const MAX_LINES = 4000;
const MAX_INLINE_VALUES = 8;
const NUMBER_FORMAT = ["$ZodNumberFormat", "$ZodCheckNumberFormat", "$ZodCheck", "$ZodNumber", "$ZodType"];

function unsupported(): never {
  throw new Error("outside the fast path's subset");
}

interface Emit {
  readonly input: boolean;
  readonly limits: FastLimits | undefined;
  readonly maxDepth: number;
  readonly lines: string[];
  readonly consts: unknown[];
  n: number;
}

const lit = (v: string): string => JSON.stringify(v);
function num(v: number): string {
  if (Number.isNaN(v)) unsupported();
  return v === Infinity ? "(1/0)" : v === -Infinity ? "(-1/0)" : String(v);
}
const konst = (e: Emit, v: unknown): string => `K[${e.consts.push(v) - 1}]`;
const fresh = (e: Emit, p: string): string => `${p}${e.n++}`;

function asNode(s: unknown): Node {
  const z = (s as Partial<Node> | null)?._zod;
  if (z === undefined || typeof z !== "object" || z.def === undefined || !(z.traits instanceof Set)) unsupported();
  return s as Node;
}

/** The def has only the keys listed (plus `error`, which changes messages only); `coerce` must be off. */
function keysOnly(def: Def, allowed: readonly string[]): void {
  for (const k of Object.getOwnPropertyNames(def)) {
    if (k === "error") continue;
    if (k === "coerce" && !def.coerce) continue;
    if (!allowed.includes(k)) unsupported();
  }
  if (Object.getOwnPropertySymbols(def).length > 0) unsupported();
}

/** The node's zod core traits are exactly `core` (classic names without `$` are fine), its def keys within `keys`. */
function shaped(node: Node, core: readonly string[], keys: readonly string[]): Def {
  for (const t of node._zod.traits) if (t.startsWith("$") && !core.includes(t)) unsupported();
  for (const t of core) if (!node._zod.traits.has(t)) unsupported();
  keysOnly(node._zod.def, keys);
  return node._zod.def;
}

function checksOf(def: Def): Node[] {
  const c = def.checks;
  if (c === undefined) return [];
  if (!Array.isArray(c)) unsupported();
  return c.map(asNode);
}

const LENGTH_CHECKS: Record<string, readonly [trait: string, key: string]> = {
  min_length: ["$ZodCheckMinLength", "minimum"],
  max_length: ["$ZodCheckMaxLength", "maximum"],
  length_equals: ["$ZodCheckLengthEquals", "length"],
};

/**
 * Length checks: arrays count elements, strings count code points exactly as zod 4.6 does (its
 * shortcuts on UTF-16 units included: a code point is one or two units).
 */
function lengthChecks(e: Emit, checks: readonly Node[], v: string, u: string, isString: boolean): void {
  for (const ch of checks) {
    const d = ch._zod.def;
    const kind = LENGTH_CHECKS[String(d.check)];
    if (kind === undefined || typeof d[kind[1]] !== "number" || BUILTIN_WHEN === undefined || d.when !== BUILTIN_WHEN || (d.abort !== undefined && d.abort !== false)) unsupported();
    shaped(ch, [kind[0], "$ZodCheck"], ["check", kind[1], "when", "abort"]);
    const n = d[kind[1]] as number;
    const [m, m2] = [num(n), num(n * 2)];
    const fail = !isString
      ? `${u} ${d.check === "min_length" ? "<" : d.check === "max_length" ? ">" : "!=="} ${m}`
      : d.check === "min_length"
        ? `${u} < ${m} || (${u} < ${m2} && cpl(${v}) < ${m})`
        : d.check === "max_length"
          ? `${u} > ${m} && cpl(${v}) > ${m}`
          : `${u} < ${m} || ${u} > ${m2} || cpl(${v}) !== ${m}`;
    e.lines.push(`if (${fail}) return NO;`);
  }
}

/** Size accounting, mirroring hardenWalk: add and test at once (only on the input side). */
function grow(e: Emit, by: string): void {
  if (e.input) e.lines.push(`s += ${by}; if (s > M) return NO;`);
}

/**
 * Value counting, mirroring notJsonData's limit (only on the output side): one more value in the
 * output, tested after each array and at the end (past the limit the schema path decides).
 */
function tally(e: Emit): void {
  if (!e.input) e.lines.push("t++;");
}

/** Emit code that validates `v` against `schema` and returns the name of the parsed value. */
function gen(e: Emit, schema: unknown, v: string, depth: number): string {
  const node = asNode(schema);
  const def = node._zod.def;
  const L = e.lines;
  if (L.length > MAX_LINES) unsupported(); // e.g. a recursive schema: keep the generated code small
  switch (def.type) {
    case "string": {
      shaped(node, ["$ZodString", "$ZodType"], ["type", "checks"]);
      L.push(`if (typeof ${v} !== "string") return NO;`);
      grow(e, `jss(${v})`);
      tally(e);
      if (e.input) L.push(`if (!wf(${v})) return NO;`);
      const checks = checksOf(def);
      if (checks.length > 0) {
        const u = fresh(e, "u");
        L.push(`const ${u} = ${v}.length;`);
        lengthChecks(e, checks, v, u, true);
      }
      return v;
    }
    case "number": {
      const checks = checksOf(def);
      if (node._zod.traits.has("$ZodCheck")) {
        shaped(node, NUMBER_FORMAT, ["type", "checks", "check", "format", "abort"]);
        checks.unshift(node); // z.int(): the schema is its own number_format check
      } else shaped(node, ["$ZodNumber", "$ZodType"], ["type", "checks"]);
      L.push(`if (typeof ${v} !== "number" || ${v} - ${v} !== 0) return NO;`);
      tally(e);
      if (e.input) {
        if (e.limits?.allowUnsafeIntegers !== true) L.push(`if (${v} > 9007199254740991 || ${v} < -9007199254740991) return NO;`);
        L.push(`s += jns(${v});`);
      }
      for (const ch of checks) {
        const d = ch._zod.def;
        if (d.when !== undefined || (d.abort !== undefined && d.abort !== false)) unsupported();
        if (d.check === "number_format") {
          if (d.format !== "safeint") unsupported();
          if (ch !== node) shaped(ch, NUMBER_FORMAT, ["type", "check", "format", "abort"]);
          L.push(`if (!Number.isSafeInteger(${v})) return NO;`);
        } else if ((d.check === "greater_than" || d.check === "less_than") && typeof d.value === "number" && typeof d.inclusive === "boolean") {
          shaped(ch, [d.check === "greater_than" ? "$ZodCheckGreaterThan" : "$ZodCheckLessThan", "$ZodCheck"], ["check", "value", "inclusive", "abort"]);
          const op = d.check === "greater_than" ? (d.inclusive ? ">=" : ">") : d.inclusive ? "<=" : "<";
          L.push(`if (!(${v} ${op} ${num(d.value)})) return NO;`);
        } else unsupported();
      }
      return v;
    }
    case "boolean":
      shaped(node, ["$ZodBoolean", "$ZodType"], ["type"]);
      L.push(`if (typeof ${v} !== "boolean") return NO;${e.input ? ` s += ${v} ? 4 : 5;` : " t++;"}`);
      return v;
    case "null":
      shaped(node, ["$ZodNull", "$ZodType"], ["type"]);
      L.push(`if (${v} !== null) return NO;${e.input ? " s += 4;" : " t++;"}`);
      return v;
    case "enum":
    case "literal": {
      shaped(node, [def.type === "enum" ? "$ZodEnum" : "$ZodLiteral", "$ZodType"], ["type", def.type === "enum" ? "entries" : "values"]);
      const values = node._zod.values;
      if (!(values instanceof Set)) unsupported();
      tally(e);
      return genValues(e, [...values], v);
    }
    case "array": {
      shaped(node, ["$ZodArray", "$ZodType"], ["type", "element", "checks"]);
      if (depth + 1 > e.maxDepth) unsupported();
      const [n, o, i, el] = [fresh(e, "n"), fresh(e, "o"), fresh(e, "i"), fresh(e, "e")];
      L.push(e.input ? `if (!Array.isArray(${v}) || isProxy(${v}) || Object.getPrototypeOf(${v}) !== Array.prototype) return NO;` : `if (!Array.isArray(${v})) return NO;`, `const ${n} = ${v}.length;`);
      grow(e, `2 + ${n}`);
      tally(e);
      lengthChecks(e, checksOf(def), v, n, false);
      L.push(`const ${o} = [];`, `for (let ${i} = 0; ${i} < ${n}; ${i}++) {`, `const ${el} = ${v}[${i}];`);
      const r = gen(e, def.element, el, depth + 1);
      // An element getter may grow or shrink the array while it is read (zod reads the length each turn).
      L.push(`${o}.push(${r});`, `}`, `if (${v}.length !== ${n}) return NO;`);
      if (!e.input) L.push("if (t > MV) return NO;");
      return o;
    }
    case "object":
      return genObject(e, node, v, depth);
    case "optional": // a present (non-undefined) value: optional is transparent, and default never applies
      shaped(node, ["$ZodOptional", "$ZodType"], ["type", "innerType"]);
      return gen(e, def.innerType, v, depth);
    case "default":
      shaped(node, ["$ZodDefault", "$ZodType"], ["type", "innerType", "defaultValue"]);
      return gen(e, def.innerType, v, depth);
    case "nullable": {
      shaped(node, ["$ZodNullable", "$ZodType"], ["type", "innerType"]);
      const r = fresh(e, "r");
      L.push(`let ${r};`, `if (${v} === null) { ${e.input ? "s += 4; " : "t++; "}${r} = null; } else {`);
      const inner = gen(e, def.innerType, v, depth);
      L.push(`${r} = ${inner};`, `}`);
      return r;
    }
    default:
      return unsupported();
  }
}

/** Enum and literal values: `===` (SameValueZero for the kept values), with each value's JSON size. */
function genValues(e: Emit, values: unknown[], v: string): string {
  const sized = new Map<unknown, number>();
  for (const x of values) {
    if (typeof x === "string") {
      if (!e.input || x.isWellFormed()) sized.set(x, jsonStringSize(x));
    } else if (typeof x === "number") {
      const safe = e.limits?.allowUnsafeIntegers === true || Math.abs(x) <= Number.MAX_SAFE_INTEGER;
      if (Number.isFinite(x) && (!e.input || safe)) sized.set(x, jsonNumberSize(x));
    } else if (typeof x === "boolean") sized.set(x, x ? 4 : 5);
    else if (x === null) sized.set(x, 4);
    // undefined, NaN, bigint, symbols: never accepted here (the normal path decides)
  }
  if (sized.size <= MAX_INLINE_VALUES) {
    const arms = [...sized].map(([x, size]) => `${v} === ${typeof x === "string" ? lit(x) : x === null ? "null" : typeof x === "number" ? num(x) : String(x)}${e.input ? ` ? ${size}` : " ? 0"}`);
    e.lines.push(`{ const z = ${arms.length === 0 ? "-1" : `${arms.join(" : ")} : -1`}; if (z < 0) return NO; ${e.input ? "s += z;" : ""} }`);
  } else {
    e.lines.push(`{ const z = ${konst(e, sized)}.get(${v}); if (z === undefined) return NO; ${e.input ? "s += z;" : ""} }`);
  }
  return v;
}

/** What zod does with an absent key: fail, leave it out, set `undefined`, or take a default. */
type Absent = { kind: "fail" } | { kind: "omit" } | { kind: "undefined" } | { kind: "default"; def: Def; ifUndefined: "omit" | "undefined" };

/** Mirrors zod 4.6's handlePropertyResult (optin/optout) over what `run(undefined)` yields. */
function absentOf(field: Node): Absent {
  const { optin, optout } = field._zod;
  if (optout === "optional" && optin === "optional") return { kind: "omit" };
  const r = runUndefined(field);
  if (r.kind === "issue") return optin !== undefined && optout === "optional" ? { kind: "omit" } : { kind: "fail" };
  if (optin === undefined) return { kind: "fail" };
  const ifUndefined = optin === "defaulted" && optout !== "optional" ? "undefined" : "omit";
  if (r.kind === "undefined") return { kind: ifUndefined === "undefined" ? "undefined" : "omit" };
  return { kind: "default", def: r.def, ifUndefined };
}

/** What `field._zod.run({ value: undefined })` gives in the supported subset (the wrappers' own rules). */
function runUndefined(node: Node): { kind: "issue" } | { kind: "undefined" } | { kind: "default"; def: Def } {
  const def = node._zod.def;
  const inner = (): Node => asNode(def.innerType);
  if (def.type === "optional") return inner()._zod.optin !== "defaulted" ? { kind: "undefined" } : runUndefined(inner());
  if (def.type === "nullable") return runUndefined(inner());
  if (def.type === "default") {
    const probe: unknown = def.defaultValue; // compile-time probe: object defaults are left to the normal path
    if (probe !== null && (typeof probe === "object" || typeof probe === "function")) unsupported();
    return { kind: "default", def };
  }
  return { kind: "issue" };
}

function genObject(e: Emit, node: Node, v: string, depth: number): string {
  const def = node._zod.def;
  shaped(node, node._zod.traits.has("$ZodObjectJIT") ? ["$ZodObjectJIT", "$ZodObject", "$ZodType"] : ["$ZodObject", "$ZodType"], ["type", "shape", "catchall", "checks"]);
  if (checksOf(def).length > 0) unsupported();
  if (def.catchall !== undefined) {
    const t = asNode(def.catchall)._zod.def.type;
    if (t !== "never" && t !== "unknown") unsupported();
  }
  if (depth + 1 > e.maxDepth) unsupported();
  const shape = def.shape as Record<string, unknown>;
  if (shape === null || typeof shape !== "object" || Object.getOwnPropertySymbols(shape).length > 0) unsupported();
  const keys = Object.keys(shape);
  for (const k of keys) {
    if (k in Object.prototype || !k.isWellFormed() || (e.input && e.limits?.forbidden.has(k) === true)) unsupported();
  }
  const L = e.lines;
  const c = fresh(e, "c");
  const absents = new Map(keys.map((k) => [k, absentOf(asNode(shape[k]))]));
  const required = keys.filter((k) => absents.get(k)!.kind === "fail").length;
  L.push(`if (typeof ${v} !== "object" || ${v} === null || Array.isArray(${v})) return NO;`);
  tally(e);
  if (e.input) {
    const p = fresh(e, "p");
    L.push(`if (isProxy(${v})) return NO;`, `const ${p} = Object.getPrototypeOf(${v}); if (${p} !== Object.prototype && ${p} !== null) return NO;`);
  }
  // Enumerable keys (own or inherited) must all be shape keys, and as many as the present ones:
  // an extra key, an own key holding undefined or a non-enumerable shape key all give NO. The
  // output side of a stripping object drops extra keys exactly as zod does, so it skips this.
  const countKeys = e.input || (def.catchall !== undefined);
  const ks = fresh(e, "k");
  let seen: Map<string, string> | undefined;
  if (countKeys) {
    // Input side: own keys only (hardening copies own keys; an inherited one — a polluted
    // Object.prototype — must not slip in through the shape read below).
    const own = e.input ? `if (!Object.hasOwn(${v}, j)) return NO; ` : "";
    // Which shape keys are enumerable, each: a non-enumerable one read below, beside an own key
    // holding undefined, would otherwise leave the count even (one too many on each side).
    const flags = keys.map((k) => [k, fresh(e, "f")] as const);
    seen = new Map(flags);
    if (flags.length > 0) L.push(`let ${flags.map(([, f]) => `${f} = false`).join(", ")};`);
    L.push(`let ${ks} = 0;`, `for (const j in ${v}) { ${own}${keys.length === 0 ? "" : `switch (j) { ${flags.map(([k, f]) => `case ${lit(k)}: ${f} = true; break;`).join(" ")} default: return NO; } ${ks}++; continue;`} return NO; }`);
  }
  L.push(`let ${c} = ${required};`);
  if (e.input) L.push(`s += 2;`);
  const parts: { key: string; val: string; always: boolean }[] = [];
  for (const k of keys) {
    const field = asNode(shape[k]);
    const absent = absents.get(k)!;
    const x = fresh(e, "x");
    L.push(`const ${x} = ${v}[${lit(k)}];`);
    const f = seen?.get(k);
    if (absent.kind === "fail") {
      // required: absent, undefined or not enumerable is the normal path's to report
      L.push(f === undefined ? `if (${x} === undefined) return NO;` : `if (${x} === undefined || !${f}) return NO;`);
      if (e.input) L.push(`s += ${jsonStringSize(k) + 2};`);
      parts.push({ key: k, val: gen(e, field, x, depth + 1), always: true });
      continue;
    }
    const r = fresh(e, "r");
    L.push(`let ${r} = NO;`, `if (${x} === undefined) {`);
    // An own key holding undefined is the normal path's (with the count, its flag says so; without, ask `in`).
    L.push(f === undefined ? `if (${lit(k)} in ${v}) return NO;` : `if (${f}) return NO;`);
    if (absent.kind === "undefined") L.push(`${r} = undefined;`);
    if (absent.kind === "default") {
      // read the default as zod does, once per parse (a function default runs each time)
      const d = fresh(e, "d");
      L.push(`const ${d} = ${konst(e, absent.def)}.defaultValue;`, `if (${d} !== null && (typeof ${d} === "object" || typeof ${d} === "function")) return NO;`);
      // An output's data is JSON (src/json-data.ts): a default JSON cannot carry is the schema path's to refuse.
      if (!e.input) L.push(`if (typeof ${d} === "bigint" || typeof ${d} === "symbol" || (typeof ${d} === "number" && !Number.isFinite(${d}))) return NO;`);
      L.push(absent.ifUndefined === "omit" ? `if (${d} !== undefined) ${r} = ${d};` : `${r} = ${d};`);
      if (!e.input) L.push(`if (${d} !== undefined) t++;`); // a default is one more value of the output
    }
    L.push(`} else {`, f === undefined ? `${c}++;` : `if (!${f}) return NO; ${c}++;`);
    if (e.input) L.push(`s += ${jsonStringSize(k) + 2};`);
    const val = gen(e, field, x, depth + 1);
    L.push(`${r} = ${val};`, `}`);
    parts.push({ key: k, val: r, always: absent.kind === "undefined" || (absent.kind === "default" && absent.ifUndefined === "undefined") });
  }
  if (countKeys) L.push(`if (${ks} !== ${c}) return NO;`);
  const o = fresh(e, "o");
  if (parts.every((q) => q.always)) {
    L.push(`const ${o} = { ${parts.map((q) => `${lit(q.key)}: ${q.val}`).join(", ")} };`);
  } else {
    L.push(`const ${o} = {};`);
    for (const q of parts) L.push(q.always ? `${o}[${lit(q.key)}] = ${q.val};` : `if (${q.val} !== NO) ${o}[${lit(q.key)}] = ${q.val};`);
  }
  return o;
}

function compile(schema: unknown, input: boolean, limits: FastLimits | undefined): ((value: unknown) => unknown) | undefined {
  const root = (schema as Partial<Node> | null)?._zod;
  // The rules mirrored here are zod 4.6's (e.g. lengths in code points); `jitless` asks for no codegen.
  if (root === undefined || root.version?.major !== zodVersion.major || (root.version as { minor?: number }).minor !== zodVersion.minor) return undefined;
  if (globalConfig.jitless === true) return undefined;
  const e: Emit = { input, limits, maxDepth: Math.min(limits?.maxDepth ?? MAX_GEN_DEPTH, MAX_GEN_DEPTH), lines: [], consts: [], n: 0 };
  let result: string;
  try {
    result = gen(e, schema, "v", 0);
  } catch {
    return undefined; // outside the subset (or a schema getter threw): the normal path only
  }
  const body = `return function fastPath(v) {\ntry {\n${input ? "let s = 0;" : "let t = 0;"}\n${e.lines.join("\n")}\n${input ? "if (s > M) return NO;" : "if (t > MV) return NO;"}\nreturn ${result};\n} catch { return NO; }\n};`;
  try {
    const factory = new Function("NO", "isProxy", "cpl", "wf", "K", "M", "MV", "jss", "jns", body) as (...a: unknown[]) => (value: unknown) => unknown;
    return factory(NO, types.isProxy, codePoints, wellFormed, e.consts, limits?.maxBytes ?? Infinity, MAX_OUTPUT_VALUES, jsonStringSize, jsonNumberSize);
  } catch {
    return undefined; // code generation refused (CSP-like environments)
  }
}

/**
 * Compile the input side: hardening (as `hardenValue`), validation and the unknown-key refusal,
 * fused. The function returns exactly the value zod's parse would produce (a fresh copy), or
 * {@link NO} whenever the normal path must decide. `undefined` when the schema is outside the
 * supported subset, is not zod 4, is deeper than `limits.maxDepth`, or code generation is unavailable.
 * @example
 * const fast = compileFastInput(GetOrderInput, compileLimits(DEFAULT_LIMITS));
 * const r = fast?.({ customerId: "c_1" }); // { customerId: "c_1", includeHistory: false }
 */
export function compileFastInput(schema: unknown, limits: FastLimits): ((value: unknown) => unknown) | undefined {
  return compile(schema, true, limits);
}

/**
 * Compile the output side: validation only (no hardening). Returns zod's parsed value (a fresh
 * copy) or {@link NO}: an own `undefined` value, or an extra key on a strict or loose object, is
 * NO; a stripping object drops extra keys as zod does. A value holding more than
 * `MAX_OUTPUT_VALUES` values (src/json-data.ts, counted as JSON writes them) is NO too: the schema
 * path refuses it. `undefined` when unsupported.
 * @example
 * const fast = compileFastOutput(GetOrderOutput);
 * const r = fast?.({ found: false, customerId: "c_1", orders: [] });
 */
export function compileFastOutput(schema: unknown): ((value: unknown) => unknown) | undefined {
  return compile(schema, false, undefined);
}
