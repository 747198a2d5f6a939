/**
 * Small JSON Schema helpers shared by the targets, the generators and the diff: type guards,
 * local `$ref` resolution, "does this schema accept null", path joining.
 * @module
 */
import type { JsonSchema } from "../standard.js";
import { isRecord } from "../_record.js";

/** True for a plain JSON object (not an array, not null): the modules' one check, for the contract files. */
export { isRecord };

/** A JSON-safe deep copy (schemas and payloads are JSON). */
export function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** The `type` keyword as a list (empty when absent). */
export function typesOf(s: JsonSchema): string[] {
  const t = s.type;
  if (typeof t === "string") return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === "string");
  return [];
}

/** Resolve a local `$ref` (`#/$defs/x`, `#/definitions/x`, `#`) against the root; undefined when not local. */
export function resolveRef(root: JsonSchema, ref: string): JsonSchema | undefined {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let cur: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isRecord(cur) && !Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return isRecord(cur) ? cur : undefined;
}

/** Follow `$ref` chains (bounded); returns the schema itself when it has no local ref. */
export function deref(root: JsonSchema, s: JsonSchema): JsonSchema {
  let cur = s;
  for (let i = 0; i < 16 && typeof cur.$ref === "string"; i++) {
    const next = resolveRef(root, cur.$ref);
    if (next === undefined) return cur;
    cur = next;
  }
  return cur;
}

/** True when the schema (statically) accepts `null`: `type` has null, `{}`, a null const/enum, a null branch. */
export function acceptsNull(root: JsonSchema, node: unknown, depth = 0): boolean {
  if (node === true) return true;
  if (!isRecord(node) || depth > 32) return false;
  const s = deref(root, node);
  if ("const" in s) return s.const === null;
  if (Array.isArray(s.enum)) return s.enum.includes(null);
  for (const k of ["anyOf", "oneOf"] as const) {
    const list = s[k];
    if (Array.isArray(list) && list.some((b) => acceptsNull(root, b, depth + 1))) return true;
  }
  if (Array.isArray(s.allOf) && s.allOf.length > 0 && !s.allOf.every((b) => acceptsNull(root, b, depth + 1))) return false;
  const types = typesOf(s);
  if (types.length > 0) return types.includes("null");
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) return false;
  if ("not" in s) return false;
  return true;
}

/** The names listed in `required`. */
export function requiredOf(s: JsonSchema): Set<string> {
  return new Set(Array.isArray(s.required) ? s.required.filter((x): x is string => typeof x === "string") : []);
}

/** True when the node describes objects (by `type` or by having `properties`). */
export function isObjectSchema(s: JsonSchema): boolean {
  return typesOf(s).includes("object") || isRecord(s.properties);
}

/** Join path segments the way issues do: `a.b.0`, `""` for the root. */
export function joinSegs(segs: readonly (string | number)[]): string {
  return segs.map(String).join(".");
}
