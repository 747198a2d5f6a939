/**
 * The demo's story: five scenes, each with the faults it injects into the SQLite orders service,
 * the scripted agent's turns, and the check of what it must show.
 * @module
 */
import { sqliteLedger } from "../ledger/sqlite.js";
import type { LoopSession, LoopStep } from "../loop/session.js";
import { readRefundRows, type SqliteOrders } from "../../examples/orders/sqlite-service.js";

/** One scene: the faults it injects, the agent's turns, and the check of what it must show. */
export interface Scene {
  readonly id: string;
  readonly title: string;
  readonly expected: string;
  readonly session: "new" | "previous";
  before?(orders: SqliteOrders): string | undefined;
  readonly turns: ReadonlyArray<(last: readonly LoopStep[]) => readonly Proposed[]>;
  check(steps: readonly LoopStep[], ctx: CheckContext): { ok: boolean; observed: string } | Promise<{ ok: boolean; observed: string }>;
}

/** What a scene's check may look at. */
export interface CheckContext {
  readonly session: LoopSession;
  /** Calls sent to the server during the scene. */
  readonly sent: number;
  readonly orders: SqliteOrders;
  readonly ledgerDb: string;
}

/** A ledger entry as the demo shows it (never the arguments: the ledger does not hold them). */
export interface DemoLedgerEntry {
  readonly tool: string;
  readonly key: string | null;
  readonly state: string;
  readonly code: string | null;
  readonly effect: string;
  readonly attempts: number;
}

/** Read the ledger file on its own connection (a second process may share it). */
export async function readLedger(path: string): Promise<DemoLedgerEntry[]> {
  const ledger = sqliteLedger({ path });
  try {
    return (await ledger.list()).map((e) => ({ tool: e.tool, key: e.key, state: e.state, code: e.code, effect: e.effect, attempts: e.attempts }));
  } finally {
    await ledger.close();
  }
}

/** A call the scripted agent proposes (the demo adds the call id). */
export interface Proposed {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly idempotencyKey?: string;
}

function paths(step: LoopStep | undefined): string[] {
  const r = step?.result;
  return r !== undefined && !r.ok ? (r.issues ?? []).map((i) => i.path) : [];
}
function codeOf(step: LoopStep | undefined): string {
  if (step === undefined) return "no call";
  if (step.result === undefined) return "not sent";
  return step.result.ok ? "ok" : step.result.code;
}

const REFUND_KEY = "refund-o_100-demo";

