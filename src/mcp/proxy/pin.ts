/**
 * Tool definition pinning: a lock file records a hash of everything the proxy forwards of an
 * upstream tool to its clients (name, title, description and schemas); a tool whose hash differs
 * from its pin (or that has no pin in an existing lock) is refused until re-approved with
 * `--update-lock`.
 * @module
 */
import { createHash } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { ToolgateConfigError } from "../../errors.js";

/** What a pin covers of an upstream tool. */
export interface PinnedShape {
  readonly name: string;
  /** Hashed only when present, so pins of tools without a title stay what they were. */
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly inputSchema: unknown;
  readonly outputSchema?: unknown;
}

/** The lock file, version 1. */
export interface LockFile {
  readonly version: 1;
  /** Tool name → `sha256:<hex>` of its canonical definition. */
  readonly tools: Readonly<Record<string, string>>;
}

/** Text to write as it is (the stack of {@link canonicalJson} holds these and values to write). */
class Text {
  constructor(readonly text: string) {}
}

/**
 * JSON with object keys sorted at every depth: the same definition always hashes the same. Written
 * with a stack of its own, not by recursion, so any depth JSON can carry is hashed (an upstream's
 * definition nested thousands of levels deep must not overflow the call stack).
 */
export function canonicalJson(v: unknown): string {
  const out: string[] = [];
  const todo: unknown[] = [v]; // popped from the end: pushed in reverse order of writing
  while (todo.length > 0) {
    const x = todo.pop();
    if (x instanceof Text) out.push(x.text);
    else if (Array.isArray(x)) {
      todo.push(new Text("]"));
      for (let i = x.length - 1; i >= 0; i--) {
        todo.push(x[i]);
        if (i > 0) todo.push(new Text(","));
      }
      out.push("[");
    } else if (typeof x === "object" && x !== null) {
      const o = x as Record<string, unknown>;
      const keys = Object.keys(o)
        .sort()
        .filter((k) => o[k] !== undefined);
      todo.push(new Text("}"));
      for (let i = keys.length - 1; i >= 0; i--) {
        todo.push(o[keys[i]!]);
        todo.push(new Text(`${i > 0 ? "," : ""}${JSON.stringify(keys[i])}:`));
      }
      out.push("{");
    } else out.push(JSON.stringify(x) ?? "null");
  }
  return out.join("");
}

/**
 * The pin of one tool: `sha256:` + hex of the canonical JSON of every field the proxy forwards to
 * its clients: name, description, input and output schema, and `title` when the tool has one
 * (absent, it is left out of the hash: lock files written before titles were pinned stay valid).
 * Upstream `annotations`, `icons` and `_meta` are not forwarded, so they are not pinned.
 * @example hashTool({ name: "echo", description: "Echo", inputSchema: { type: "object" } })
 */
export function hashTool(t: PinnedShape): string {
  const doc: Record<string, unknown> = { name: t.name, description: t.description ?? "", inputSchema: t.inputSchema ?? null, outputSchema: t.outputSchema ?? null };
  if (t.title !== undefined) doc.title = t.title;
  return "sha256:" + createHash("sha256").update(canonicalJson(doc)).digest("hex");
}

function bad(path: string, message: string): never {
  throw new ToolgateConfigError("E_PROXY_LOCK", `lock file ${path}: ${message}`);
}

/** Read a lock file; `undefined` when it does not exist. Throws `E_PROXY_LOCK` when it is malformed. */
export async function readLock(path: string): Promise<LockFile | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    if ((e as { code?: unknown }).code === "ENOENT") return undefined;
    bad(path, `cannot be read (${String((e as { code?: unknown }).code ?? e)})`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    bad(path, "is not valid JSON");
  }
  const d = doc as { version?: unknown; tools?: unknown };
  if (typeof doc !== "object" || doc === null || d.version !== 1) bad(path, 'expected { "version": 1, "tools": { … } }');
  if (typeof d.tools !== "object" || d.tools === null || Array.isArray(d.tools)) bad(path, '"tools" must be an object');
  for (const [k, v] of Object.entries(d.tools)) {
    if (typeof v !== "string" || !/^sha256:[0-9a-f]{64}$/.test(v)) bad(path, `tools.${k} must be "sha256:<64 hex>"`);
  }
  return { version: 1, tools: { ...(d.tools as Record<string, string>) } };
}

/**
 * Write a lock file atomically (temp file, then rename). Throws `E_PROXY_LOCK` when it cannot be
 * written; the temp file is removed then.
 * @example await writeLock("toolgate.lock.json", { version: 1, tools: { echo: hashTool(echoTool) } });
 */
export async function writeLock(path: string, lock: LockFile): Promise<void> {
  const sorted = Object.fromEntries(Object.entries(lock.tools).sort(([a], [b]) => (a < b ? -1 : 1)));
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    await writeFile(tmp, JSON.stringify({ version: 1, tools: sorted }, null, 2) + "\n", "utf8");
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    bad(path, `cannot be written (${String((e as { code?: unknown }).code ?? e)})`);
  }
}

/**
 * One line per difference between two pin sets: `new`, `changed` (old → new) and `removed` tools,
 * by name, with hashes shortened to `sha256:` + 12 hex digits.
 * @example lockChanges(oldLock.tools, newPins).forEach((l) => console.error(`lock: ${l}`));
 */
export function lockChanges(before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>): string[] {
  const short = (h: string): string => h.slice(0, 19);
  const lines: string[] = [];
  for (const name of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    const was = Object.hasOwn(before, name) ? before[name] : undefined;
    const now = Object.hasOwn(after, name) ? after[name] : undefined;
    if (was === now) continue;
    if (was === undefined) lines.push(`${name}: new ${short(now!)}`);
    else if (now === undefined) lines.push(`${name}: removed (was ${short(was)})`);
    else lines.push(`${name}: changed ${short(was)} -> ${short(now)}`);
  }
  return lines;
}

/** Why a tool is refused by its pin. */
export type PinVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: "changed" | "unpinned" };

/** Compare a tool's current hash with the lock. */
export function checkPin(lock: LockFile, name: string, hash: string): PinVerdict {
  const pinned = Object.hasOwn(lock.tools, name) ? lock.tools[name] : undefined;
  if (pinned === undefined) return { ok: false, reason: "unpinned" };
  return pinned === hash ? { ok: true } : { ok: false, reason: "changed" };
}
