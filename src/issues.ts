/**
 * Validator issues -> safe `Issue[]`: bounded in count and length, no received values echoed,
 * secrets scrubbed.
 * @module
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { Issue } from "./result.js";
import { truncate, type Redactor } from "./redact.js";

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

/** Read the value at a path in the received payload, for the echo check. */
function valueAt(root: unknown, path: ReadonlyArray<PropertyKey | StandardSchemaV1.PathSegment> | undefined): unknown {
  let cur = root;
  for (const seg of path ?? []) {
    const key = typeof seg === "object" && seg !== null ? seg.key : seg;
    if (typeof cur !== "object" || cur === null || typeof key === "symbol") return undefined;
    if (!Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** Replace any literal echo of the received value in a message. */
function stripEcho(message: string, received: unknown): string {
  if (typeof received === "string" && received.length >= 3) {
    return message.split(received).join("<value>");
  }
  if (typeof received === "number" || typeof received === "bigint") {
    const s = String(received);
    if (s.length >= 3) return message.split(s).join("<value>");
  }
  return message;
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
  for (let i = 0; i < n; i++) {
    const issue = issues[i]!;
    const rawCode = (issue as { code?: unknown }).code;
    const code = typeof rawCode === "string" && /^[a-z_]{1,40}$/.test(rawCode) ? rawCode : "invalid";
    const message = typeof issue.message === "string" && issue.message.length > 0 ? issue.message : "Invalid value";
    out.push({
      path: truncate(redact(joinPath(issue.path)), MAX_ISSUE_PATH),
      code,
      message: truncate(redact(stripEcho(message, valueAt(received, issue.path))), MAX_ISSUE_MESSAGE),
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
 * valibot's `strict_object` (the key's own path, so `[undefined]`); otherwise undefined.
 */
function unknownKeysOf(i: StandardSchemaV1.Issue): readonly (string | undefined)[] | undefined {
  const { code, keys, kind, type } = i as { code?: unknown; keys?: unknown; kind?: unknown; type?: unknown };
  if (code === "unrecognized_keys" && Array.isArray(keys) && keys.length > 0 && keys.every((k) => typeof k === "string")) return keys as string[];
  if (kind === "schema" && type === "strict_object" && (i.path?.length ?? 0) > 0) return [undefined];
  return undefined;
}

/** Build one issue from parts the gate wrote itself (already safe), bounding the path. */
export function issue(path: string, code: string, message: string, redact?: Redactor): Issue {
  const p = redact === undefined ? path : redact(path);
  return { path: truncate(p, MAX_ISSUE_PATH), code, message };
}
