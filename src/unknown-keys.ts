/**
 * Unknown keys are refused by default. Validators that strip extra keys (zod's plain `z.object`)
 * report success; comparing what was received with what the schema returned finds every key the
 * schema dropped, at any depth, for any Standard Schema library.
 * @module
 */
import type { Issue } from "./result.js";
import { issue, MAX_ISSUES } from "./issues.js";
import type { Redactor } from "./redact.js";

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Keys present in `received` (with a defined value) but absent from `parsed`. */
export function droppedKeys(received: unknown, parsed: unknown, redact: Redactor): Issue[] {
  const out: Issue[] = [];
  visit(received, parsed, [], out, redact);
  return out;
}

function visit(r: unknown, p: unknown, path: (string | number)[], out: Issue[], redact: Redactor): void {
  if (out.length >= MAX_ISSUES) return;
  if (Array.isArray(r)) {
    if (!Array.isArray(p) || p.length !== r.length) return;
    for (let i = 0; i < r.length; i++) {
      path.push(i);
      visit(r[i], p[i], path, out, redact);
      path.pop();
    }
    return;
  }
  if (!isPlainObject(r) || !isPlainObject(p)) return;
  for (const key of Object.keys(r)) {
    const child = r[key];
    if (child === undefined) continue;
    path.push(key);
    if (!Object.hasOwn(p, key)) {
      out.push(issue(path.join("."), "unrecognized_key", "Unknown field", redact));
      if (out.length >= MAX_ISSUES) return;
    } else {
      visit(child, p[key], path, out, redact);
    }
    path.pop();
  }
}
