/**
 * Opt-in capture of arguments and results, redacted before anything is kept: fields the tool's
 * JSON Schema marks secret are replaced whole, every other string (and key) goes through the
 * secret patterns, and the walk is bounded in depth, nodes and length whatever it is given.
 * @module
 */
import type { ToolListing } from "../json-schema.js";
import { isRecord } from "../_record.js";
import { _jsonWrittenValue } from "../json-data.js"; // what JSON writes: a field a class's toJSON hides stays out of the capture too
import { _isSecretKeyName, _redactThenCut, truncate, type Redactor } from "../redact.js";

/** What to record besides the call's decision. Default: nothing. */
export interface CaptureOptions {
  /** Record the arguments (without `_meta`) of calls whose input was accepted. Default `false`. */
  readonly arguments?: boolean;
  /** Record the data of successful calls. Default `false`. */
  readonly result?: boolean;
  /** Cap of each captured JSON text, in characters. Default 4,096. */
  readonly maxLength?: number;
}

/**
 * What stands in for a secret field's value.
 * @example JSON.parse(args).password === SECRET_PLACEHOLDER
 */
export const SECRET_PLACEHOLDER = "[REDACTED]";

type JsonObject = Record<string, unknown>;

const MAX_DEPTH = 64;
const MAX_NODES = 2_000;
const MAX_STRING = 1_024;
/**
 * How much of one string is redacted before the cut to {@link MAX_STRING}: redacting first means a
 * secret straddling the cut is still recognised whole. Bounded so a many-megabyte string costs
 * no more than this; a secret would have to start before the cut and run past this window to be
 * seen only in part (and open-ended patterns still match such a prefix).
 */
const REDACT_WINDOW = 65_536;

/**
 * A schema node marks its value secret through metadata: `secret`, `x-secret`, `writeOnly` or `format: "password"`.
 * @example isSecretSchema(z.string().meta({ secret: true })["~standard"].jsonSchema.input({ target: "draft-2020-12" })) // true
 */
export function isSecretSchema(s: JsonObject): boolean {
  return s.secret === true || s["x-secret"] === true || s.writeOnly === true || s.format === "password";
}

/** Resolve `$ref` (local pointers only) and flatten `allOf`/`anyOf`/`oneOf`: every schema that may apply. */
function expand(s: unknown, root: JsonObject, out: JsonObject[], seen: Set<unknown>): void {
  if (!isRecord(s) || seen.has(s) || out.length > 64) return;
  seen.add(s);
  out.push(s);
  if (typeof s.$ref === "string") expand(resolveRef(s.$ref, root), root, out, seen);
  for (const k of ["allOf", "anyOf", "oneOf"] as const) {
    const list = s[k];
    if (Array.isArray(list)) for (const b of list) expand(b, root, out, seen);
  }
}

function resolveRef(ref: string, root: JsonObject): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let cur: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isRecord(cur) || !Object.hasOwn(cur, seg)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

function childrenForKey(schemas: readonly JsonObject[], key: string): JsonObject[] {
  const out: JsonObject[] = [];
  for (const s of schemas) {
    const props = s.properties;
    if (isRecord(props) && Object.hasOwn(props, key) && isRecord(props[key])) {
      out.push(props[key]);
      continue;
    }
    const pattern = s.patternProperties;
    let matched = false;
    if (isRecord(pattern)) {
      for (const [re, sub] of Object.entries(pattern)) {
        try {
          if (isRecord(sub) && new RegExp(re, "u").test(key)) {
            out.push(sub);
            matched = true;
          }
        } catch {
          // an invalid pattern marks nothing
        }
      }
    }
    if (!matched && isRecord(s.additionalProperties)) out.push(s.additionalProperties);
  }
  return out;
}

function childrenForIndex(schemas: readonly JsonObject[], i: number): JsonObject[] {
  const out: JsonObject[] = [];
  for (const s of schemas) {
    const prefix = s.prefixItems;
    if (Array.isArray(prefix) && i < prefix.length && isRecord(prefix[i])) out.push(prefix[i] as JsonObject);
    else if (isRecord(s.items)) out.push(s.items);
  }
  return out;
}

interface Walk {
  readonly root: JsonObject | undefined;
  readonly redact: Redactor;
  nodes: number;
}

/** What JSON does not write: in an object the key is left out, in an array it is null. */
function absentInJson(v: unknown): boolean {
  return v === undefined || typeof v === "function" || typeof v === "symbol";
}