/** The story, in order. */
export const SCENES: readonly Scene[] = [
  {
    id: "repair",
    title: "The model sends customerId as a number",
    expected: "INVALID_INPUT naming customerId → repair → corrected call succeeds",
    session: "new",
    turns: [
      () => [{ tool: "get_order", args: { customerId: 42 } }],
      (last) => {
        const d = last[0]?.decision;
        // The scripted agent fixes only the reported field.
        return d?.action === "repair" && d.issues.some((i) => i.path === "customerId") ? [{ tool: "get_order", args: { customerId: "c_1" } }] : [];
      },
      () => [],
    ],
    check: (s) => {
      const ok =
        codeOf(s[0]) === "INVALID_INPUT" && paths(s[0]).includes("customerId") && s[0]?.decision.action === "repair" && codeOf(s[1]) === "ok" && s[1]?.decision.action === "continue";
      return { ok, observed: `${codeOf(s[0])}(${paths(s[0]).join(",")}) → ${s[0]?.decision.action ?? "-"} → ${codeOf(s[1])}` };
    },
  },
  {
    id: "no-new-evidence",
    title: "The model resends the same bad payload",
    expected: "refused before sending (no new evidence), run stopped",
    session: "previous",
    turns: [() => [{ tool: "get_order", args: { customerId: 42 } }]],
    check: (s, { sent, session }) => {
      const d = s[0]?.decision;
      const ok = s[0]?.result === undefined && d?.action === "stop" && d.reason === "no_new_evidence" && sent === 0 && session.outcome?.reason === "no_new_evidence";
      return { ok, observed: `${codeOf(s[0])}, ${d?.action ?? "-"} (${d?.reason ?? "-"}), ${sent} call(s) sent` };
    },
  },
  {
    id: "invalid-output",
    title: "The service answers with an unknown order status",
    expected: "INVALID_OUTPUT → stop, evidence recorded, the next call never sent",
    session: "new",
    before: (o) => (o.setFaults({ badStatus: "refunded_partially" }), 'fault: the next lookup returns status "refunded_partially"'),
    turns: [() => [{ tool: "get_order", args: { customerId: "c_1" } }], () => [{ tool: "get_order", args: { customerId: "c_2" } }]],
    check: (s, { sent, session }) => {
      const ev = session.evidence[0];
      const ok =
        codeOf(s[0]) === "INVALID_OUTPUT" &&
        s[0]?.decision.reason === "invalid_output" &&
        ev?.code === "INVALID_OUTPUT" &&
        ev.issuePaths.includes("orders.0.status") &&
        ev.arguments === undefined &&
        sent === 1 &&
        s.length === 1;
      return { ok, observed: `${codeOf(s[0])}(${paths(s[0]).join(",")}) → ${s[0]?.decision.action ?? "-"}, evidence ${ev === undefined ? "missing" : "recorded"}, ${sent} call(s) sent` };
    },
  },
  {
    id: "transient",
    title: "The database connection drops once",
    expected: "retried inside the gate (attempts 2) → success, the model sees one answer",
    session: "new",
    before: (o) => (o.setFaults({ transientReads: 1 }), "fault: the next lookup fails with ECONNRESET"),
    turns: [() => [{ tool: "get_order", args: { customerId: "c_2" } }], () => []],
    check: (s, { orders }) => {
      const r = s[0]?.result;
      const ok = r?.ok === true && r.meta.attempts === 2 && s[0]?.decision.action === "continue" && orders.faults().transientReads === 0;
      return { ok, observed: `${codeOf(s[0])}, attempts ${r?.meta.attempts ?? "-"}` };
    },
  },
  {
    id: "lost-refund",
    title: "A refund commits, then its response is lost",
    expected: "retried with its idempotency key → success; resent → replayed; exactly 1 refund in the database",
    session: "new",
    before: (o) => (o.setFaults({ lostRefundResponses: 1 }), "fault: the next refund commits, then the connection drops"),
    turns: [
      () => [{ tool: "create_refund", args: { orderId: "o_100", amountCents: 2500, reason: "damaged in transit" }, idempotencyKey: REFUND_KEY }],
      () => [{ tool: "create_refund", args: { orderId: "o_100", amountCents: 2500, reason: "damaged in transit" }, idempotencyKey: REFUND_KEY }],
      () => [],
    ],
    check: async (s, { orders, ledgerDb }) => {
      const first = s[0]?.result;
      const again = s[1]?.result;
      const rows = readRefundRows(orders.path).filter((r) => r.orderId === "o_100");
      const entries = (await readLedger(ledgerDb)).filter((e) => e.key === REFUND_KEY);
      const ok =
        first?.ok === true &&
        first.meta.attempts === 2 &&
        again?.ok === true &&
        again.meta.replayed === true &&
        again.meta.attempts === 0 &&
        JSON.stringify(again.data) === JSON.stringify(first.data) &&
        rows.length === 1 &&
        rows[0]?.idempotencyKey === REFUND_KEY &&
        entries.length === 1 &&
        entries[0]?.state === "settled" &&
        entries[0].code === "OK";
      const resend = again?.ok === true && again.meta.replayed === true ? "replayed" : codeOf(s[1]);
      return { ok, observed: `${codeOf(s[0])} (attempts ${first?.meta.attempts ?? "-"}), resend ${resend}, ${rows.length} refund row(s) for o_100, ${entries.length} ledger entry` };
    },
  },
];
