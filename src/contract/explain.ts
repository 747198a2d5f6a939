/**
 * One line per disagreement, in words a developer acts on: which side is looser, the likely
 * cause, and what to change.
 * @module
 */
import type { JsonSchema } from "../standard.js";
import type { Mutation } from "./mutate.js";
import type { TargetContract } from "./targets.js";
import type { RuntimeVerdict, Verdict } from "./verdict.js";
import { deref, isRecord } from "./_schema.js";

const HARDEN_CODES = new Set(["too_large", "too_deep", "forbidden_key", "duplicate_key", "lone_surrogate", "non_finite", "unsafe_integer", "non_json", "non_plain_object", "invalid_json", "invalid_meta"]);

/** Replace array indexes by `*`, for grouping and for matching target paths. */
export function normalizePath(path: string): string {
  return path === "" ? "" : path.split(".").map((s) => (/^\d+$/.test(s) ? "*" : s)).join(".");
}

/** Is `key` a declared property of the object schema at `parentPath` (following properties/items only)? */
function declared(root: JsonSchema, parentPath: string[], key: string): boolean {
  let cur: unknown = root;
  for (const seg of parentPath) {
    if (!isRecord(cur)) return false;
    const s = deref(root, cur);
    cur = /^\d+$/.test(seg) ? s.items : isRecord(s.properties) ? s.properties[seg] : undefined;
  }
  if (!isRecord(cur)) return false;
  const s = deref(root, cur);
  const branches = [s, ...(Array.isArray(s.anyOf) ? s.anyOf : []), ...(Array.isArray(s.oneOf) ? s.oneOf : [])].filter(isRecord).map((b) => deref(root, b));
  return branches.some((b) => isRecord(b.properties) && Object.hasOwn(b.properties, key));
}

/** The value at a dotted path of a payload. */
function valueAt(payload: unknown, path: string): unknown {
  let cur = payload;
  for (const seg of path === "" ? [] : path.split(".")) {
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

/** Explain why the advertised and the runtime verdicts differ for `payload`. */
export function explain(c: TargetContract, payload: unknown, mutation: Mutation | null, adv: Verdict, run: RuntimeVerdict): string {
  const at = (p: string) => (p === "" ? "the root" : `\`${p}\``);
  if (adv.accepted) {
    const issue = run.issues[0];
    const path = run.path;
    const norm = normalizePath(path);
    const lost = c.problems
      .map((p) => ({ p, at: p.startsWith("(root):") ? "" : p.slice(0, p.indexOf(":")) }))
      .filter(({ at }) => at === "" || norm === at || norm.startsWith(`${at}.`))
      .sort((a, b) => b.at.length - a.at.length)[0]?.p;
    if (run.code !== "INVALID_INPUT") return `the advertised schema accepts this call, but the gate answers ${run.code ?? "OK"} before execute runs`;
    if (issue !== undefined && HARDEN_CODES.has(issue.code)) {
      return `the gate's payload limits refuse ${at(path)} (${issue.code}) before any schema runs; the advertised schema does not say so`;
    }
    if (valueAt(payload, path) === null && c.nullable.includes(norm)) {
      return `${c.target} strict mode makes ${at(path)} nullable, but the runtime refuses null there: map calls back with fromOpenAIStrictArgs before validation`;
    }
    if (issue?.code === "unrecognized_key") {
      const segs = path.split(".");
      const key = segs.pop() ?? "";
      if (declared(c.base, segs, key)) {
        return `the runtime reports declared field ${at(path)} as unknown: the value the schema returned lacks it (a union branch without it matched first, or a transform changed the keys), and the gate's unknown-key check compares the call with that value`;
      }
      return `the advertised schema lets the extra key ${at(path)} through, but the gate refuses unknown keys: advertise \`additionalProperties: false\`, or set \`unknownKeys: "strip"\``;
    }
    if (lost !== undefined) return `the ${c.target} schema is looser than the runtime at ${at(path)}: ${lost.slice(lost.indexOf(":") + 2)}`;
    if (issue?.code === "custom") return `a refinement the JSON Schema cannot express refuses ${at(path)}; the advertised contract is looser than the runtime (document the rule in a description, or express it in the schema)`;
    return `the advertised schema accepts ${at(path)}, but the runtime refuses it (${issue?.code ?? "no issue"}): the advertised contract is looser than the runtime`;
  }
  const path = adv.path;
  switch (adv.keyword) {
    case "required":
      return `${at(path)} is advertised as required, but the runtime accepts the call without it (a default or an optional field: was the schema taken from the output side?)`;
    case "additionalProperties":
    case "unevaluatedProperties":
      return `the advertised schema refuses the extra key ${at(path)}, but the runtime accepts it (it strips unknown keys): advertise the object as open, or refuse unknown keys at run time`;
    case "format":
      return `the advertised format at ${at(path)} is stricter than the runtime's check: the validator's definition of the format refuses a value the runtime accepts`;
    default: {
      const nul = mutation?.kind === "null" || valueAt(payload, path) === null;
      if (nul) return `the advertised schema refuses null at ${at(path)}, but the runtime accepts it`;
      return `the runtime accepts ${at(path)}, but the advertised schema refuses it (\`${adv.keyword ?? "?"}\`): the advertised contract is stricter than the runtime`;
    }
  }
}
