/**
 * Issue paths as records keep them (`CallRecord.issuePaths`, and so spans and call-log lines): a
 * segment that is not a property name the tool's schema declares — a record's key, an unknown key
 * the caller sent — is part of the payload (an e-mail, an id), and is recorded as `*`. Array
 * indexes, declared names, the reserved `_meta` and the forbidden key names stay. The envelope the
 * model gets keeps the full paths: it has to fix them.
 * @module
 */
import type { JsonSchema } from "./standard.js";

/** What a record shows for a segment that is the payload's, not the schema's. */
export const PAYLOAD_SEGMENT = "*";

const FIXED = new Set(["_meta", "__proto__", "constructor", "prototype"]);
/** Bounds on the walk through `$ref` and combinators (schemas are the tool author's, but may be cyclic). */
const MAX_NODES = 512;

type Node = Record<string, unknown>;

const isNode = (v: unknown): v is Node => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * `path` (segments joined with `.`, as issues carry them) with every segment that `schema` does not
 * declare replaced by {@link PAYLOAD_SEGMENT}; a number is kept where the schema has an array.
 * Without a schema, every segment but numbers and the fixed names is masked. A key with dots in it
 * is several segments, each masked: `"scores.alice@example.com"` gives `"scores.*.*"`.
 * @example declaredPath({ type: "object", properties: { scores: { type: "object", additionalProperties: { type: "number" } } } }, "scores.alice") // "scores.*"
 */
export function declaredPath(schema: JsonSchema | undefined, path: string): string {
  if (path === "") return path;
  if (schema === undefined) return walk(undefined, path);
  // The same failures come again and again (a model repeating a mistake): paths the schema
  // declares throughout are remembered, a bounded number per schema. A path with a payload key in
  // it is worked out each time: remembering it would keep the caller's data (an e-mail used as a
  // record key) for the life of the schema.
  let memo = memos.get(schema);
  if (memo === undefined) memos.set(schema, (memo = new Set()));
  if (memo.has(path)) return path;
  const masked = walk(schema, path);
  if (masked === path && memo.size < MAX_MEMO) memo.add(path);
  return masked;
}

const memos = new WeakMap<JsonSchema, Set<string>>();
const MAX_MEMO = 256;

/** @internal The paths remembered for `schema` (a test that payload keys are not kept). */
export function _rememberedPaths(schema: JsonSchema): readonly string[] {
  return [...(memos.get(schema) ?? [])];
}

function walk(schema: JsonSchema | undefined, path: string): string {
  const root = schema;
  let nodes: Node[] = schema === undefined ? [] : expand(schema, root);
  const out: string[] = [];
  for (const seg of path.split(".")) {
    const next: Node[] = [];
    let declared = false;
    let indexed = false;
    const numeric = /^(0|[1-9][0-9]*)$/.test(seg);
    for (const n of nodes) {
      const props = n.properties;
      if (isNode(props) && Object.hasOwn(props, seg) && isNode(props[seg])) {
        declared = true;
        next.push(...expand(props[seg], root));
        continue;
      }
      if (numeric && isArraySchema(n)) {
        // An index of an array (kept: it is a position, not data); draft-07 `items: [...]` too.
        indexed = true;
        const prefix = Array.isArray(n.prefixItems) ? n.prefixItems : Array.isArray(n.items) ? n.items : undefined;
        const at: unknown = prefix?.[Number(seg)];
        const item = isNode(at) ? at : isNode(n.items) ? n.items : isNode(n.additionalItems) ? n.additionalItems : undefined;
        if (isNode(item)) next.push(...expand(item, root));
        continue;
      }
      // A key the schema does not name (a numeric-looking one too: a phone number, an id): a
      // record's value schema still describes what is below it.
      if (isNode(n.additionalProperties)) next.push(...expand(n.additionalProperties, root));
      if (isNode(n.patternProperties)) for (const p of Object.values(n.patternProperties)) if (isNode(p)) next.push(...expand(p, root));
    }
    // Without a schema, a numeric segment is most likely an index: kept, as the fixed names are.
    out.push(declared || indexed || (numeric && schema === undefined) || FIXED.has(seg) ? seg : PAYLOAD_SEGMENT);
    nodes = next.slice(0, MAX_NODES);
  }
  return out.join(".");
}

/** The node and what it stands for: its local `$ref` target and its combinator branches. */
function expand(node: Node, root: JsonSchema | undefined, out: Node[] = [], seen = new Set<Node>()): Node[] {
  if (seen.has(node) || seen.size >= MAX_NODES) return out;
  seen.add(node);
  out.push(node);
  const ref = node.$ref;
  if (typeof ref === "string" && ref.startsWith("#") && root !== undefined) {
    const target = pointer(root, ref.slice(1));
    if (isNode(target)) expand(target, root, out, seen);
  }
  for (const k of ["anyOf", "oneOf", "allOf"]) {
    const branches = node[k];
    if (Array.isArray(branches)) for (const b of branches) if (isNode(b)) expand(b, root, out, seen);
  }
  // Conditional parts declare names too.
  for (const k of ["then", "else"]) if (isNode(node[k])) expand(node[k], root, out, seen);
  if (isNode(node.dependentSchemas)) for (const d of Object.values(node.dependentSchemas)) if (isNode(d)) expand(d, root, out, seen);
  return out;
}

/** A schema that describes arrays (by type or by its item keywords). */
function isArraySchema(n: Node): boolean {
  const t = n.type;
  return t === "array" || (Array.isArray(t) && t.includes("array")) || n.items !== undefined || n.prefixItems !== undefined;
}

/** A JSON Pointer (`/$defs/Addr`) into `root`. */
function pointer(root: JsonSchema, p: string): unknown {
  if (p === "") return root;
  let at: unknown = root;
  for (const raw of p.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isNode(at) || !Object.hasOwn(at, key)) return undefined;
    at = at[key];
  }
  return at;
}

/**
 * A failure's issue paths as records keep them: masked by the listing's output schema for
 * INVALID_OUTPUT, by its input schema otherwise (without a listing, by no schema).
 */
export function recordPaths(
  listing: { readonly inputSchema: JsonSchema; readonly outputSchema?: JsonSchema } | undefined,
  failure: { readonly code: string; readonly issues?: readonly { readonly path: string }[] },
): string[] {
  const schema = failure.code === "INVALID_OUTPUT" ? listing?.outputSchema : listing?.inputSchema;
  // A path that is not a string (a foreign envelope) says nothing the record may keep.
  return (failure.issues ?? []).map((i) => (typeof i.path === "string" ? declaredPath(schema, i.path) : PAYLOAD_SEGMENT));
}

/** A failure the gate answered → its issue paths as its record has them (computed when first asked). */
const recorded = new WeakMap<object, () => readonly string[]>();

/** @internal The gate remembers how to mask the paths of a failure it answered. */
export function _rememberPaths(result: object, paths: () => readonly string[]): void {
  recorded.set(result, paths);
}

/**
 * The issue paths of `failure` as the gate's record has them, when a gate of this process answered
 * it; otherwise (an envelope that crossed a transport, e.g. MCP, whose schemas this process does
 * not hold) the paths as the envelope carries them.
 * @internal For records made outside the gate (the loop's evidence).
 */
export function recordedIssuePaths(failure: { readonly issues?: readonly { readonly path: string }[] }): readonly string[] {
  const known = recorded.get(failure);
  if (known !== undefined) return known();
  return (failure.issues ?? []).map((i) => i.path);
}
