import { describe, it, expect, afterEach } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGate, defineTool } from "../../src/index.js";
import { makeOrderTools } from "../../examples/orders/index.js";
import { openSqliteOrders, readRefundRows } from "../../examples/orders/sqlite-service.js";

const dirs: string[] = [];
function fresh() {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-sqlite-orders-"));
  dirs.push(dir);
  return join(dir, "orders.db");
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("examples/orders/sqlite-service: the fake's behaviour over a real SQLite file", () => {
  it("seeds once, hides cancelled orders unless includeHistory, and answers unknown customers", async () => {
    const path = fresh();
    const a = openSqliteOrders(path);
    const b = openSqliteOrders(path); // a second connection does not seed again
    expect(await a.findOrders("c_1", { includeHistory: false })).toEqual({ found: true, customerId: "c_1", orders: [{ id: "o_100", status: "paid" }, { id: "o_101", status: "pending" }] });
    expect((await b.findOrders("c_1", { includeHistory: true })).orders).toHaveLength(3);
    expect(await a.findOrders("nobody", { includeHistory: false })).toEqual({ found: false, customerId: "nobody", orders: [] });
    a.close();
    b.close();
  });

  it("consumes faults set through another connection, one call at a time", async () => {
    const path = fresh();
    const server = openSqliteOrders(path);
    const control = openSqliteOrders(path);
    control.setFaults({ transientReads: 1, badStatus: "weird" });
    await expect(server.findOrders("c_1", { includeHistory: false })).rejects.toMatchObject({ code: "ECONNRESET" });
    expect((await server.findOrders("c_1", { includeHistory: false })).orders[0]?.status).toBe("weird");
    expect((await server.findOrders("c_1", { includeHistory: false })).orders[0]?.status).toBe("paid");
    expect(control.faults()).toEqual({ transientReads: 0, badStatus: undefined, lostRefundResponses: 0 });
    server.close();
    control.close();
  });

  it("commits a refund before losing its response, and deduplicates on the idempotency key", async () => {
    const path = fresh();
    const s = openSqliteOrders(path);
    s.setFaults({ lostRefundResponses: 1 });
    await expect(s.createRefund({ orderId: "o_100", amountCents: 500, idempotencyKey: "k1" })).rejects.toMatchObject({ code: "ECONNRESET" });
    const again = await s.createRefund({ orderId: "o_100", amountCents: 500, idempotencyKey: "k1" });
    expect(again).toEqual({ refundId: "rf_1", orderId: "o_100", amountCents: 500, status: "accepted" });
    expect(await s.createRefund({ orderId: "o_101", amountCents: 100 })).toMatchObject({ status: "declined" });
    expect(await s.refunds()).toHaveLength(1);
    expect(readRefundRows(path).map((r) => [r.refundId, r.status, r.idempotencyKey])).toEqual([
      ["rf_1", "accepted", "k1"],
      ["rf_2", "declined", null],
    ]);
    s.close();
  });

  it("behind the gate (no ledger): the example's key and the deduplicating service make the retry safe; without them it is FAILED unknown", async () => {
    const path = fresh();
    const s = openSqliteOrders(path);
    const [getOrder, createRefund] = makeOrderTools(s);
    s.setFaults({ lostRefundResponses: 1 });
    const safe = await createGate({ tools: [getOrder, createRefund] }).call("create_refund", { orderId: "o_100", amountCents: 500 });
    expect(safe).toMatchObject({ ok: true, data: { refundId: "rf_1" }, meta: { attempts: 2 } });
    expect(readRefundRows(path).map((r) => r.idempotencyKey)).toEqual(["refund:o_100"]);

    const { idempotencyKey: _key, idempotentDownstream: _dedupes, ...unguarded } = createRefund;
    s.setFaults({ lostRefundResponses: 1 });
    const r = await createGate({ tools: [defineTool(unguarded)] }).call("create_refund", { orderId: "o_200", amountCents: 500 });
    expect(r).toMatchObject({ ok: false, code: "FAILED", effect: "unknown", meta: { attempts: 1 } });
    expect(readRefundRows(path).filter((x) => x.orderId === "o_200")).toHaveLength(1);
    s.close();
  });
});