function walk(v: unknown, direct: readonly JsonObject[], st: Walk, depth: number, skipKey?: string): unknown {
  const schemas: JsonObject[] = [];
  if (st.root !== undefined) for (const s of direct) expand(s, st.root, schemas, new Set());
  if (schemas.some(isSecretSchema)) return v === null ? null : SECRET_PLACEHOLDER; // a null holds no secret
  if (++st.nodes > MAX_NODES || depth > MAX_DEPTH) return "[TRUNCATED]";
  switch (typeof v) {
    case "string":
      return _redactThenCut(st.redact, v, MAX_STRING, REDACT_WINDOW);
    case "number":
    case "boolean":
      return v;
    case "object": {
      if (v === null) return null;
      if (Array.isArray(v)) {
        const out: unknown[] = [];
        for (let i = 0; i < v.length; i++) {
          if (st.nodes > MAX_NODES) {
            out.push("[TRUNCATED]");
            break;
          }
          const item = _jsonWrittenValue(v[i], String(i));
          out.push(absentInJson(item) ? null : walk(item, childrenForIndex(schemas, i), st, depth + 1)); // JSON writes null there
        }
        return out;
      }
      const out: JsonObject = {};
      let n = 0;
      for (const key of Object.keys(v)) {
        if (key === skipKey) continue;
        if (st.nodes > MAX_NODES) {
          out["[TRUNCATED]"] = true;
          break;
        }
        const raw = (v as JsonObject)[key];
        const child = _jsonWrittenValue(raw, key);
        if (absentInJson(child)) continue; // JSON leaves the key out (an own toJSON method among them)
        const safeKey = _redactThenCut(st.redact, key, 200, REDACT_WINDOW);
        const name = Object.hasOwn(out, safeKey) ? `${safeKey}#${++n}` : safeKey;
        // A value under a secret key name (`password`, `x-api-key`, `DATABASE_PASSWORD`) is a secret
        // whatever its shape: the text patterns only see `"key":"value"` in text, never here.
        Object.defineProperty(out, name, {
          value: _isSecretKeyName(key) && child !== null ? SECRET_PLACEHOLDER : walk(child, childrenForKey(schemas, key), st, depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    default:
      return "[UNSUPPORTED]";
  }
}

/**
 * Redact one value for capture and serialize it, at most `maxLength` characters. Never throws:
 * anything it cannot walk (a proxy, a getter that throws) is captured as `"[UNAVAILABLE]"`.
 */
export function captureValue(value: unknown, schema: unknown, redact: Redactor, maxLength: number, skipTopKey?: string): string {
  try {
    const root = isRecord(schema) ? schema : undefined;
    const redacted = walk(_jsonWrittenValue(value, ""), root === undefined ? [] : [root], { root, redact, nodes: 0 }, 0, skipTopKey);
    return truncate(JSON.stringify(redacted) ?? "null", maxLength);
  } catch {
    return '"[UNAVAILABLE]"';
  }
}

/** The arguments of an accepted call, as the tool saw them: JSON text parsed, `_meta` dropped. */
export function captureArguments(args: unknown, listing: ToolListing | undefined, redact: Redactor, maxLength: number): string {
  let value: unknown = args;
  if (typeof args === "string") {
    try {
      value = JSON.parse(args);
    } catch {
      return '"[UNAVAILABLE]"';
    }
  }
  return captureValue(value, listing?.inputSchema, redact, maxLength, "_meta");
}

/** The data of a successful call, redacted by the output schema. */
export function captureResult(data: unknown, listing: ToolListing | undefined, redact: Redactor, maxLength: number): string {
  return captureValue(data, listing?.outputSchema, redact, maxLength);
}

/**
 * A JSON value (as `JSON.parse` returns it) with every field `schema` marks secret replaced by
 * {@link SECRET_PLACEHOLDER}, and nothing else changed: no bounds, nothing cut — for a stored
 * result that must replay whole (the ledger). A value the schema does not describe is kept.
 * @example maskSecretFields({ card: "4242", n: 1 }, { properties: { card: { type: "string", secret: true } } }) // { card: "[REDACTED]", n: 1 }
 */
export function maskSecretFields(value: unknown, schema: unknown): unknown {
  const root = isRecord(schema) ? schema : undefined;
  return root === undefined ? value : mask(value, [root], root);
}

function mask(v: unknown, direct: readonly JsonObject[], root: JsonObject): unknown {
  if (direct.length === 0) return v;
  const schemas: JsonObject[] = [];
  for (const s of direct) expand(s, root, schemas, new Set());
  if (schemas.some(isSecretSchema)) return v === null ? null : SECRET_PLACEHOLDER; // a null holds no secret
  if (Array.isArray(v)) return v.map((item, i) => mask(item, childrenForIndex(schemas, i), root));
  if (!isRecord(v)) return v;
  const out: JsonObject = {};
  for (const key of Object.keys(v)) {
    Object.defineProperty(out, key, { value: mask(v[key], childrenForKey(schemas, key), root), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
