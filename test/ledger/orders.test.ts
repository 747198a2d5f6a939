/**
 * The running example's write: a refund whose response is lost after the commit is retried with
 * its idempotency key, and the database holds exactly one refund. `create_refund` is given the
 * two guarantee fields here the way examples/orders/tools.ts should declare them.
 */
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGate, defineTool, type AnyTool } from "../../src/index.js";
import { sqliteLedger } from "../../src/ledger/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";

const dir = mkdtempSync(join(tmpdir(), "toolgate-orders-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function withGuarantees(t: AnyTool): AnyTool {
  if (t.name !== "create_refund" || t.idempotentDownstream === true) return t;
  return defineTool({ ...t, idempotencyKey: (input: { orderId: string }) => `refund:${input.orderId}`, idempotentDownstream: true });
}

describe("create_refund with a lost response", () => {
  it("is retried with its key and applied exactly once; a later identical call replays", async () => {
    const service = createFakeOrders();
    const tools = makeOrderTools(service).map(withGuarantees);
    const ledger = sqliteLedger({ path: join(dir, "orders.db") });
    const gate = createGate({ tools, ledger });
    service.faults.lostRefundResponses = 1; // commits, then the answer is lost (ECONNRESET)
    const r = await gate.call("create_refund", '{"orderId":"o_100","amountCents":1500}');
    expect(r).toMatchObject({ ok: true, data: { orderId: "o_100", amountCents: 1500, status: "accepted" }, meta: { attempts: 2 } });
    expect(service.calls.createRefund).toBe(2);
    expect(await service.refunds()).toHaveLength(1);
    const again = await gate.call("create_refund", '{"orderId":"o_100","amountCents":1500}');
    expect(again).toMatchObject({ ok: true, meta: { replayed: true, attempts: 0 } });
    expect(service.calls.createRefund).toBe(2);
    const other = await gate.call("create_refund", '{"orderId":"o_100","amountCents":99}');
    expect(other).toMatchObject({ ok: false, code: "CONFLICT", retryable: false });
    expect(await service.refunds()).toHaveLength(1);
    const [entry] = await ledger.list();
    expect(entry).toMatchObject({ tool: "create_refund", key: "refund:o_100", code: "OK", attempts: 2 });
    await ledger.close();
  });

  it("without the guarantee the same fault is reported as an unknown effect and never retried", async () => {
    const service = createFakeOrders();
    const ledger = sqliteLedger({ path: join(dir, "orders-plain.db") });
    const base = makeOrderTools(service).map((t) => (t.name === "create_refund" && t.idempotentDownstream === true ? defineTool({ ...t, idempotentDownstream: false }) : t));
    const gate = createGate({ tools: base, ledger });
    service.faults.lostRefundResponses = 1;
    const r = await gate.call("create_refund", { orderId: "o_100", amountCents: 1500 }, { idempotencyKey: "req-1" });
    expect(r).toMatchObject({ ok: false, code: "FAILED", effect: "unknown", retryable: false, meta: { attempts: 1 } });
    expect(await service.refunds()).toHaveLength(1);
    expect((await ledger.unresolved()).map((e) => e.key)).toEqual(["req-1"]);
    await ledger.close();
  });
});
