/**
 * Payload limits that run before any schema: size, depth, forbidden keys, duplicate keys in JSON
 * text, lone surrogates, non-JSON and non-plain values. Each problem becomes one safe issue with
 * the path where it was found.
 * @module
 */
import { types } from "node:util";
import type { Issue } from "./result.js";
import { issue } from "./issues.js";
import { setOwn } from "./_record.js";

const isProxy = types.isProxy;

/** Limits applied to every payload before validation. */
export interface Limits {
  /** Serialized size cap: UTF-8 bytes of JSON text, or the estimated JSON length of a value. Default 1 MiB. */
  readonly maxBytes: number;
  /** Nesting cap (objects and arrays). Default 64; at most 1,000. */
  readonly maxDepth: number;
  /** Keys refused at any depth. Default `__proto__`, `constructor`, `prototype`. */
  readonly forbiddenKeys: readonly string[];
  /** Accept integers beyond ±2^53 (they lose precision in JSON). Default `false`. */
  readonly allowUnsafeIntegers: boolean;
}

/** The documented defaults. */
export const DEFAULT_LIMITS: Limits = Object.freeze({
  maxBytes: 1024 * 1024,
  maxDepth: 64,
  forbiddenKeys: Object.freeze(["__proto__", "constructor", "prototype"]),
  allowUnsafeIntegers: false,
});

/** Limits compiled for the hot path. */
export interface CompiledLimits {
  readonly maxBytes: number;
  readonly maxDepth: number;
  readonly forbidden: ReadonlySet<string>;
  readonly allowUnsafeIntegers: boolean;
}

/** Compile limits once per gate. */
export function compileLimits(l: Limits): CompiledLimits {
  return {
    maxBytes: l.maxBytes,
    maxDepth: l.maxDepth,
    forbidden: new Set(l.forbiddenKeys),
    allowUnsafeIntegers: l.allowUnsafeIntegers,
  };
}

/** Outcome of hardening: the plain JSON-safe value, or the first problem found. */
export type Hardened = { ok: true; value: unknown } | { ok: false; reason: HardenReason; issue: Issue; path: string };

/** Why a payload was refused before validation. */
export type HardenReason = "json" | "limits";

const MSG = {
  json: "Arguments are not valid JSON",
  tooLarge: "Payload is larger than the limit",
  tooDeep: "Payload is nested deeper than the limit",
  cycle: "Payload contains a cycle",
  forbidden: "Key is not allowed",
  duplicate: "Key appears more than once",
  surrogate: "String contains a lone surrogate",
  nonFinite: "Number must be finite",
  unsafeInt: "Integer is beyond ±2^53 and would lose precision",
  nonJson: "Value is not representable in JSON",
  nonPlain: "Only plain objects and arrays are accepted",
} as const;

function refused(reason: HardenReason, path: string, code: string, message: string): Hardened {
  return { ok: false, reason, issue: issue(path, code, message), path }; // `path` whole: a redactor must see a secret key before any cut
}

/** Harden JSON text: size, then duplicate keys and depth (text scan), syntax, then the value walk. */
export function hardenText(text: string, limits: CompiledLimits): Hardened {
  const parsed = parseText(text, limits);
  return parsed.ok ? hardenParsed(parsed.value, limits) : parsed;
}

/**
 * The text half of {@link hardenText}: size, duplicate keys and depth (text scan), syntax. Its
 * value still needs {@link hardenParsed} (or a check that enforces the same rules).
 */
export function parseText(text: string, limits: CompiledLimits): Hardened {
  if (text.length > limits.maxBytes || (text.length * 3 > limits.maxBytes && Buffer.byteLength(text, "utf8") > limits.maxBytes)) {
    return refused("limits", "", "too_large", MSG.tooLarge);
  }
  // Scan first: a text nested 500,000 deep is refused after ~64 characters instead of parsed.
  const scanned = scanText(text, limits.maxDepth);
  if (scanned !== undefined) {
    // A duplicate key in text that is not JSON at all: say it is not JSON (fixing the key alone
    // would only lead to that answer next). The scan went on past the duplicate, so text that is
    // also too deep was refused as such and is never parsed.
    if (scanned.ok || scanned.issue.code !== "duplicate_key") return scanned;
    try {
      JSON.parse(text);
    } catch {
      return refused("json", "", "invalid_json", MSG.json);
    }
    return scanned;
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return refused("json", "", "invalid_json", MSG.json);
  }
}

/**
 * The value half of {@link hardenText}, for what `JSON.parse` returned (kept, not copied). The
 * size limit is not applied again: it held for the text's UTF-8 bytes, and the value estimate
 * (8 per number) would refuse texts the limit allows.
 */
export function hardenParsed(value: unknown, limits: CompiledLimits): Hardened {
  return hardenWalk(value, limits, false, Infinity);
}

