/**
 * The orders service over a real SQLite file (better-sqlite3), with the same fault injection as the
 * in-memory fake. Faults live in a `faults` table of the same file, so a process that does not
 * serve the tools (the demo, a test) can inject them into the one that does.
 */
import Database from "better-sqlite3";
import { ConnectionResetError, DEFAULT_ORDERS, type Faults, type OrdersService } from "./service.js";
import type { OrderRecord, RefundRecord } from "./schemas.js";

/** An OrdersService backed by one SQLite file, plus the controls the demo needs. */
export interface SqliteOrders extends OrdersService {
  /** The database file. */
  readonly path: string;
  /** Set faults for whichever process serves the tools (fields left out are unchanged). */
  setFaults(faults: Partial<Faults>): void;
  /** The faults not consumed yet. */
  faults(): Faults;
  /** Every refund row, accepted or declined, with its idempotency key (to prove exactly-once). */
  refundRows(): Array<RefundRecord & { idempotencyKey: string | null }>;
  /** False once `close()` ran. */
  isOpen(): boolean;
  close(): void;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, status TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS orders_by_customer ON orders (customer_id);
CREATE TABLE IF NOT EXISTS refunds (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  refund_id TEXT NOT NULL UNIQUE,
  order_id TEXT NOT NULL,
  amount_cents INTEGER NOT NULL,
  status TEXT NOT NULL,
  idempotency_key TEXT UNIQUE
);
CREATE TABLE IF NOT EXISTS faults (name TEXT PRIMARY KEY, remaining INTEGER NOT NULL, value TEXT);
`;

/**
 * Read every refund row straight from the file, on a fresh read-only connection (the proof the
 * demo prints: what is really in the database).
 * @example readRefundRows(path).filter((r) => r.orderId === "o_100").length // 1
 */
export function readRefundRows(path: string): Array<RefundRecord & { idempotencyKey: string | null }> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT * FROM refunds ORDER BY seq").all() as RefundRow[]).map((r) => ({ ...toRefund(r), idempotencyKey: r.idempotency_key }));
  } finally {
    db.close();
  }
}

interface RefundRow {
  refund_id: string;
  order_id: string;
  amount_cents: number;
  status: RefundRecord["status"];
  idempotency_key: string | null;
}

function toRefund(r: RefundRow): RefundRecord {
  return { refundId: r.refund_id, orderId: r.order_id, amountCents: r.amount_cents, status: r.status };
}

/**
 * Open (and create, seeding the example's orders when the table is empty) an orders database.
 * Several processes may open the same file (WAL, 5 s busy timeout).
 * @example
 * const orders = openSqliteOrders(join(tmpdir(), "orders.db"));
 * orders.setFaults({ lostRefundResponses: 1 });
 */
export function openSqliteOrders(path: string, seed: Record<string, readonly OrderRecord[]> = DEFAULT_ORDERS): SqliteOrders {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.exec(SCHEMA);
  const count = db.prepare("SELECT count(*) AS n FROM orders").get() as { n: number };
  if (count.n === 0) {
    const insert = db.prepare("INSERT INTO orders (id, customer_id, status) VALUES (?, ?, ?)");
    db.transaction(() => {
      for (const [customer, list] of Object.entries(seed)) for (const o of list) insert.run(o.id, customer, o.status);
    })();
  }

  const ordersOf = db.prepare("SELECT id, status FROM orders WHERE customer_id = ? ORDER BY id");
  const paid = db.prepare("SELECT 1 FROM orders WHERE id = ? AND status = 'paid'");
  const byKey = db.prepare("SELECT * FROM refunds WHERE idempotency_key = ?");
  const nextSeq = db.prepare("SELECT coalesce(max(seq), 0) + 1 AS n FROM refunds");
  const insertRefund = db.prepare("INSERT INTO refunds (refund_id, order_id, amount_cents, status, idempotency_key) VALUES (?, ?, ?, ?, ?)");
  const getFault = db.prepare("SELECT remaining, value FROM faults WHERE name = ?");
  const putFault = db.prepare("INSERT INTO faults (name, remaining, value) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET remaining = excluded.remaining, value = excluded.value");

  /** Consume one unit of a fault; returns its value when one was pending. */
  const consume = (name: keyof Faults): { value: string | null } | undefined => {
    const f = getFault.get(name) as { remaining: number; value: string | null } | undefined;
    if (f === undefined || f.remaining <= 0) return undefined;
    putFault.run(name, f.remaining - 1, f.value);
    return { value: f.value };
  };

  const findTx = db.transaction((customerId: string, includeHistory: boolean) => {
    if (consume("transientReads") !== undefined) return "reset" as const;
    const list = ordersOf.all(customerId) as OrderRecord[];
    const visible = includeHistory ? list : list.filter((o) => o.status !== "cancelled");
    if (visible.length > 0) {
      const bad = consume("badStatus");
      if (bad !== undefined && bad.value !== null) {
        const status = bad.value as OrderRecord["status"];
        return { found: true, customerId, orders: visible.map((o, i) => (i === 0 ? { ...o, status } : o)) };
      }
    }
    return { found: visible.length > 0, customerId, orders: visible };
  });

  const refundTx = db.transaction((orderId: string, amountCents: number, key: string | undefined) => {
    if (key !== undefined) {
      const prior = byKey.get(key) as RefundRow | undefined;
      if (prior !== undefined) return { refund: toRefund(prior), lost: false };
    }
    const status: RefundRecord["status"] = paid.get(orderId) === undefined ? "declined" : "accepted";
    const seq = (nextSeq.get() as { n: number }).n;
    const refund: RefundRecord = { refundId: `rf_${seq}`, orderId, amountCents, status };
    insertRefund.run(refund.refundId, orderId, amountCents, status, key ?? null);
    return { refund, lost: consume("lostRefundResponses") !== undefined };
  });

  return {
    path,
    async findOrders(customerId, { includeHistory }) {
      const r = findTx.immediate(customerId, includeHistory);
      if (r === "reset") throw new ConnectionResetError();
      return r;
    },
    async createRefund({ orderId, amountCents, idempotencyKey }) {
      const { refund, lost } = refundTx.immediate(orderId, amountCents, idempotencyKey);
      // The refund is committed; the response is lost on the way back.
      if (lost) throw new ConnectionResetError();
      return refund;
    },
    async refunds() {
      return (db.prepare("SELECT * FROM refunds WHERE status = 'accepted' ORDER BY seq").all() as RefundRow[]).map(toRefund);
    },
    refundRows() {
      return (db.prepare("SELECT * FROM refunds ORDER BY seq").all() as RefundRow[]).map((r) => ({ ...toRefund(r), idempotencyKey: r.idempotency_key }));
    },
    setFaults(f) {
      db.transaction(() => {
        if (f.transientReads !== undefined) putFault.run("transientReads", f.transientReads, null);
        if (f.badStatus !== undefined) putFault.run("badStatus", 1, f.badStatus);
        if (f.lostRefundResponses !== undefined) putFault.run("lostRefundResponses", f.lostRefundResponses, null);
      }).immediate();
    },
    faults() {
      const n = (name: keyof Faults) => (getFault.get(name) as { remaining: number; value: string | null } | undefined) ?? { remaining: 0, value: null };
      const bad = n("badStatus");
      return { transientReads: n("transientReads").remaining, badStatus: bad.remaining > 0 && bad.value !== null ? bad.value : undefined, lostRefundResponses: n("lostRefundResponses").remaining };
    },
    isOpen() {
      return db.open;
    },
    close() {
      db.close();
    },
  };
}
