/**
 * `toolgate ledger list|show|unresolved|prune --db <path|postgres url> [--json]`: the operators'
 * view of the ledger. `unresolved` exits 1 when there is something to resolve, so scripts can alert;
 * every failure (usage, a database that cannot be opened or is no ledger) exits 2. The CLI never
 * creates or migrates a ledger: it opens the store read-only, and `prune` writes only to a ledger
 * that passed that check.
 * @module
 */
import { existsSync, statSync } from "node:fs";
import { CliError, parseFlags, type Command } from "./command.js";
import { postgresLedger } from "../ledger/postgres.js";
import { sqliteLedger } from "../ledger/sqlite.js";
import type { Ledger, LedgerEntry, ListQuery } from "../ledger/types.js";
import { isToolgateConfigError } from "../errors.js";
import { MAX_LIST } from "../ledger/_decide.js";
import { _corrupt } from "../ledger/_row.js";
import { _printable } from "../_printable.js";

const usage = `Usage: toolgate ledger <list|show|unresolved|prune> --db <path|postgres://…> [options]

  list                 recent write calls, newest first
  show <id>            one entry (by entry ID, a unique prefix of it as list prints it, or call id),
                       with its stored result; an ambiguous prefix is refused (exit 2)
  unresolved           calls whose outcome is unknown: in flight (running, or abandoned by a
                       crashed process) or settled with effect "unknown"; exit code 1 if any
  prune                remove settled, resolved entries whose key expired; never unresolved
                       ones, never one whose key still deduplicates

  Exit codes: 0 done (unresolved: none), 1 unresolved calls found (or show: no such entry),
  2 usage error or the ledger cannot be opened or read. list, show and unresolved change nothing
  (SQLite is opened read-only); a database without a ledger is refused, never initialised.

Options:
  --db <path|url>      SQLite file or postgres:// connection string (required)
  --tool <name>        only this tool (list, unresolved)
  --limit <n>          at most n entries, 1 to 10000 (list, unresolved; default 100)
  --older-than <dur>   prune: also entries older than this (e.g. 30m, 12h, 7d) that hold no
                       live key (unkeyed writes, released keys); a key that still
                       deduplicates is kept until it expires, so a retry cannot run again
  --json               machine-readable output
  -h, --help           this help`;

const DURATION = /^(\d+)(ms|s|m|h|d)$/;
const UNIT: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function parseDuration(v: string): number {
  const m = DURATION.exec(v);
  if (m === null) throw new CliError("E_USAGE", `--older-than must look like 30m, 12h or 7d (got ${JSON.stringify(v)})`);
  return Number(m[1]) * UNIT[m[2]!]!;
}

/** Open and check the ledger; `readonly` creates, migrates and writes nothing. */
async function openLedger(db: string, readonly: boolean): Promise<Ledger> {
  const pgUrl = /^postgres(?:ql)?:\/\//i.test(db);
  if (!pgUrl && !existsSync(db)) throw new CliError("E_DB_NOT_FOUND", `no ledger database at ${JSON.stringify(db)}`);
  if (!pgUrl && statSync(db).isDirectory()) throw new CliError("E_DB_NOT_FOUND", `${JSON.stringify(db)} is a directory; --db takes the ledger's SQLite file`);
  const ledger = pgUrl ? postgresLedger({ connectionString: db, max: 2, readonly }) : sqliteLedger({ path: db, readonly });
  try {
    await ledger.ready();
    return ledger;
  } catch (e) {
    await ledger.close().catch(() => undefined);
    throw e;
  }
}

/** For `prune`: check read-only first that a ledger is there (so nothing is created in another database), then open it for writing. */
async function openForPrune(db: string): Promise<Ledger> {
  await (await openLedger(db, true)).close();
  return openLedger(db, false);
}

function age(ms: number): string {
  if (!Number.isFinite(ms)) return "?"; // a stored time that is not a number
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7_200) return `${Math.round(s / 60)}m`;
  if (s < 172_800) return `${Math.round(s / 3_600)}h`;
  return `${Math.round(s / 86_400)}d`;
}

/** What an operator needs to know about an entry's state. */
function status(e: LedgerEntry, now: number): string {
  if (e.state === "in_flight") return e.leaseUntil <= now ? "abandoned" : "running";
  if (typeof e.code !== "string") return "?"; // settled without a code: not written by toolgate
  return e.code === "OK" ? "ok" : e.code;
}