interface Frame {
  keys: Set<string> | null;
  seg: string | number;
  expectKey: boolean;
}

/**
 * @internal Whether JSON text is the value `JSON.parse` makes of it: no key twice in one object
 * (the parse keeps the last) and no deeper than `maxDepth`. The loop compares such text as its
 * value; any other text only as text.
 */
export function _parsesAsWritten(text: string, maxDepth: number): boolean {
  return scanText(text, maxDepth) === undefined;
}

/**
 * One pass over JSON text for what JSON.parse hides: duplicate keys and depth. The first duplicate
 * is answered only once the whole text was scanned for depth (too deep wins: it is never parsed).
 */
function scanText(text: string, maxDepth: number): Hardened | undefined {
  const frames: Frame[] = [];
  let duplicate: Hardened | undefined;
  const n = text.length;
  const pathOf = (last?: string): string => {
    const segs = frames.slice(0, last === undefined ? frames.length : frames.length - 1).map((f) => String(f.seg));
    if (last !== undefined) segs.push(last);
    return segs.join(".");
  };
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      let escaped = false;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d === 0x5c /* \ */) {
          escaped = true;
          j += 2;
        } else if (d === 0x22) break;
        else j++;
      }
      const top = frames[frames.length - 1];
      if (top !== undefined && top.keys !== null && top.expectKey) {
        let key: string;
        try {
          key = escaped ? (JSON.parse(text.slice(i, j + 1)) as string) : text.slice(i + 1, j);
        } catch {
          return refused("json", "", "invalid_json", MSG.json);
        }
        if (top.keys.has(key)) duplicate ??= refused("limits", pathOf(key), "duplicate_key", MSG.duplicate);
        top.keys.add(key);
        top.seg = key;
        top.expectKey = false;
      }
      i = j;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (frames.length >= maxDepth) return refused("limits", pathOf(), "too_deep", MSG.tooDeep);
      frames.push(c === 0x7b ? { keys: new Set(), seg: "", expectKey: true } : { keys: null, seg: 0, expectKey: false });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      frames.pop();
    } else if (c === 0x2c /* , */) {
      const top = frames[frames.length - 1];
      if (top !== undefined) {
        if (top.keys !== null) top.expectKey = true;
        else top.seg = (top.seg as number) + 1;
      }
    }
  }
  return duplicate;
}

interface WalkState {
  size: number;
  /** The size limit of the walk: Infinity for parsed text, whose bytes were counted already. */
  readonly maxBytes: number;
  readonly limits: CompiledLimits;
  readonly ancestors: object[];
  /** Copy while walking (values from a caller); JSON.parse output is already plain and is kept. */
  readonly copy: boolean;
  code: string;
  message: string;
  /** The failing path, innermost segment first: made and filled only while a failure unwinds. */
  trail: (string | number)[] | undefined;
}

const FAIL: unique symbol = Symbol("toolgate.harden.fail");

/**
 * Harden a value: JSON-representable, plain, within size and depth, no forbidden keys. Never throws.
 * The result is a plain copy, each property read exactly once: a getter or a proxy cannot show
 * the walk one value and the schema (or the tool) another. Proxies are refused outright.
 */
export function hardenValue(value: unknown, limits: CompiledLimits): Hardened {
  return hardenWalk(value, limits, true, limits.maxBytes);
}

function hardenWalk(value: unknown, limits: CompiledLimits, copy: boolean, maxBytes: number): Hardened {
  if (value === undefined) return refused("limits", "", "non_json", MSG.nonJson);
  const st: WalkState = { size: 0, maxBytes, limits, ancestors: [], copy, code: "non_json", message: MSG.nonJson, trail: undefined };
  let out: unknown;
  try {
    out = walk(value, st);
  } catch {
    out = FAIL; // unreachable: every read that can throw is caught where it happens
  }
  if (out !== FAIL) return { ok: true, value: out };
  return refused("limits", st.trail === undefined ? "" : st.trail.reverse().join("."), st.code, st.message);
}

/**
 * A string's size in JSON text, in UTF-8 bytes, quotes included: what the size limit counts. Its
 * length alone would let "\u0001" (6 bytes as JSON) or "€" (3 bytes) pass at a sixth or a third of
 * their size, and a value (what MCP hands the gate) is not measured as text is.
 */
export function jsonStringSize(s: string): number {
  let n = s.length + 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) {
      if (c === 0x22 || c === 0x5c) n += 1; // \" and \\
    } else if (c < 0x20) n += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 1 : 5; // \n, or \u0001
    else if (c < 0x80) continue; // DEL: one byte
    else if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 2; // a surrogate pair: 4 bytes for 2 code units
      i++;
    } else n += 2;
  }
  return n;
}

