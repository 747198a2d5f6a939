/**
 * Unknown keys are refused by default, and decided against the schema the gate advertises (the
 * input side, every object closed by `closeObjects`): the enforced and the advertised contracts
 * agree by construction. Validators that strip extra keys (zod's plain `z.object`) report
 * success; the advertised schema, compiled once with Ajv, finds each key it does not allow —
 * also inside unions and under transforms, where comparing input and output would misjudge.
 *
 * The same check refuses an array where the advertised schema requires an object (ArkType lets
 * `[]` through an object whose keys are all optional): the tool would receive what its own
 * contract rules out. Other `type` mismatches are left to the runtime schema, which may coerce
 * on purpose (`z.coerce.number()` advertises a number and accepts "5").
 *
 * Inside a union (`anyOf` / `oneOf`) Ajv reports the errors of every branch. The errors are
 * sorted into a tree by the union frames of their `schemaPath` (which branch, at which instance
 * path), and each union keeps the findings of the branches the payload matches apart from them.
 *
 * A union whose branches overlap is also run as zod's `z.union` runs it: the first branch that
 * matches apart from unknown keys decides, and a plain `z.object` branch passes by dropping the
 * keys it does not declare (`{ id } | { id, amount }` hands `{ id }` to the tool for
 * `{ id, amount }`, which the advertised schema allows). The keys that branch does not declare are
 * refused unless the validated value still holds them (a `z.strictObject` branch failed and a later
 * one took them, or the validator keeps extra keys, as ArkType does).
 * @module
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import type { Issue } from "./result.js";
import { issue, MAX_ISSUES, valueAt } from "./issues.js";
import type { Redactor } from "./redact.js";
import type { JsonSchema } from "./standard.js";
import { mapSubschemas } from "./json-schema.js";
import { isRecord } from "./_record.js";

/**
 * Finds the keys the advertised schema does not allow, and the keys a union branch dropped; `[]`
 * when there are none. `validated`: the value the validator returned for `received`, the evidence
 * that a key a union's first matching branch does not declare was kept (without it, such a key is
 * refused).
 */
export type UnknownKeyCheck = (received: unknown, redact: Redactor, validated?: unknown) => Issue[];

let ajv: Ajv2020 | undefined;

function compiler(): Ajv2020 {
  // Only additionalProperties / unevaluatedProperties verdicts (and array-for-object) are used;
  // the runtime schema stays authoritative for everything else, so formats are not validated here.
  ajv ??= new Ajv2020({ allErrors: true, strict: false, validateFormats: false, validateSchema: false });
  return ajv;
}

