/**
 * `toolgate ledger list|show|unresolved|prune --db <path|postgres url> [--json]`: the operators'
 * view of the ledger. `unresolved` exits 1 when there is something to resolve, so scripts can alert.
 * @module
 */
import { existsSync } from "node:fs";
import { CliError, parseFlags, type Command } from "./command.js";
import { postgresLedger } from "../ledger/postgres.js";
import { sqliteLedger } from "../ledger/sqlite.js";
import type { Ledger, LedgerEntry } from "../ledger/types.js";
import { isToolgateConfigError } from "../errors.js";

const usage = `Usage: toolgate ledger <list|show|unresolved|prune> --db <path|postgres://…> [options]

  list                 recent write calls, newest first
  show <id>            one entry (by entry id or call id), with its stored result
  unresolved           calls whose outcome is unknown: in flight (running, or abandoned by a
                       crashed process) or settled with effect "unknown"; exit code 1 if any
  prune                remove settled, resolved entries whose key expired (never unresolved ones)

Options:
  --db <path|url>      SQLite file or postgres:// connection string (required)
  --tool <name>        only this tool (list, unresolved)
  --limit <n>          at most n entries (list, unresolved; default 100)
  --older-than <dur>   prune: also settled entries older than this (e.g. 30m, 12h, 7d)
  --json               machine-readable output`;

const DURATION = /^(\d+)(ms|s|m|h|d)$/;
const UNIT: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function parseDuration(v: string): number {
  const m = DURATION.exec(v);
  if (m === null) throw new CliError("E_USAGE", `--older-than must look like 30m, 12h or 7d (got ${JSON.stringify(v)})`);
  return Number(m[1]) * UNIT[m[2]!]!;
}

function openLedger(db: string): Ledger {
  if (/^postgres(?:ql)?:\/\//i.test(db)) return postgresLedger({ connectionString: db, max: 2 });
  if (!existsSync(db)) throw new CliError("E_DB_NOT_FOUND", `no ledger database at ${JSON.stringify(db)}`);
  try {
    return sqliteLedger({ path: db });
  } catch (e) {
    throw new CliError(isToolgateConfigError(e) ? e.code : "E_DB_OPEN", e instanceof Error ? e.message : String(e));
  }
}

function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7_200) return `${Math.round(s / 60)}m`;
  if (s < 172_800) return `${Math.round(s / 3_600)}h`;
  return `${Math.round(s / 86_400)}d`;
}

/** What an operator needs to know about an entry's state. */
function status(e: LedgerEntry, now: number): string {
  if (e.state === "in_flight") return e.leaseUntil <= now ? "abandoned" : "running";
  return e.code === "OK" ? "ok" : `${String(e.code)}`;
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

function table(entries: readonly LedgerEntry[], now: number, withEffects: boolean): string {
  if (entries.length === 0) return "(none)";
  const rows = entries.map((e) => [
    e.id.slice(0, 8),
    age(now - e.createdAt),
    `${e.tool}@${e.version}`,
    status(e, now),
    e.effect,
    e.key ?? "-",
    ...(withEffects ? [e.effects.map((x) => `${x.kind}:${x.ref}`).join(",") || "-"] : []),
  ]);
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
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1) throw new CliError("E_USAGE", "--limit must be a positive integer");
  }
  const olderThanMs = values["older-than"] === undefined ? undefined : parseDuration(values["older-than"]);
  const query = { ...(values.tool !== undefined ? { tool: values.tool } : {}), ...(limit !== undefined ? { limit } : {}) };
  const out = (s: string) => void process.stdout.write(s + "\n");

  const ledger = openLedger(values.db);
  try {
    try {
      await ledger.ready();
    } catch (e) {
      process.stderr.write(`toolgate ledger: cannot open the ledger: ${e instanceof Error ? e.message : String(e)}\n`);
      return 1;
    }
    const now = Date.now();
    switch (sub) {
      case "list": {
        const entries = await ledger.list(query);
        out(values.json ? JSON.stringify(entries.map((e) => view(e, now))) : table(entries, now, false));
        return 0;
      }
      case "unresolved": {
        const entries = await ledger.unresolved(query);
        out(values.json ? JSON.stringify(entries.map((e) => view(e, now))) : table(entries, now, true));
        return entries.length === 0 ? 0 : 1;
      }
      case "show": {
        const e = await ledger.get(rest[0]!);
        if (e === undefined) {
          process.stderr.write(`toolgate ledger: no entry ${JSON.stringify(rest[0])}\n`);
          return 1;
        }
        const result: unknown = e.result === null ? null : JSON.parse(e.result);
        out(values.json ? JSON.stringify({ ...view(e, now), result }) : JSON.stringify({ ...view(e, now), result }, null, 2));
        return 0;
      }
      default: {
        const removed = await ledger.prune(olderThanMs === undefined ? {} : { olderThanMs });
        out(values.json ? JSON.stringify({ removed }) : `removed ${removed} entr${removed === 1 ? "y" : "ies"}`);
        return 0;
      }
    }
  } finally {
    await ledger.close();
  }
}

const command: Command = { summary: "Inspect the effect ledger: list, show, unresolved, prune", usage, run };
export default command;