function view(e: LedgerEntry, now: number) {
  return {
    id: e.id,
    callId: e.callId,
    tool: e.tool,
    version: e.version,
    principal: e.principal,
    key: e.key,
    status: status(e, now),
    state: e.state,
    code: e.code,
    effect: e.effect,
    effects: e.effects,
    attempts: e.attempts,
    claims: e.claims,
    ageMs: now - e.createdAt,
    createdAt: new Date(e.createdAt).toISOString(),
    updatedAt: new Date(e.updatedAt).toISOString(),
    expiresAt: new Date(e.expiresAt).toISOString(),
  };
}

/** A stored field as it is safe to print on a terminal (src/_printable.ts). */
const printable = _printable;

/**
 * JSON as it is safe to print: JSON.stringify escapes the C0 controls only; the C1 controls and
 * the bidirectional overrides (a stored key with U+202E reorders what the terminal shows) are
 * written as `\uXXXX` escapes too, which JSON reads back as the same characters.
 */
function printableJson(v: unknown, space?: number): string {
  return JSON.stringify(v, null, space).replace(/[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function table(entries: readonly LedgerEntry[], now: number, withEffects: boolean): string {
  if (entries.length === 0) return "(none)";
  // Every cell as it is safe to print, once: the widths are measured on what is printed.
  const rows = entries.map((e) => [
    e.id.slice(0, 8),
    age(now - e.createdAt),
    `${e.tool}@${e.version}`,
    status(e, now),
    e.effect,
    e.key ?? "-",
    ...(withEffects ? [e.effects.map((x) => `${x.kind}:${x.ref}`).join(",") || "-"] : []),
  ].map(printable));
  const head = ["ID", "AGE", "TOOL", "STATUS", "EFFECT", "KEY", ...(withEffects ? ["EFFECTS"] : [])];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: readonly string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ");
  return [line(head), ...rows.map(line)].join("\n");
}

async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseFlags({
    args: [...argv],
    allowPositionals: true,
    options: {
      db: { type: "string" },
      json: { type: "boolean", default: false },
      tool: { type: "string" },
      limit: { type: "string" },
      "older-than": { type: "string" },
    },
  });
  const { values, positionals } = parsed;
  const [sub, ...rest] = positionals;
  if (sub === undefined || !["list", "show", "unresolved", "prune"].includes(sub)) {
    throw new CliError("E_USAGE", sub === undefined ? "missing subcommand" : `unknown subcommand ${JSON.stringify(sub)}`);
  }
  if (values.db === undefined || values.db.length === 0) throw new CliError("E_USAGE", "--db is required");
  if (sub === "show" ? rest.length !== 1 : rest.length !== 0) {
    throw new CliError("E_USAGE", sub === "show" ? "show takes exactly one id" : `unexpected argument ${JSON.stringify(rest[0])}`);
  }
  // A flag the subcommand does not use is a mistake to report, not to ignore.
  const uses: Record<string, readonly string[]> = { list: ["tool", "limit"], unresolved: ["tool", "limit"], show: [], prune: ["older-than"] };
  for (const flag of ["tool", "limit", "older-than"] as const) {
    if (values[flag] !== undefined && !uses[sub]!.includes(flag)) throw new CliError("E_USAGE", `--${flag} does not apply to ${sub}`);
  }
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = /^\d+$/.test(values.limit) ? Number(values.limit) : Number.NaN; // decimal digits only, as check's --runs (no 0x10, 1e2, " 5")
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST) throw new CliError("E_USAGE", `--limit must be an integer from 1 to ${MAX_LIST}`);
  }
  const olderThanMs = values["older-than"] === undefined ? undefined : parseDuration(values["older-than"]);
  const query = { ...(values.tool !== undefined ? { tool: values.tool } : {}), ...(limit !== undefined ? { limit } : {}) };

  let ledger: Ledger;
  try {
    ledger = sub === "prune" ? await openForPrune(values.db) : await openLedger(values.db, true);
  } catch (e) {
    if (e instanceof CliError) throw e;
    return fail("cannot open the ledger", e);
  }
  try {
    return await runOn(ledger, sub, rest[0], values.json, query, olderThanMs);
  } catch (e) {
    return fail("cannot read the ledger", e, "E_DB_READ");
  } finally {
    await ledger.close().catch(() => undefined);
  }
}