/** JSON pointer (`/a/0`) to the dot path the envelope uses (`a.0`). */
function dotted(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function unknownKeyOf(e: ErrorObject): string | undefined {
  if (e.keyword === "additionalProperties") return (e.params as { additionalProperty?: string }).additionalProperty;
  if (e.keyword === "unevaluatedProperties") return (e.params as { unevaluatedProperty?: string }).unevaluatedProperty;
  return undefined;
}

/** What an error is about: the payload it was raised on, and the schema that was compiled. */
interface Checked {
  readonly received: unknown;
  readonly schema: Record<string, unknown>;
}

/** A `type` error that asks for an object (and not an array) where the value is an array. */
function isArrayForObject(e: ErrorObject, c: Checked): boolean {
  if (e.keyword !== "type" || !Array.isArray(valueAt(c.received, dotted(e.instancePath)))) return false;
  const t = (e.params as { type?: unknown }).type;
  const types = Array.isArray(t) ? t : typeof t === "string" ? t.split(",") : [];
  return types.includes("object") && !types.includes("array");
}

// ---------------------------------------------------------------------------------------------
// Which union branch an error came from, read from its schemaPath.

/** Keywords followed by a name (`properties/<name>`), and whether they step into the instance. */
const NAMED: Readonly<Record<string, boolean>> = { properties: true, patternProperties: true, prefixItems: true, $defs: false, definitions: false, dependentSchemas: false, allOf: false };
/** Keywords that hold one subschema, and whether they step into the instance. */
const SINGLE: Readonly<Record<string, boolean>> = {
  items: true,
  additionalItems: true,
  contains: true,
  unevaluatedItems: true,
  additionalProperties: true,
  unevaluatedProperties: true,
  not: false,
  if: false,
  then: false,
  else: false,
  propertyNames: false,
};

/** One union an error sits in: the union (its schema location and instance path) and the branch. */
interface Frame {
  readonly id: string;
  /** The union's instance path, a JSON pointer. */
  readonly at: string;
  readonly branch: number;
}

/**
 * The union frames of an error, outermost first, or `undefined` when the schemaPath cannot be
 * read. `instance` is the error's instancePath split into (escaped) segments. After a `$ref`
 * Ajv's schemaPath restarts at the referenced schema: frames before the jump are not seen (see
 * `inlineRefs`, which removes most jumps before compiling).
 */
function framesOf(schemaPath: string, instance: readonly string[], keyword: string): Frame[] | undefined {
  if (!schemaPath.startsWith("#")) return undefined;
  const segs = schemaPath === "#" ? [] : schemaPath.slice(2).split("/");
  // The last segment is the failing keyword, except for a `false` schema: the path ends at it.
  const end = keyword === "false schema" ? segs.length : segs.length - 1;
  const found: { at: number; depth: number; branch: number }[] = [];
  let depth = 0;
  let i = 0;
  while (i < end) {
    const s = segs[i]!;
    if (s === "anyOf" || s === "oneOf") {
      const branch = Number(segs[i + 1]);
      if (!Number.isInteger(branch)) return undefined;
      found.push({ at: i + 1, depth, branch });
      i += 2;
    } else if (Object.hasOwn(NAMED, s)) {
      if (NAMED[s]) depth++;
      i += 2;
    } else if (Object.hasOwn(SINGLE, s)) {
      if (SINGLE[s]) depth++;
      i++;
    } else return undefined;
  }
  const base = instance.length - depth;
  if (i !== end || base < 0) return undefined;
  return found.map((f) => {
    const at = pointer(instance.slice(0, base + f.depth));
    return { id: unionId(segs.slice(0, f.at), at), at, branch: f.branch };
  });
}

function pointer(instance: readonly string[]): string {
  return instance.map((s) => `/${s}`).join("");
}

function unionId(schemaSegs: readonly string[], at: string): string {
  return `${schemaSegs.join("/")}\u0000${at}`;
}

// ---------------------------------------------------------------------------------------------
// The error tree and its verdict.

/** A finding: an unknown key, or an array where an object is required. `ptr` is a JSON pointer. */
interface Finding {
  readonly ptr: string;
  readonly code: "unrecognized_key" | "invalid_type";
  /** Index of the Ajv error it came from: findings are reported in Ajv's order. */
  readonly order: number;
}

/** The errors of one schema scope: the whole schema, or one branch of a union (at one instance). */
interface Scope {
  readonly findings: Finding[];
  /** Pointers whose key the scope refuses (unknown key errors). */
  readonly refusedKeys: Set<string>;
  /** Pointers whose value the scope refuses by type. */
  readonly refusedTypes: Set<string>;
  /** An error that is neither an unknown key nor tied to a union of this scope. */
  other: boolean;
  readonly unions: Map<string, Union>;
}

interface Union {
  /** The union's instance path, a JSON pointer. */
  readonly at: string;
  readonly branches: Map<number, Scope>;
  /** Branch count from the union error (`undefined` when the union error was not seen). */
  size: number | undefined;
  /** A `oneOf` that failed because several branches pass: the branches without errors passed. */
  ambiguous: boolean;
}

/** What a scope (or union) concludes. */
interface Verdict {
  readonly reported: readonly Finding[];
  /** Matches apart from unknown keys. */
  readonly clean: boolean;
  /** Whether it refuses the key (unknown key) or the array (array for object) at `f.ptr`. */
  readonly refuses: (f: Finding) => boolean;
}

const newScope = (): Scope => ({ findings: [], refusedKeys: new Set(), refusedTypes: new Set(), other: false, unions: new Map() });

function unionIn(scope: Scope, id: string, at: string): Union {
  let u = scope.unions.get(id);
  if (u === undefined) scope.unions.set(id, (u = { at, branches: new Map(), size: undefined, ambiguous: false }));
  return u;
}

function branchOf(u: Union, branch: number): Scope {
  let s = u.branches.get(branch);
  if (s === undefined) u.branches.set(branch, (s = newScope()));
  return s;
}

function escape(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Sort Ajv's errors into the scope tree. */
function treeOf(errors: readonly ErrorObject[], c: Checked): Scope {
  const root = newScope();
  errors.forEach((e, order) => {
    const instance = e.instancePath === "" ? [] : e.instancePath.slice(1).split("/");
    const frames = framesOf(e.schemaPath, instance, e.keyword) ?? [];
    let scope = root;
    for (const f of frames) scope = branchOf(unionIn(scope, f.id, f.at), f.branch);
    if (e.keyword === "anyOf" || e.keyword === "oneOf") {
      const segs = e.schemaPath.slice(2).split("/");
      const u = unionIn(scope, unionId(segs, e.instancePath), e.instancePath);
      const branches = resolve(c.schema, e.schemaPath);
      if (Array.isArray(branches)) u.size = branches.length;
      if (e.keyword === "oneOf" && Array.isArray((e.params as { passingSchemas?: unknown }).passingSchemas)) u.ambiguous = true;
      return;
    }
    const key = unknownKeyOf(e);
    if (key !== undefined) {
      const ptr = `${e.instancePath}/${escape(key)}`;
      scope.findings.push({ ptr, code: "unrecognized_key", order });
      scope.refusedKeys.add(ptr);
      return;
    }
    if (e.keyword === "type") {
      scope.refusedTypes.add(e.instancePath);
      if (isArrayForObject(e, c)) scope.findings.push({ ptr: e.instancePath, code: "invalid_type", order });
    }
    // A type error (array for object included) means the scope does not match the value.
    scope.other = true;
  });
  return root;
}

function judgeScope(scope: Scope): Verdict {
  const reported = [...scope.findings];
  let clean = !scope.other;
  const unionsAt = new Map<string, Verdict[]>(); // by instance path: only those at or above f.ptr can refuse f
  for (const u of scope.unions.values()) {
    const v = judgeUnion(u);
    const here = unionsAt.get(u.at);
    if (here === undefined) unionsAt.set(u.at, [v]);
    else here.push(v);
    reported.push(...v.reported);
    clean &&= v.clean;
  }
  const refuses = (f: Finding): boolean => {
    // Walk the prefixes of f.ptr: a refused key at or above it, a refused type above it (or at
    // it, for an array where an object is required), or a union there that refuses it.
    const segs = f.ptr === "" ? [] : f.ptr.slice(1).split("/");
    let p = "";
    for (let i = 0; ; i++) {
      if (scope.refusedKeys.has(p)) return true;
      if (scope.refusedTypes.has(p) && (i < segs.length || f.code === "invalid_type")) return true;
      if (unionsAt.get(p)?.some((v) => v.refuses(f))) return true;
      if (i >= segs.length) return false;
      p += `/${segs[i]!}`;
    }
  };
  return { reported, clean, refuses };
}

const NOTHING: Verdict = { reported: [], clean: true, refuses: () => false };

/**
 * A union keeps the findings of its best clean branch (one that matches apart from unknown keys,
 * with the fewest of them); when no branch is clean, the findings every branch refuses.
 * A branch without errors in a failed union had its errors moved out of sight by a `$ref`
 * (those errors count where they were sorted): it is not judged, and without a clean branch the
 * union reports nothing of its own.
 */
function judgeUnion(u: Union): Verdict {
  const size = Math.max(u.size ?? 0, ...[...u.branches.keys()].map((b) => b + 1));
  const judged: Verdict[] = [];
  let unseen = false;
  for (let b = 0; b < size; b++) {
    const s = u.branches.get(b);
    if (s !== undefined) judged.push(judgeScope(s));
    else if (u.ambiguous) judged.push(NOTHING);
    else unseen = true;
  }
  const clean = judged.filter((v) => v.clean);
  if (clean.length > 0) {
    // The payload matches these branches apart from unknown keys: it is judged as the one it fits
    // best, with the fewest unknown keys (a key another branch declares is still unknown to it:
    // `{ id } | { name }` refuses `{ id, name }`, as the advertised schema does).
    const best = clean.reduce((a, b) => (b.reported.length < a.reported.length ? b : a));
    return { reported: best.reported, clean: true, refuses: best.refuses };
  }
  const among = unseen ? [] : judged;
  if (among.length === 0) return { reported: [], clean: false, refuses: () => false };
  const reported = among.flatMap((v) => v.reported).filter((f) => among.every((v) => v.refuses(f)));
  return { reported, clean: false, refuses: (f) => among.every((v) => v.refuses(f)) };
}

// ---------------------------------------------------------------------------------------------
// $ref: Ajv's schemaPath restarts at the referenced schema, which hides the union frames around
// the reference. Local references are inlined before compiling (a cycle is unrolled a few times).

/**
 * Rounds a cycle is unrolled, tried from the most until the copy fits in its budget: `BUDGET`
 * nodes more than twice the schema's (Ajv's compile time grows fast with the copy).
 */
const UNROLL = [8, 4, 2, 1] as const;
const BUDGET = 100;
const SCOPE_KEYWORDS = new Set(["$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor"]);

/** True when `node` holds a key `test` accepts, at any depth. */
function holds(node: unknown, test: (key: string, value: unknown) => boolean): boolean {
  if (Array.isArray(node)) return node.some((n) => holds(n, test));
  if (!isRecord(node)) return false;
  return Object.entries(node).some(([k, v]) => test(k, v) || holds(v, test));
}

/** How many objects `node` holds, itself included. */
function size(node: unknown): number {
  if (Array.isArray(node)) return node.reduce((n: number, v) => n + size(v), 0);
  if (!isRecord(node)) return 0;
  return Object.values(node).reduce((n: number, v) => n + size(v), 1);
}

function resolve(root: Record<string, unknown>, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  try {
    for (const raw of ref.slice(2).split("/")) {
      const seg = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      if (Array.isArray(node) && /^(0|[1-9][0-9]*)$/.test(seg)) node = node[Number(seg)];
      else if (isRecord(node) && Object.hasOwn(node, seg)) node = node[seg];
      else return undefined;
    }
  } catch {
    return undefined;
  }
  return node;
}

/**
 * A copy of `root` with its local `$ref`s replaced by what they reference (`$ref` beside other
 * keywords becomes one more `allOf` branch: the same assertions and evaluated properties). A
 * cycle is unrolled as many rounds as fit in the budget; the `$ref`s left, and `$defs`,
 * stay as they were. Schemas that change the base URI or use anchors are left alone.
 */
function inlineRefs(root: Record<string, unknown>): Record<string, unknown> {
  if (!holds(root, (k, v) => k === "$ref" && typeof v === "string") || holds(root, (k) => SCOPE_KEYWORDS.has(k))) return root;
  const { $defs, definitions, ...body } = root;
  let out: Record<string, unknown> = body;
  const budget = BUDGET + 2 * size(root);
  for (const rounds of UNROLL) {
    const r = unrolled(root, body, rounds, budget);
    out = r.schema;
    if (r.complete) break;
  }
  if ($defs !== undefined) out.$defs = $defs;
  if (definitions !== undefined) out.definitions = definitions;
  return out;
}

function unrolled(root: Record<string, unknown>, body: Record<string, unknown>, rounds: number, nodes: number): { schema: Record<string, unknown>; complete: boolean } {
  let budget = nodes;
  const stack: string[] = [];
  const expand = (node: unknown): unknown => {
    if (!isRecord(node) || budget <= 0) return node;
    budget--;
    const out = mapSubschemas(node, (child, keyword) => (keyword === "$defs" || keyword === "definitions" ? child : expand(child)));
    const ref = out.$ref;
    if (typeof ref !== "string" || stack.filter((r) => r === ref).length >= rounds) return out;
    const target = resolve(root, ref);
    if (!isRecord(target)) return out;
    stack.push(ref);
    const expanded = expand(target);
    stack.pop();
    if (!isRecord(expanded) || budget <= 0) return out;
    const { $defs: _d, definitions: _o, ...inlined } = expanded;
    const { $ref: _r, ...rest } = out;
    if (Object.keys(rest).length === 0) return inlined;
    return { ...rest, allOf: [...(Array.isArray(rest.allOf) ? (rest.allOf as unknown[]) : []), inlined] };
  };
  const schema = expand(body) as Record<string, unknown>;
  return { schema, complete: budget > 0 };
}

/** Errors weighed branch by branch at most; see {@link compileUnknownKeyCheck}. */
const MAX_WEIGHED_ERRORS = 1_000;

/** The first unknown keys and arrays-for-objects, in Ajv's order, whichever branch they came from. */
function flatFindings(errors: readonly ErrorObject[], c: Checked): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (let order = 0; order < errors.length && seen.size < MAX_ISSUES; order++) {
    const e = errors[order]!;
    const key = unknownKeyOf(e);
    const f: Finding | undefined =
      key !== undefined ? { ptr: `${e.instancePath}/${escape(key)}`, code: "unrecognized_key", order } : isArrayForObject(e, c) ? { ptr: e.instancePath, code: "invalid_type", order } : undefined;
    if (f === undefined || seen.has(`${f.code}\u0000${f.ptr}`)) continue;
    seen.add(`${f.code}\u0000${f.ptr}`);
    out.push(f);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Unions run first match: which keys the first branch that fits would drop.

/** `node` with every object opened (no `additionalProperties` / `unevaluatedProperties: false`): "matches apart from unknown keys". */
function opened(node: unknown): unknown {
  if (!isRecord(node)) return node;
  const out = mapSubschemas(node, (child, keyword) => (keyword === "$defs" || keyword === "definitions" ? child : opened(child)));
  if (out.additionalProperties === false) delete out.additionalProperties;
  if (out.unevaluatedProperties === false) delete out.unevaluatedProperties;
  return out;
}

/**
 * A copy of `node` in which each union is replaced by a first-match chain: the first branch that
 * matches apart from unknown keys (`if`) is applied closed (`then`), and when no branch fits the
 * union says nothing (the main check and the validator decide). Only its unknown-key errors are read.
 */
function firstMatchOf(node: unknown): unknown {
  if (!isRecord(node)) return node;
  const out = mapSubschemas(node, firstMatchOf);
  for (const k of ["anyOf", "oneOf"] as const) {
    const branches = node[k];
    if (!Array.isArray(branches)) continue;
    const closed = out[k] as unknown[];
    delete out[k];
    let chain: unknown = true;
    for (let b = branches.length - 1; b >= 0; b--) chain = { if: opened(branches[b]), then: closed[b], else: chain };
    out.allOf = [...(Array.isArray(out.allOf) ? (out.allOf as unknown[]) : []), chain];
  }
  return out;
}

/**
 * Whether the key `ptr` names was dropped: the validated value shows, at its parent's path, a plain
 * copy of the received object without that key. Where the value cannot show it — nothing there (an
 * outer transform moved it), not a plain object, or a key both hold with another value (a transform
 * or a coercion ran in the branch that was taken) — the key counts as kept: the check fails open,
 * as it did before the first-match run, rather than refuse what the validator may have used.
 * Without a validated value (a caller that has none) every such key counts as dropped.
 */
function dropped(validated: unknown, received: unknown, given: boolean, ptr: string): boolean {
  if (!given) return true;
  try {
    const path = dotted(ptr);
    const key = path.pop();
    if (key === undefined) return false;
    const out = valueAt(validated, path);
    const sent = valueAt(received, path);
    if (!isPlain(out) || typeof sent !== "object" || sent === null) return false;
    if (Object.hasOwn(out, key)) return false; // kept
    for (const k of Object.keys(out)) {
      if (!Object.hasOwn(sent, k)) continue; // a default the branch filled in
      const a: unknown = (out as Record<string, unknown>)[k];
      const b: unknown = (sent as Record<string, unknown>)[k];
      const objects = typeof a === "object" && a !== null && typeof b === "object" && b !== null;
      if (!objects && !Object.is(a, b)) return false; // a transform ran: what it used cannot be told
    }
    return true;
  } catch {
    return false; // a value whose reading throws shows nothing
  }
}

function isPlain(v: unknown): v is object {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const p: unknown = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/** The unknown keys of the first-match run that the validated value shows were dropped, in Ajv's order. */
function droppedKeys(errors: readonly ErrorObject[], received: unknown, validated: unknown, given: boolean): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (let order = 0; order < errors.length && out.length < MAX_ISSUES; order++) {
    const e = errors[order]!;
    const key = unknownKeyOf(e);
    if (key === undefined) continue;
    const ptr = `${e.instancePath}/${escape(key)}`;
    if (seen.has(ptr)) continue;
    seen.add(ptr);
    if (dropped(validated, received, given, ptr)) out.push({ ptr, code: "unrecognized_key", order });
  }
  return out;
}

/**
 * The first-match check, for a schema with unions; `undefined` without unions, or when its copy
 * does not compile (a `$ref` into a union branch, a duplicated `$anchor`): the main check alone then.
 */
function compileFirstMatch(schema: Record<string, unknown>): ValidateFunction | undefined {
  if (!holds(schema, (k, v) => (k === "anyOf" || k === "oneOf") && Array.isArray(v))) return undefined;
  try {
    return compiler().compile(firstMatchOf(schema) as Record<string, unknown>);
  } catch {
    return undefined;
  }
}

/**
 * Compile the check for one tool's advertised input schema. Throws if Ajv cannot compile it
 * (the gate reports that as a configuration error).
 */
export function compileUnknownKeyCheck(advertised: JsonSchema): UnknownKeyCheck {
  const { $schema: _ignored, ...schema } = advertised;
  const compiled = inlineRefs(schema);
  const validate: ValidateFunction = compiler().compile(compiled);
  const firstMatch = compileFirstMatch(compiled);
  return (received, redact, ...rest) => {
    const [validated] = rest;
    let found: readonly Finding[] = [];
    if (!validate(received)) {
      const errors = validate.errors ?? [];
      const c: Checked = { received, schema: compiled };
      // Past this many errors (a payload built to be refused), each finding is taken as it stands,
      // without weighing union branches: the payload is refused either way, and the cost stays linear.
      found = [...(errors.length > MAX_WEIGHED_ERRORS ? flatFindings(errors, c) : judgeScope(treeOf(errors, c)).reported)].sort((a, b) => a.order - b.order);
    }
    // The keys a union's first fitting branch would drop (after the main check's own, which come first).
    const dropped = firstMatch === undefined || firstMatch(received) ? [] : droppedKeys(firstMatch.errors ?? [], received, validated, rest.length > 0);
    const out: Issue[] = [];
    const seen = new Set<string>();
    for (const f of [...found, ...dropped]) {
      const id = `${f.code}\u0000${f.ptr}`;
      if (seen.has(id)) continue;
      seen.add(id);
      const path = dotted(f.ptr).join(".");
      out.push(f.code === "unrecognized_key" ? issue(path, "unrecognized_key", "Unknown field", redact) : issue(path, "invalid_type", "Expected an object, received an array", redact));
      if (out.length >= MAX_ISSUES) break;
    }
    return out;
  };
}
