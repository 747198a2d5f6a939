/**
 * Ledger overhead: a keyed write call through the gate with each store, against memoryLedger.
 * Rows: p50/p99 per call and throughput, sequential and with 32 calls in flight. Targets (issue 3):
 * SQLite adds ≤ 100 µs p50 per write call with durable commits; PostgreSQL on loopback sustains
 * ≥ 2,000 write calls/s with 32 in flight. SQLite and PostgreSQL data live on the real disk
 * (os.tmpdir()), durable commits (fsync) included.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { z } from "zod";
import { createGate, defineTool, type Gate } from "../src/index.js";
import { memoryLedger, postgresLedger, sqliteLedger, type Ledger } from "../src/ledger/index.js";
import { startPostgres } from "../test/ledger/_pg.js";
import { verdict } from "./harness.js";

const pay = defineTool({
  name: "pay",
  version: "1",
  description: "Pay",
  input: z.object({ orderId: z.string(), amountCents: z.number().int() }),
  output: z.object({ paymentId: z.string() }),
  effect: "write",
  execute: (i) => ({ paymentId: `p_${i.orderId}` }),
});

interface Stats {
  p50: number;
  p99: number;
  perSec: number;
}

let seq = 0;
async function measure(gate: Gate, calls: number, inFlight: number): Promise<Stats> {
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < calls) {
      next++;
      const id = `o_${++seq}`;
      const s = performance.now();
      const r = await gate.call("pay", { orderId: id, amountCents: 1 }, { idempotencyKey: id });
      lat.push(performance.now() - s);
      if (!r.ok) throw new Error(`bench call failed: ${r.code}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const total = performance.now() - t0;
  lat.sort((a, b) => a - b);
  return { p50: lat[Math.floor(lat.length / 2)]! * 1000, p99: lat[Math.floor(lat.length * 0.99)]! * 1000, perSec: (calls / total) * 1000 };
}

function row(name: string, s: Stats, base?: Stats): void {
  const added = base === undefined ? "" : `  +${Math.round(s.p50 - base.p50)} µs p50 vs memory`;
  process.stdout.write(`${name.padEnd(40)} p50 ${Math.round(s.p50).toString().padStart(6)} µs  p99 ${Math.round(s.p99).toString().padStart(7)} µs  ${Math.round(s.perSec).toString().padStart(7)} calls/s${added}\n`);
}

/** For context: one durable SQLite commit (a one-row insert, WAL, synchronous=FULL) on the same disk. */
function rawCommit(dir: string): Stats {
  const db = new Database(join(dir, "raw.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  const ins = db.prepare("INSERT INTO t (v) VALUES (?)");
  const lat: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < 1_000; i++) {
    const s = performance.now();
    ins.run("x");
    lat.push(performance.now() - s);
  }
  const total = performance.now() - t0;
  db.close();
  lat.sort((a, b) => a - b);
  return { p50: lat[500]! * 1000, p99: lat[990]! * 1000, perSec: (1_000 / total) * 1000 };
}

export default async function bench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-bench-ledger-"));
  process.stdout.write("\n## context: the disk\n");
  row("one durable SQLite commit (no gate)", rawCommit(dir));
  const pg = await startPostgres();
  const ledgers: Record<string, Ledger> = {
    memory: memoryLedger(),
    sqlite: sqliteLedger({ path: join(dir, "bench.db") }),
    sqliteNormal: sqliteLedger({ path: join(dir, "bench-normal.db"), synchronous: "normal" }),
    postgres: postgresLedger({ connectionString: await pg.newDatabase(), max: 32 }),
  };
  await ledgers.postgres!.ready();
  const gates = Object.fromEntries(Object.entries(ledgers).map(([k, l]) => [k, createGate({ tools: [pay], ledger: l })]));
  try {
    for (const g of Object.values(gates)) await measure(g, 300, 4); // warm-up
    for (const [mode, inFlight, calls] of [["sequential", 1, 1_500], ["32 in flight", 32, 4_000]] as const) {
      process.stdout.write(`\n## keyed write call through the gate, ${mode}\n`);
      const stats: Record<string, Stats> = {};
      for (const name of ["memory", "sqlite", "sqliteNormal", "postgres"]) stats[name] = await measure(gates[name]!, name === "memory" ? calls * 2 : calls, inFlight);
      row("memoryLedger", stats.memory!);
      row("sqliteLedger (WAL, synchronous=FULL)", stats.sqlite!, stats.memory);
      row("sqliteLedger (WAL, synchronous=NORMAL)", stats.sqliteNormal!, stats.memory);
      row("postgresLedger (loopback)", stats.postgres!, stats.memory);
      if (inFlight === 1) verdict("sqlite added p50 per write call (sequential)", stats.sqlite!.p50 - stats.memory!.p50, 100, " µs");
      else {
        verdict("sqlite added p50 per write call (32 in flight)", stats.sqlite!.p50 - stats.memory!.p50, 100, " µs");
        verdict("postgres write calls/s (32 in flight)", stats.postgres!.perSec, 2_000, "/s", true);
      }
    }
  } finally {
    await Promise.all(Object.values(ledgers).map((l) => l.close()));
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
