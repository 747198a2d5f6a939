/**
 * One principal per call: a key is scoped by the principal's id as `gate.call` read it, and a
 * claim whose principal no longer reads as that id (a host that reused its object and changed the
 * id during the call, a getter that throws the second time) is refused before anything runs. So
 * `authorize`, the tool and the ledger never act for two different principals in one call.
 */
import { describe, expect, it } from "vitest";
import { createGate, type CallRequest } from "../../src/index.js";
import { memoryLedger } from "../../src/ledger/index.js";
import { payTool } from "./_fixtures.js";

const CHANGED = { ok: false, code: "FAILED", retryable: false, effect: "none", message: "The call's principal changed while the call was being decided; nothing was executed", meta: { attempts: 0 } };

/** The ledger fixture's pay tool, noting for whom each execution ran. */
const payFor = (runs: string[]) =>
  payTool(async (i, ctx) => {
    runs.push(ctx.principal?.id ?? "?");
    return { paymentId: `p${runs.length}`, orderId: i.orderId };
  });
const ORDER = { orderId: "o_1", amountCents: 5 };

describe("the principal that scopes a key", () => {
  for (const when of ["before", "after"] as const) {
    it(`a reused object whose id changes during the call (${when} an async authorize reads it): refused, nothing runs, nothing is recorded`, async () => {
      const runs: string[] = [];
      const ledger = memoryLedger();
      const seen: string[] = [];
      const gate = createGate({
        tools: [payFor(runs)],
        ledger,
        authorize: async (call: CallRequest) => {
          if (when === "before") seen.push(call.principal!.id);
          await new Promise((r) => setTimeout(r, 5));
          if (when === "after") seen.push(call.principal!.id);
          return true;
        },
      });
      const principal = { id: "alice" };
      const first = gate.call("pay", ORDER, { idempotencyKey: "k", principal });
      principal.id = "bob"; // the host reuses its object for the next request
      expect(await first).toMatchObject(CHANGED);
      expect(seen).toEqual([when === "before" ? "alice" : "bob"]);
      expect(runs).toEqual([]);
      expect(await ledger.list()).toEqual([]);
      // Each principal's own call then runs once, under its own key scope.
      expect(await gate.call("pay", ORDER, { idempotencyKey: "k", principal: { id: "alice" } })).toMatchObject({ ok: true, data: { paymentId: "p1" } });
      expect(await gate.call("pay", ORDER, { idempotencyKey: "k", principal: { id: "bob" } })).toMatchObject({ ok: true, data: { paymentId: "p2" } });
      expect(await gate.call("pay", ORDER, { idempotencyKey: "k", principal: { id: "bob" } })).toMatchObject({ ok: true, data: { paymentId: "p2" }, meta: { replayed: true } });
      expect(runs).toEqual(["alice", "bob"]);
    });
  }

  it("an id getter that throws on a later read: refused with effect none (it was FAILED unknown), nothing runs", async () => {
    const runs: string[] = [];
    const ledger = memoryLedger();
    const gate = createGate({ tools: [payFor(runs)], ledger });
    let reads = 0;
    const principal = {
      get id(): string {
        if (++reads > 1) throw new Error("token expired");
        return "alice";
      },
    };
    expect(await gate.call("pay", ORDER, { idempotencyKey: "k", principal })).toMatchObject(CHANGED);
    expect(runs).toEqual([]);
    expect(await ledger.list()).toEqual([]);
  });

  it("a principal that does not change is read at the call and at the claim, and the call runs", async () => {
    const runs: string[] = [];
    const ledger = memoryLedger();
    const gate = createGate({ tools: [payFor(runs)], ledger });
    expect(await gate.call("pay", ORDER, { idempotencyKey: "k", principal: { id: "alice" } })).toMatchObject({ ok: true });
    expect((await ledger.list())[0]).toMatchObject({ principal: "alice" });
    expect(runs).toEqual(["alice"]);
  });
});
