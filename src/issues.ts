/**
 * Validator issues -> safe `Issue[]`: bounded in count and length, no received values echoed,
 * secrets scrubbed.
 * @module
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { Issue } from "./result.js";
import { _redactThenCut, truncate, type Redactor } from "./redact.js";

/** At most this many issues are returned; a final `too_many_issues` entry says how many were cut. */
export const MAX_ISSUES = 20;
/** Each issue message is cut to this many characters. */
export const MAX_ISSUE_MESSAGE = 200;
/** Each issue path is cut to this many characters. */
export const MAX_ISSUE_PATH = 200;

/** Join a Standard Schema path into `a.b.0` (root is `""`). */
export function joinPath(path: ReadonlyArray<PropertyKey | StandardSchemaV1.PathSegment> | undefined): string {
  if (path === undefined || path.length === 0) return "";
  let out = "";
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    const key = typeof seg === "object" && seg !== null ? seg.key : seg;
    const text = typeof key === "symbol" ? (key.description ?? "symbol") : String(key);
    out = i === 0 ? text : out + "." + text;
  }
  return out;
}

/** Read the value at a path in the received payload (its own properties only), for the echo check and the unknown-key check. */
export function valueAt(root: unknown, path: ReadonlyArray<PropertyKey | StandardSchemaV1.PathSegment> | undefined): unknown {
  let cur = root;
  for (const seg of path ?? []) {
    const key = typeof seg === "object" && seg !== null ? seg.key : seg;
    if (typeof cur !== "object" || cur === null || typeof key === "symbol") return undefined;
    if (!Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/**
 * Codes whose message the validator words from the schema alone (zod 4's and zod 3's built-in
 * issues, and the codes the proxy gives Ajv's): only the value at the issue's own path is hidden in them (each
 * leaf of it, when it is an object or array: a schema's own error function keeps the built-in code). Any other
 * code's message may quote any value of the payload, and every one is hidden.
 */
const SCHEMA_WORDED: ReadonlySet<string> = new Set([
  "invalid_type",
  "too_big",
  "too_small",
  "invalid_format",
  "not_multiple_of",
  "unrecognized_keys",
  "unrecognized_key",
  "invalid_union",
  "invalid_key",
  "invalid_element",
  "invalid_value",
  "required",
  // zod 3's own (an output schema may still be one)
  "invalid_literal",
  "invalid_enum_value",
  "invalid_union_discriminator",
  "invalid_string",
  "invalid_date",
  "not_finite",
  "invalid_intersection_types",
]);

/**
 * ArkType's issues end their message with what they received (`must be a string (was "…")`, a
 * whole object as JSON, an exception's text) and begin it with the path, a payload key included.
 * What it expected is worded from the schema: the message becomes `must be <expected>`. A message
 * the schema's author wrote (`ctx.reject({ message })`) and a predicate's are theirs: every value
 * of the payload is hidden in them. Undefined for any other validator's issue.
 */
function arkTypeMessage(issue: StandardSchemaV1.Issue): { message: string; builtIn: boolean } | undefined {
  if (!(" arkKind" in issue)) return undefined;
  const { expected, code } = issue as { expected?: unknown; code?: unknown };
  if (Object.hasOwn(issue, "message") || typeof expected !== "string" || expected.length === 0) {
    const own = typeof issue.message === "string" ? issue.message : "";
    return { message: own.length > 0 ? own.slice(0, MESSAGE_WINDOW) : "Invalid value", builtIn: false };
  }
  // A union's expectation is made of its branches' problems, each with its own "(was …)" and the
  // payload's keys: a fixed message, and every value of the payload hidden all the same.
  if (code === "union") return { message: "must match one of the allowed alternatives", builtIn: false };
  return { message: `must be ${expected.slice(0, MESSAGE_WINDOW)}`, builtIn: code !== "predicate" };
}

/** Replace any literal echo of the received value in a message (as written, and as JSON writes it inside quotes). */
function stripEcho(message: string, received: unknown): string {
  if (typeof received === "string" && received.length >= 3) {
    const quoted = JSON.stringify(received).slice(1, -1);
    const out = message.split(received).join("<value>");
    return quoted === received ? out : out.split(quoted).join("<value>");
  }
  if (typeof received === "number" || typeof received === "bigint") {
    const s = String(received);
    if (s.length >= 3) return message.split(s).join("<value>");
  }
  return message;
}

/** The payload's leaves a message must not repeat: at most this many, the longest first. */
const MAX_ECHOES = 256;
/** Nodes walked to find them; past it (or past {@link MAX_ECHOES}) the pattern is incomplete. */
const MAX_ECHO_WALK = 10_000;
/** What a message says when the values it might repeat are too many to hide one by one. */
const ECHO_FALLBACK = "Invalid value";
/** The leaves a message must not repeat, as one pattern; `complete` when it holds every one of them. */
interface Echoes {
  readonly re: RegExp | undefined;
  readonly complete: boolean;
}
/** Their pattern's size at most, characters. */
const MAX_ECHO_SOURCE = 16 * 1024;
/** How much of a validator's message is read (the redactor still sees a secret whole; the cut to {@link MAX_ISSUE_MESSAGE} comes after). */
const MESSAGE_WINDOW = 4 * 1024;
/** A leaf shorter than this (elsewhere than at the issue's own path) is too common a word to hide. */
const MIN_ECHO = 4;
/** At the issue's own path (the value itself, or a leaf of the object or array there), as {@link stripEcho} hides a string. */
const MIN_ECHO_AT_PATH = 3;
/** Words validators' own messages are made of ("expected string, received number"): a leaf that is one of them is not hidden. */
const VALIDATOR_WORD = /^(?:string|number|boolean|object|array|bigint|symbol|undefined|null|date|integer|expected|received|invalid|input|value|option|email|true|false|type)$/i;

/**
 * Every string leaf (and long number) of `received`, as one case-insensitive pattern: a custom
 * message (a `.refine` over the whole object, one that upper-cases a value) can repeat a value from
 * anywhere in the payload, not only the one at its path; and any message (an error function under a
 * built-in code) can print the object or array at its path. Leaves shorter than `min` are kept.
 * Undefined when there is none.
 */
function echoPattern(received: unknown, min: number): Echoes {
  const leaves = new Set<string>();
  const stack: unknown[] = [received];
  let seen = 0;
  while (stack.length > 0 && seen < MAX_ECHO_WALK) {
    const v = stack.pop();
    seen++;
    if (typeof v === "string") {
      if (v.length >= min && !VALIDATOR_WORD.test(v)) {
        leaves.add(v);
        const quoted = JSON.stringify(v).slice(1, -1); // as a message that prints the value as JSON has it
        if (quoted !== v) leaves.add(quoted);
      }
    } else if (typeof v === "number" || typeof v === "bigint") {
      const t = String(v);
      if (t.length >= min) leaves.add(t);
    } else if (typeof v === "object" && v !== null) {
      // Children pushed last-first, so they are walked in document order (a message prints the first ones).
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) stack.push((v as Record<string, unknown>)[keys[i]!]);
    }
  }
  const walked = stack.length === 0;
  if (leaves.size === 0) return { re: undefined, complete: walked };
  // Longest first (a value inside a longer one is hidden with it); a value longer than the message
  // window cannot be in it; the pattern stays small (its size is the attacker's to choose).
  const sorted = [...leaves].filter((l) => l.length <= MESSAGE_WINDOW).sort((a, b) => b.length - a.length);
  const parts: string[] = [];
  let size = 0;
  for (const l of sorted) {
    if (parts.length >= MAX_ECHOES || size + l.length > MAX_ECHO_SOURCE) break;
    const escaped = l.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    parts.push(escaped);
    size += escaped.length + 1;
  }
  return { re: parts.length === 0 ? undefined : new RegExp(parts.join("|"), "gi"), complete: walked && parts.length === sorted.length };
}

/**
 * A message with `echoes` hidden; when they are not complete (a value too large to list every
 * leaf of), the message cannot be shown safely and fixed wording stands instead.
 */
function hideEchoes(message: string, echoes: Echoes): string {
  if (!echoes.complete) return ECHO_FALLBACK;
  return echoes.re === undefined ? message : message.replace(echoes.re, "<value>");
}

/**
 * Turn validator issues into safe issues.
 * @param received the payload that was validated (used only to strip echoes of it)
 */
export function toSafeIssues(
  issues: ReadonlyArray<StandardSchemaV1.Issue>,
  received: unknown,
  redact: Redactor,
): Issue[] {
  const out: Issue[] = [];
  issues = perKey(issues);
  const n = Math.min(issues.length, MAX_ISSUES);
  let echoes: Echoes | undefined; // built once, on the first message that needs it
  const objectEchoes = new Map<object, Echoes>(); // the leaves of an object or array at an issue's path
  for (let i = 0; i < n; i++) {
    const issue = issues[i]!;
    const rawCode = (issue as { code?: unknown }).code;
    const code = typeof rawCode === "string" && /^[A-Za-z_]{1,40}$/.test(rawCode) ? rawCode : "invalid";
    const ark = arkTypeMessage(issue);
    // A window, not the whole message: the redactor still sees a secret whole, and the cut comes after.
    let message = ark?.message ?? (typeof issue.message === "string" && issue.message.length > 0 ? issue.message.slice(0, MESSAGE_WINDOW) : "Invalid value");
    const atPath = valueAt(received, issue.path);
    message = stripEcho(message, atPath);
    // An object or array at the path: any message may print it (`z.number({ error: (iss) => … iss.input })`
    // keeps the built-in code), so its leaves are hidden in every message.
    // A refinement's message is the schema author's text, free to quote any value of the payload
    // (zod's `custom`; a code the gate does not know, of any validator). A built-in message of a
    // known code quotes the schema (enum options, bounds), which may equal a value of the payload.
    if (ark !== undefined ? !ark.builtIn : !SCHEMA_WORDED.has(code)) {
      // Past the caps the payload's pattern is partial (its first leaves, in document order): the
      // author's text is kept, with what the pattern covers hidden.
      echoes ??= echoPattern(received, MIN_ECHO);
      if (echoes.re !== undefined) message = message.replace(echoes.re, "<value>");
    } else if (typeof atPath === "object" && atPath !== null) {
      // A built-in code's message may still print the object or array at its path (an error function
      // keeps the code); when that value is too large to hide leaf by leaf, fixed wording stands.
      let leaves = objectEchoes.get(atPath);
      if (leaves === undefined) objectEchoes.set(atPath, (leaves = echoPattern(atPath, MIN_ECHO_AT_PATH)));
      message = hideEchoes(message, leaves);
    }
    out.push({
      path: _redactThenCut(redact, joinPath(issue.path), MAX_ISSUE_PATH, 4 * MAX_ISSUE_PATH), // a window: the redactor sees a secret whole
      code,
      message: _redactThenCut(redact, message, MAX_ISSUE_MESSAGE),
    });
  }
  if (issues.length > MAX_ISSUES) {
    out[MAX_ISSUES - 1] = {
      path: "",
      code: "too_many_issues",
      message: `${issues.length - MAX_ISSUES + 1} more issues not shown`,
    };
  }
  return out;
}

/**
 * Zod's `unrecognized_keys` issue names the keys in its message (`Unrecognized key: "…"`), as
 * valibot's `strict_object` issue does, and on the output side those keys are the service's data. Each key becomes an issue of its own, as the
 * gate's own unknown-key check and the proxy's Ajv mapping report it: the key in the path (where
 * the records mask it), a fixed message.
 */
function perKey(issues: ReadonlyArray<StandardSchemaV1.Issue>): ReadonlyArray<StandardSchemaV1.Issue> {
  if (!issues.some((i) => unknownKeysOf(i) !== undefined)) return issues;
  // The other issues first: many unknown keys must not push a wrong type past the cut.
  const others: StandardSchemaV1.Issue[] = [];
  const unknown: StandardSchemaV1.Issue[] = [];
  for (const i of issues) {
    const keys = unknownKeysOf(i);
    if (keys === undefined) others.push(i);
    else for (const key of keys) unknown.push({ code: "unrecognized_key", message: "Unknown field", path: key === undefined ? (i.path ?? []) : [...(i.path ?? []), key] } as StandardSchemaV1.Issue);
  }
  return [...others, ...unknown];
}

/**
 * The keys an issue reports as unknown: zod's `unrecognized_keys` (the object's path and `keys`),
 * valibot's `strict_object` and ArkType's `"+": "reject"` (the key's own path, so `[undefined]`);
 * otherwise undefined.
 */
function unknownKeysOf(i: StandardSchemaV1.Issue): readonly (string | undefined)[] | undefined {
  const { code, keys, kind, type } = i as { code?: unknown; keys?: unknown; kind?: unknown; type?: unknown };
  if (code === "unrecognized_keys" && Array.isArray(keys) && keys.length > 0 && keys.every((k) => typeof k === "string")) return keys as string[];
  if (kind === "schema" && type === "strict_object" && (i.path?.length ?? 0) > 0) return [undefined];
  // ArkType's `"+": "reject"`: "value at [\"key\"] must be removed", at the key's own path.
  if (" arkKind" in i && code === "predicate" && (i as { expected?: unknown }).expected === "removed" && (i.path?.length ?? 0) > 0) return [undefined];
  return undefined;
}

/** Build one issue from parts the gate wrote itself (already safe), bounding the path. */
export function issue(path: string, code: string, message: string, redact?: Redactor): Issue {
  const p = redact === undefined ? path : redact(path);
  return { path: truncate(p, MAX_ISSUE_PATH), code, message };
}