/** Report a failure of the store itself: exit 2, so `unresolved`'s 1 always means "found some". */
function fail(what: string, e: unknown, otherwise = "E_DB_OPEN"): number {
  const code = isToolgateConfigError(e) ? e.code : ((e as { code?: unknown } | null)?.code ?? otherwise);
  const message = e instanceof Error && e.message.length > 0 ? e.message : String(code);
  // The message can name stored text (an entry ID in E_LEDGER_CORRUPT, a driver quoting a value).
  process.stderr.write(`toolgate ledger: ${what}: ${printable(message)} (${printable(String(code))})\n`);
  return 2;
}

async function runOn(
  ledger: Ledger,
  sub: string,
  id: string | undefined,
  json: boolean,
  query: ListQuery,
  olderThanMs: number | undefined,
): Promise<number> {
  const out = (s: string) => void process.stdout.write(s + "\n");
  const now = Date.now();
  switch (sub) {
    case "list": {
      const entries = await ledger.list(query);
      out(json ? printableJson(entries.map((e) => view(e, now))) : table(entries, now, false));
      return 0;
    }
    case "unresolved": {
      const entries = await ledger.unresolved(query);
      out(json ? printableJson(entries.map((e) => view(e, now))) : table(entries, now, true));
      return entries.length === 0 ? 0 : 1;
    }
    case "show": {
      const found = await findEntry(ledger, id!);
      if (!("entry" in found)) {
        process.stderr.write(`toolgate ledger: ${found.message}\n`);
        return found.exit;
      }
      const e = found.entry;
      let result: unknown = null;
      try {
        if (e.result !== null) result = JSON.parse(e.result);
      } catch {
        return fail("cannot show the entry", _corrupt(e.id, "result"));
      }
      out(printableJson({ ...view(e, now), result }, json ? undefined : 2));
      return 0;
    }
    default: {
      const removed = await ledger.prune(olderThanMs === undefined ? {} : { olderThanMs });
      out(json ? JSON.stringify({ removed }) : `removed ${removed} entr${removed === 1 ? "y" : "ies"}`);
      return 0;
    }
  }
}

/** Shortest ID prefix `show` looks up. */
const MIN_PREFIX = 4;
/** How many matches an ambiguous prefix names. */
const SHOWN_MATCHES = 5;

/**
 * `show`'s argument: an entry ID (any case), a call id, or a unique prefix of an entry ID (what
 * `list` prints), searched among the newest {@link MAX_LIST} entries and the unresolved ones. A
 * call id that is also a prefix of another entry's ID is ambiguous (exit 2, both named).
 */
async function findEntry(ledger: Ledger, id: string): Promise<{ entry: LedgerEntry } | { exit: number; message: string }> {
  const hex = /^[0-9a-f-]{1,36}$/i.test(id);
  const exact = (await ledger.get(id)) ?? (hex ? await ledger.get(id.toLowerCase()) : undefined);
  // An exact entry ID wins; a call id only when it is not also another entry's ID prefix.
  if (exact !== undefined && (exact.id.toLowerCase() === id.toLowerCase() || !hex || id.length < MIN_PREFIX)) return { entry: exact };
  const none = { exit: 1, message: `no entry ${JSON.stringify(id)}` };
  if (!hex) return none;
  if (id.length < MIN_PREFIX) return { exit: 1, message: `no entry ${JSON.stringify(id)} (an ID prefix needs at least ${MIN_PREFIX} characters)` };
  const prefix = id.toLowerCase();
  const [recent, open] = await Promise.all([ledger.list({ limit: MAX_LIST }), ledger.unresolved({ limit: MAX_LIST })]);
  const matches = new Map<string, LedgerEntry>();
  if (exact !== undefined) matches.set(exact.id, exact); // the call id's entry
  for (const e of [...recent, ...open]) if (e.id.toLowerCase().startsWith(prefix)) matches.set(e.id, e);
  const [first, ...more] = matches.values();
  if (first !== undefined && more.length === 0) return { entry: first };
  if (first !== undefined) {
    const ids = [...matches.keys()].sort().map(printable); // stored IDs: a row toolgate did not write can hold anything
    const named = ids.slice(0, SHOWN_MATCHES).join(", ") + (ids.length > SHOWN_MATCHES ? ` and ${ids.length - SHOWN_MATCHES} more` : "");
    return { exit: 2, message: `ID prefix ${JSON.stringify(id)} is ambiguous: it matches ${named}; give more characters (E_AMBIGUOUS_ID)` };
  }
  if (recent.length === MAX_LIST) return { exit: 1, message: `no entry ${JSON.stringify(id)} among the newest ${MAX_LIST} entries; give the full ID (list --json prints it)` };
  return none;
}

const command: Command = { summary: "Inspect the effect ledger: list, show, unresolved, prune", usage, run };
export default command;
