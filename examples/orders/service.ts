/**
 * The service the example tools call: an interface and an in-memory fake with fault injection.
 * (Fakes are fine for the service a tool calls; the gate, transports and stores are real.)
 */
import type { OrderRecord, RefundRecord } from "./schemas.js";

/** What the backend answers for a lookup (typed by its client; the gate still checks it at run time). */
export interface OrdersAnswer {
  found: boolean;
  customerId: string;
  orders: OrderRecord[];
}

/** What the example tools need from an orders backend. */
export interface OrdersService {
  findOrders(customerId: string, opts: { includeHistory: boolean; signal?: AbortSignal }): Promise<OrdersAnswer>;
  createRefund(req: { orderId: string; amountCents: number; reason?: string | undefined; idempotencyKey?: string | undefined }): Promise<RefundRecord>;
  /** Every refund the backend holds (to prove exactly-once). */
  refunds(): Promise<readonly RefundRecord[]>;
}

/** Faults to inject, consumed one call at a time. */
export interface Faults {
  /** The next N `findOrders` calls throw a transient (ECONNRESET-like) error. */
  transientReads: number;
  /** The next `findOrders` answer carries this status instead of a valid one. */
  badStatus: string | undefined;
  /** The next N `createRefund` calls commit, then fail as if the response was lost. */
  lostRefundResponses: number;
}

/** An error shaped like a dropped connection. */
export class ConnectionResetError extends Error {
  readonly code = "ECONNRESET";
  constructor() {
    super("socket hang up");
  }
}

/** In-memory orders with fault injection, for tests and the quick example. */
export function createFakeOrders(seed: Record<string, readonly OrderRecord[]> = DEFAULT_ORDERS): OrdersService & {
  faults: Faults;
  calls: { findOrders: number; createRefund: number };
} {
  const orders = new Map(Object.entries(seed));
  const refunds: RefundRecord[] = [];
  const byKey = new Map<string, RefundRecord>();
  const faults: Faults = { transientReads: 0, badStatus: undefined, lostRefundResponses: 0 };
  const calls = { findOrders: 0, createRefund: 0 };
  return {
    faults,
    calls,
    async findOrders(customerId, { includeHistory }) {
      calls.findOrders++;
      if (faults.transientReads > 0) {
        faults.transientReads--;
        throw new ConnectionResetError();
      }
      const list = orders.get(customerId) ?? [];
      const visible = (includeHistory ? list : list.filter((o) => o.status !== "cancelled")).map((o) => ({ ...o }));
      if (faults.badStatus !== undefined && visible.length > 0) {
        const status = faults.badStatus;
        faults.badStatus = undefined;
        return { found: true, customerId, orders: visible.map((o, i) => (i === 0 ? { ...o, status: status as OrderRecord["status"] } : o)) };
      }
      return { found: visible.length > 0, customerId, orders: visible };
    },
    async createRefund({ orderId, amountCents, idempotencyKey }) {
      calls.createRefund++;
      if (idempotencyKey !== undefined) {
        const prior = byKey.get(idempotencyKey);
        if (prior !== undefined) return prior;
      }
      const known = [...orders.values()].some((l) => l.some((o) => o.id === orderId && o.status === "paid"));
      const refund: RefundRecord = {
        refundId: `rf_${refunds.length + 1}`,
        orderId,
        amountCents,
        status: known ? "accepted" : "declined",
      };
      if (known) refunds.push(refund);
      if (idempotencyKey !== undefined) byKey.set(idempotencyKey, refund);
      if (faults.lostRefundResponses > 0) {
        faults.lostRefundResponses--;
        throw new ConnectionResetError();
      }
      return refund;
    },
    async refunds() {
      return refunds.slice();
    },
  };
}

/** Seed data of the example. */
export const DEFAULT_ORDERS: Record<string, readonly OrderRecord[]> = {
  c_1: [
    { id: "o_100", status: "paid" },
    { id: "o_101", status: "pending" },
    { id: "o_102", status: "cancelled" },
  ],
  c_2: [{ id: "o_200", status: "paid" }],
};