/** A finite number's size in JSON text (`String(v)`), digits counted without making the string for the common integers. */
export function jsonNumberSize(v: number): number {
  if (Number.isInteger(v) && v > -1e15 && v < 1e15) {
    let n = v < 0 ? 2 : 1;
    const a = Math.abs(v);
    for (let t = 10; t <= a; t *= 10) n++;
    return n;
  }
  return String(v).length;
}

/** Record the problem; `at` is a segment below the current value (a key that was not walked into). */
function stop(st: WalkState, code: string, message: string, at?: string | number): typeof FAIL {
  st.code = code;
  st.message = message;
  if (at !== undefined) (st.trail ??= []).push(at);
  return FAIL;
}

function walk(v: unknown, st: WalkState): unknown {
  switch (typeof v) {
    case "string":
      st.size += jsonStringSize(v);
      if (st.size > st.maxBytes) return stop(st, "too_large", MSG.tooLarge);
      if (!v.isWellFormed()) return stop(st, "lone_surrogate", MSG.surrogate);
      return v;
    case "number":
      if (!Number.isFinite(v)) return stop(st, "non_finite", MSG.nonFinite);
      st.size += jsonNumberSize(v);
      if (st.size > st.maxBytes) return stop(st, "too_large", MSG.tooLarge);
      if (!st.limits.allowUnsafeIntegers && !Number.isSafeInteger(v) && Number.isInteger(v)) {
        return stop(st, "unsafe_integer", MSG.unsafeInt);
      }
      return v;
    case "boolean":
      st.size += v ? 4 : 5;
      if (st.size > st.maxBytes) return stop(st, "too_large", MSG.tooLarge);
      return v;
    case "object": {
      if (v === null) {
        st.size += 4;
        if (st.size > st.maxBytes) return stop(st, "too_large", MSG.tooLarge);
        return null;
      }
      if (st.copy && isProxy(v)) return stop(st, "non_plain_object", MSG.nonPlain);
      const anc = st.ancestors;
      if (anc.length >= st.limits.maxDepth) return anc.includes(v) ? stop(st, "cycle", MSG.cycle) : stop(st, "too_deep", MSG.tooDeep);
      if (anc.length > 0 && anc.includes(v)) return stop(st, "cycle", MSG.cycle);
      anc.push(v);
      const out = Array.isArray(v) ? walkArray(v, st) : walkObject(v, st);
      anc.pop();
      return out;
    }
    default:
      // undefined (in an array), bigint, symbol, function
      return stop(st, "non_json", MSG.nonJson);
  }
}

function walkArray(v: unknown[], st: WalkState): unknown {
  if (Object.getPrototypeOf(v) !== Array.prototype) return stop(st, "non_plain_object", MSG.nonPlain);
  const n = v.length;
  st.size += 2 + n;
  if (st.size > st.maxBytes) return stop(st, "too_large", MSG.tooLarge);
  const copy = st.copy;
  const out: unknown[] = copy ? new Array<unknown>(n) : v;
  for (let i = 0; i < n; i++) {
    if (!(i in v)) return stop(st, "non_json", MSG.nonJson, i);
    let item: unknown;
    try {
      item = v[i]; // read once: the copy holds exactly what was checked
    } catch {
      return stop(st, "non_json", MSG.nonJson, i); // a throwing getter: not plain data
    }
    const child = walk(item, st);
    if (child === FAIL) {
      (st.trail ??= []).push(i);
      return FAIL;
    }
    if (copy) out[i] = child;
  }
  return out;
}

function walkObject(v: object, st: WalkState): unknown {
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return stop(st, "non_plain_object", MSG.nonPlain);
  st.size += 2;
  const rec = v as Record<string, unknown>;
  const copy = st.copy;
  const out: Record<string, unknown> = copy ? {} : rec;
  const keys = Object.keys(rec);
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    if (st.limits.forbidden.has(key)) return stop(st, "forbidden_key", MSG.forbidden, key);
    if (!key.isWellFormed()) return stop(st, "lone_surrogate", MSG.surrogate, "<key>");
    let value: unknown;
    try {
      value = rec[key]; // read once: the copy holds exactly what was checked
    } catch {
      return stop(st, "non_json", MSG.nonJson, key); // a throwing getter: not plain data
    }
    if (value === undefined) continue; // absent, as JSON.stringify would drop it
    st.size += jsonStringSize(key) + 2; // the quoted key, its colon and a comma
    if (st.size > st.maxBytes) return stop(st, "too_large", MSG.tooLarge, key);
    const child = walk(value, st);
    if (child === FAIL) {
      (st.trail ??= []).push(key);
      return FAIL;
    }
    if (copy) setOwn(out, key, child);
  }
  return out;
}
