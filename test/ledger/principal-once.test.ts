/**
 * A key is scoped by the principal's id as `gate.call` read it, once with the other options: not by
 * a second read when the ledger is claimed (after an async `authorize`, the id of a reused object
 * may have changed; a getter may throw the second time).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { memoryLedger } from "../../src/ledger/index.js";

function payTool(runs: { n: number }) {
  return defineTool({
    name: "pay",
    version: "1",
    description: "d",
    input: z.object({ o: z.string() }),
    output: z.object({ id: z.string() }),
    effect: "write",
    execute: () => ({ id: `p${++runs.n}` }),
  });
}

describe("the principal that scopes a key", () => {
  it("is the one the call was given: a reused object whose id changes after gate.call does not move the key to another principal", async () => {
    const runs = { n: 0 };
    const ledger = memoryLedger();
    const seen: string[] = [];
    const gate = createGate({
      tools: [payTool(runs)],
      ledger,
      authorize: async (call) => {
        seen.push(call.principal!.id);
        await new Promise((r) => setTimeout(r, 5));
        return true;
      },
    });
    const principal = { id: "alice" };
    const first = gate.call("pay", { o: "1" }, { idempotencyKey: "k", principal });
    principal.id = "bob"; // the host reuses its object for the next request
    expect(await first).toMatchObject({ ok: true, data: { id: "p1" } });
    expect(seen).toEqual(["alice"]);
    expect((await ledger.list())[0]).toMatchObject({ principal: "alice" });
    // alice's retry replays her call; bob's own key is his, and runs
    expect(await gate.call("pay", { o: "1" }, { idempotencyKey: "k", principal: { id: "alice" } })).toMatchObject({ ok: true, data: { id: "p1" }, meta: { replayed: true } });
    expect(await gate.call("pay", { o: "1" }, { idempotencyKey: "k", principal: { id: "bob" } })).toMatchObject({ ok: true, data: { id: "p2" } });
    expect(runs.n).toBe(2);
  });

  it("is read once: a getter that throws on a later read changes nothing (the call runs, keyed to its first value)", async () => {
    const runs = { n: 0 };
    const ledger = memoryLedger();
    const gate = createGate({ tools: [payTool(runs)], ledger });
    let reads = 0;
    const principal = {
      get id(): string {
        if (++reads > 1) throw new Error("token expired");
        return "alice";
      },
    };
    expect(await gate.call("pay", { o: "1" }, { idempotencyKey: "k", principal })).toMatchObject({ ok: true, data: { id: "p1" } });
    expect(reads).toBe(1);
    expect((await ledger.list())[0]).toMatchObject({ principal: "alice" });
  });
});
