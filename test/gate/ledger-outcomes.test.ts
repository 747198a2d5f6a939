/**
 * What the gate asks the ledger to keep: a key is kept only when something may have happened;
 * a claim whose answer was lost is released; the stored call id is redacted; a failure after
 * recorded effects says so.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool, denied, reject, transient } from "../../src/index.js";
import { memoryLedger } from "../../src/ledger/index.js";

const base = { version: "1", description: "d", input: z.object({ amount: z.number() }), output: z.object({ id: z.string() }), effect: "write" } as const;

describe("the gate and its ledger", () => {
  it("a write the service denied (effect none) releases its key: after the fix, the same key runs", async () => {
    let allowed = false;
    let runs = 0;
    const tool = defineTool({
      ...base,
      name: "pay",
      execute: () => {
        runs++;
        if (!allowed) throw denied("credential expired");
        return { id: "p1" };
      },
    });
    const gate = createGate({ tools: [tool], ledger: memoryLedger() });
    expect(await gate.call("pay", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject({ ok: false, code: "DENIED", effect: "none" });
    allowed = true;
    const again = await gate.call("pay", { amount: 1 }, { idempotencyKey: "k" });
    expect(again).toMatchObject({ ok: true, data: { id: "p1" } });
    expect(again.meta.replayed).toBeUndefined();
    expect(runs).toBe(2);
  });

  it("a claim committed whose answer was lost is released: a retry runs instead of meeting CONFLICT", async () => {
    const ledger = memoryLedger();
    const claim = ledger.claim.bind(ledger);
    let lose = true;
    ledger.claim = async (c) => {
      const out = await claim(c);
      if (lose) {
        lose = false;
        throw new Error("connection reset after COMMIT");
      }
      return out;
    };
    let runs = 0;
    const tool = defineTool({ ...base, name: "pay", execute: () => ({ id: `p${++runs}` }) });
    const errors: string[] = [];
    const gate = createGate({ tools: [tool], ledger, onHookError: (hook) => void errors.push(hook) });
    expect(await gate.call("pay", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject({ ok: false, code: "RETRYABLE", effect: "none" });
    expect(runs).toBe(0);
    expect(await gate.call("pay", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject({ ok: true, data: { id: "p1" } });
    expect(errors).toEqual(["ledger"]); // the claim failure, once (the release is best effort)
  });

  it("the stored call id is redacted like every other stored text", async () => {
    const ledger = memoryLedger();
    const tool = defineTool({ ...base, name: "pay", execute: () => ({ id: "p1" }) });
    const gate = createGate({ tools: [tool], ledger });
    const callId = "Bearer abcdefghijklmnopqrstuvwxyz0123";
    await gate.call("pay", { amount: 1 }, { idempotencyKey: "k", callId });
    const rows = await ledger.list({});
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows[0])).not.toContain("abcdefghijklmnopqrstuvwxyz0123");
  });

  it("a write that fails after recording effects says they applied (not 'unknown')", async () => {
    const tool = defineTool({
      ...base,
      name: "pay",
      execute: async (_i, ctx) => {
        await ctx.recordEffect({ kind: "charge", ref: "ch_1" });
        throw new Error("socket closed");
      },
    });
    const gate = createGate({ tools: [tool] });
    const r = await gate.call("pay", { amount: 1 });
    expect(r).toMatchObject({ ok: false, code: "FAILED", effect: "applied", effects: [{ kind: "charge", ref: "ch_1" }] });
    expect(r.ok ? "" : r.message).not.toMatch(/unknown/);
    expect(r.ok ? "" : r.message).toMatch(/after applying the listed effects/);
  });

  it("after a timeout the state check waits for the timed-out attempt to stop: no second effect", async () => {
    const rows: string[] = [];
    let reconciles = 0;
    const book = defineTool({
      ...base,
      name: "book",
      timeoutMs: 30,
      // a downstream that does not stop on abort (an HTTP POST already sent)
      execute: async (_i, ctx) => {
        await new Promise((r) => setTimeout(r, 60));
        rows.push(`#${ctx.attempt}`);
        return { id: `b${rows.length}` };
      },
      reconcile: async () => (reconciles++, rows.length > 0 ? { status: "applied", output: { id: "b1" } } : { status: "none" }),
    });
    const gate = createGate({ tools: [book], ledger: memoryLedger(), retry: { baseMs: 1, capMs: 2 } });
    const r = await gate.call("book", { amount: 1 }, { idempotencyKey: "k" });
    expect(r).toMatchObject({ ok: true, data: { id: "b1" } });
    await new Promise((res) => setTimeout(res, 100));
    expect(rows).toEqual(["#1"]);
    expect(reconciles).toBe(1);
  });

  it("a timed-out attempt that does not stop within the tool's timeout: no state check, effect unknown, no retry", async () => {
    let runs = 0;
    let reconciles = 0;
    const stuck = defineTool({
      ...base,
      name: "stuck",
      timeoutMs: 20,
      execute: () => (runs++, new Promise<{ id: string }>(() => {})),
      reconcile: async () => (reconciles++, { status: "none" as const }),
    });
    const gate = createGate({ tools: [stuck], retry: { baseMs: 1, capMs: 2 } });
    const r = await gate.call("stuck", { amount: 1 }, { idempotencyKey: "k" });
    expect(r).toMatchObject({ ok: false, code: "FAILED", effect: "unknown", meta: { attempts: 1 } });
    expect(runs).toBe(1);
    expect(reconciles).toBe(0);
  });

  it("reject's effect is reported for writes (none, applied, unknown) and is always none for reads", async () => {
    for (const effect of ["none", "applied", "unknown"] as const) {
      const w = defineTool({ ...base, name: "w", execute: () => Promise.reject(reject("no", { effect })) });
      const r = defineTool({ ...base, name: "r", effect: "read", execute: () => Promise.reject(reject("no", { effect })) });
      const gate = createGate({ tools: [w, r] });
      expect(await gate.call("w", { amount: 1 })).toMatchObject({ code: "REJECTED", effect, retryable: false });
      expect(await gate.call("r", { amount: 1 })).toMatchObject({ code: "REJECTED", effect: "none" });
    }
  });

  it("a timed-out write that returned a lazy thenable (a query builder) is not started again by the state check", async () => {
    let thens = 0;
    let inserts = 0;
    const book = defineTool({
      ...base,
      name: "book",
      timeoutMs: 30,
      // like Drizzle's or knex's builders: every then() runs the query
      execute: () =>
        ({
          then(ok: (v: { id: string }) => void) {
            thens++;
            setTimeout(() => ok({ id: `b${++inserts}` }), 60);
          },
        }) as unknown as Promise<{ id: string }>,
      reconcile: async () => (inserts > 0 ? { status: "applied" as const, output: { id: "b1" } } : { status: "none" as const }),
    });
    const gate = createGate({ tools: [book], retry: { baseMs: 1, capMs: 2 } });
    expect(await gate.call("book", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject({ ok: true, data: { id: "b1" } });
    await new Promise((r) => setTimeout(r, 100));
    expect(thens).toBe(1);
    expect(inserts).toBe(1);
  });

  it("a write without reconcile does not wait for a timed-out attempt to stop (nothing would use the wait)", async () => {
    const w = defineTool({ ...base, name: "w", timeoutMs: 200, concurrency: 1, execute: () => new Promise<{ id: string }>(() => {}) });
    const gate = createGate({ tools: [w] });
    const r = await gate.call("w", { amount: 1 });
    expect(r).toMatchObject({ ok: false, code: "FAILED", effect: "unknown" });
    expect(r.meta.durationMs).toBeLessThan(380);
  });

  it("a write whose business check rejects is kept and replayed (the tool ran and answered)", async () => {
    let runs = 0;
    const tool = defineTool({ ...base, name: "pay", execute: () => ({ id: `p${++runs}` }), check: () => reject("amount above the limit") });
    const gate = createGate({ tools: [tool], ledger: memoryLedger() });
    const a = await gate.call("pay", { amount: 1 }, { idempotencyKey: "k" });
    const b = await gate.call("pay", { amount: 1 }, { idempotencyKey: "k" });
    expect(a).toMatchObject({ ok: false, code: "REJECTED" });
    expect(b).toMatchObject({ ok: false, code: "REJECTED", meta: { replayed: true } });
    expect(runs).toBe(1);
  });

  it("the lease covers every wait of a call: timeoutMs x (3 x attempts + 2) + capMs x attempts + 5 s", async () => {
    const ledger = memoryLedger();
    const leases: number[] = [];
    const claim = ledger.claim.bind(ledger);
    ledger.claim = (c) => (leases.push(c.leaseMs), claim(c));
    const tool = defineTool({ ...base, name: "pay", execute: () => ({ id: "p" }) });
    await createGate({ tools: [tool], ledger }).call("pay", { amount: 1 }, { idempotencyKey: "k" });
    expect(leases).toEqual([30_000 * 11 + 2_000 * 3 + 5_000]);
  });

  it("an output field the schema marks secret is stored (and replayed) as the placeholder, like capture does", async () => {
    const ledger = memoryLedger();
    const tool = defineTool({
      ...base,
      name: "issue_card",
      output: z.object({ id: z.string(), cvv: z.string().meta({ secret: true }), last4: z.string() }),
      execute: () => ({ id: "c1", cvv: "987", last4: "4242" }),
    });
    const gate = createGate({ tools: [tool], ledger });
    const first = await gate.call("issue_card", { amount: 1 }, { idempotencyKey: "k" });
    expect(first).toMatchObject({ ok: true, data: { cvv: "987" } }); // the caller of the call itself gets the value
    const rows = await ledger.list({});
    expect(rows).toHaveLength(1);
    // the stored result (the only field that holds output; a timestamp may contain the digits by chance)
    expect(rows[0]!.result).not.toContain("987");
    expect(rows[0]!.result).toContain('"cvv":"[REDACTED]"');
    const replay = await gate.call("issue_card", { amount: 1 }, { idempotencyKey: "k" });
    expect(replay).toMatchObject({ ok: true, data: { id: "c1", cvv: "[REDACTED]", last4: "4242" }, meta: { replayed: true } });
  });

  it("a withheld secret the output schema constrains (a number) is not replayed as broken data", async () => {
    const ledger = memoryLedger();
    let runs = 0;
    const tool = defineTool({
      ...base,
      name: "pin",
      output: z.object({ id: z.string(), pin: z.number().meta({ secret: true }) }),
      execute: () => (runs++, { id: "c1", pin: 1234 }),
    });
    const gate = createGate({ tools: [tool], ledger });
    expect(await gate.call("pin", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject({ ok: true, data: { pin: 1234 } });
    const replay = await gate.call("pin", { amount: 1 }, { idempotencyKey: "k" });
    expect(replay).toMatchObject({ ok: false, code: "FAILED", effect: "applied", retryable: false, meta: { replayed: true } });
    expect(replay.ok ? "" : replay.message).toMatch(/succeeded, but its stored result cannot be replayed in full/);
    expect(runs).toBe(1);
  });

  it("a write cancelled during its backoff (nothing happened) frees its key: the next call runs", async () => {
    let runs = 0;
    const ctrl = new AbortController();
    const tool = defineTool({
      ...base,
      name: "book",
      execute: () => {
        runs++;
        if (runs === 1) {
          setTimeout(() => ctrl.abort(), 5); // during the backoff that follows
          throw transient("busy");
        }
        return { id: "b1" };
      },
      reconcile: async () => ({ status: "none" as const }),
    });
    // random near 1: the backoff is ~200 ms, certainly longer than the 5 ms to the abort (full jitter alone could draw under 5 ms)
    const gate = createGate({ tools: [tool], ledger: memoryLedger(), breaker: false, retry: { baseMs: 200, capMs: 200, budget: false }, random: () => 0.9999 });
    const first = await gate.call("book", { amount: 1 }, { idempotencyKey: "k", signal: ctrl.signal });
    expect(first).toMatchObject({ ok: false, code: "FAILED", effect: "none" });
    const again = await gate.call("book", { amount: 1 }, { idempotencyKey: "k" });
    expect(again).toMatchObject({ ok: true, data: { id: "b1" } });
    expect(again.meta.replayed).toBeUndefined();
  });

  it("a business check's verdict on a write (a denial included) keeps the key: the tool ran and answered", async () => {
    let runs = 0;
    const tool = defineTool({ ...base, name: "pay", execute: () => ({ id: `p${++runs}` }), check: () => denied("account frozen") });
    const gate = createGate({ tools: [tool], ledger: memoryLedger() });
    // The write ran: a denial after it cannot say "nothing happened".
    expect(await gate.call("pay", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject({ ok: false, code: "FAILED", effect: "applied" });
    expect(await gate.call("pay", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject({ ok: false, code: "FAILED", effect: "applied", meta: { replayed: true } });
    expect(runs).toBe(1);
  });

  it("a write whose output has no JSON form (a bigint) is INVALID_OUTPUT with its effect applied, and a retry replays that answer", async () => {
    let runs = 0;
    const tool = defineTool({
      ...base,
      name: "big",
      output: z.object({ id: z.string(), n: z.bigint() }),
      execute: () => (runs++, { id: "x", n: 10n }),
    });
    const gate = createGate({ tools: [tool], ledger: memoryLedger() });
    const failed = { ok: false, code: "INVALID_OUTPUT", effect: "applied", retryable: false, issues: [{ path: "n", code: "non_json" }] };
    expect(await gate.call("big", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject(failed);
    expect(await gate.call("big", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject({ ...failed, meta: { replayed: true } });
    expect(runs).toBe(1);
  });

  it("a write whose data the ledger then fails to serialize (an unstable toJSON) still answers; the store's failure goes to onHookError", async () => {
    const hooks: string[] = [];
    let reads = 0;
    const unreadable = (): never => {
      throw new Error("gone");
    };
    const unstable = { toJSON: () => (++reads > 1 ? unreadable() : "10") }; // checked once, throws when the ledger writes it
    const tool = defineTool({ ...base, name: "big", output: z.object({ id: z.string(), n: z.any() }), execute: () => ({ id: "x", n: unstable }) });
    const gate = createGate({ tools: [tool], ledger: memoryLedger(), onHookError: (h) => void hooks.push(h) });
    const r = await gate.call("big", { amount: 1 }, { idempotencyKey: "k" });
    expect(r).toMatchObject({ ok: true, data: { id: "x", n: unstable } });
    expect(hooks).toEqual(["ledger"]);
  });

  it("a taken-over claim refused at the concurrency limit keeps its unknown effect and key: the next call checks state, not runs", async () => {
    const db: string[] = [];
    let stateKnown = false;
    let release: () => void = () => {};
    const blocker = new Promise<void>((r) => (release = r));
    const pay = defineTool({
      ...base,
      name: "pay",
      concurrency: 1,
      input: z.object({ amount: z.number(), slow: z.boolean().optional() }),
      execute: async (i, ctx) => {
        if (i.slow === true) return blocker.then(() => ({ id: "slow" }));
        db.push(`charge:${ctx.idempotencyKey}`);
        if (db.length === 1) throw new Error("socket closed after the charge");
        return { id: `p${db.length}` };
      },
      reconcile: async (_i, ctx) =>
        !stateKnown ? { status: "unknown" as const } : db.includes(`charge:${ctx.idempotencyKey}`) ? { status: "applied" as const, output: { id: "p1" } } : { status: "none" as const },
    });
    const gate = createGate({ tools: [pay], ledger: memoryLedger() });
    expect(await gate.call("pay", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject({ ok: false, effect: "unknown" });
    stateKnown = true;
    const slow = gate.call("pay", { amount: 2, slow: true }, { idempotencyKey: "other" }); // holds the one slot
    await new Promise((r) => setTimeout(r, 10));
    expect(await gate.call("pay", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject({
      ok: false,
      code: "FAILED",
      effect: "unknown",
      retryable: false,
      message: expect.stringMatching(/^The tool is at its concurrency limit and did not run; an earlier attempt/),
    });
    release();
    await slow;
    expect(await gate.call("pay", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject({ ok: true, data: { id: "p1" } }); // from the state check
    expect(db).toEqual(["charge:k"]);
  });

  it("a taken-over write refused at an open breaker keeps the earlier unknown effect and says nothing ran in this call", async () => {
    let runs = 0;
    const pay = defineTool({
      ...base,
      name: "pay",
      idempotentDownstream: true,
      execute: () => {
        runs++;
        throw new Error("socket closed after the charge");
      },
    });
    const gate = createGate({ tools: [pay], ledger: memoryLedger(), breaker: { threshold: 1, halfOpenAfterMs: 60_000 } });
    expect(await gate.call("pay", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject({ ok: false, effect: "unknown", meta: { attempts: 1 } });
    const again = await gate.call("pay", { amount: 1 }, { idempotencyKey: "k" }); // resumes the claim; the breaker is open
    expect(again).toMatchObject({
      ok: false,
      code: "FAILED",
      effect: "unknown",
      retryable: false,
      message: expect.stringMatching(/^Nothing ran in this call; an earlier attempt under this key left its effect unknown/),
      meta: { attempts: 0 },
    });
    expect(runs).toBe(1);
  });

  it("a later attempt's 'none' (DENIED, REJECTED) does not erase an earlier attempt's unknown effect: FAILED/unknown, key held", async () => {
    for (const second of [() => denied("token expired"), () => reject("amount too large")]) {
      let runs = 0;
      const t = defineTool({
        ...base,
        name: "t",
        timeoutMs: 20,
        idempotentDownstream: true,
        execute: async () => {
          runs++;
          if (runs === 1) return new Promise<{ id: string }>((r) => setTimeout(() => r({ id: "late" }), 60)); // times out, then lands
          throw second();
        },
      });
      const ledger = memoryLedger();
      const gate = createGate({ tools: [t], ledger, retry: { baseMs: 1, capMs: 2 } });
      const r = await gate.call("t", { amount: 1 }, { idempotencyKey: "k" });
      expect(r).toMatchObject({ ok: false, code: "FAILED", effect: "unknown", retryable: false, meta: { attempts: 2 } });
      const [entry] = await ledger.list({});
      expect(entry).toMatchObject({ effect: "unknown" });
      expect(entry?.keyHash).not.toBeNull(); // held: the next call takes it over
    }
  });

  it("replays that redaction did not break are served: a null secret stays null, a pattern hit beside a date replays", async () => {
    const ledger = memoryLedger();
    const tool = defineTool({
      ...base,
      name: "r",
      output: z.object({ pin: z.number().nullable().meta({ secret: true }), note: z.string(), at: z.date() }),
      execute: () => ({ pin: null, note: "sent with Bearer abcdefghijklmnopqrstuvwxyz", at: new Date(0) }),
    });
    const gate = createGate({ tools: [tool], ledger });
    await gate.call("r", { amount: 1 }, { idempotencyKey: "k" });
    const replay = await gate.call("r", { amount: 1 }, { idempotencyKey: "k" });
    expect(replay).toMatchObject({ ok: true, data: { pin: null, note: "sent with [REDACTED]", at: "1970-01-01T00:00:00.000Z" }, meta: { replayed: true } });
  });

  it("a state check is not trusted while an earlier timed-out attempt is still working: the effect stays unknown", async () => {
    const store: string[] = [];
    let runs = 0;
    const t = defineTool({
      ...base,
      name: "t",
      timeoutMs: 20,
      idempotentDownstream: true,
      execute: async () => {
        runs++;
        if (runs === 1) return new Promise<{ id: string }>((r) => setTimeout(() => (store.push("charge"), r({ id: "late" })), 150)); // ignores its abort
        throw transient("503");
      },
      reconcile: async () => (store.length > 0 ? { status: "applied" as const, output: { id: "late" } } : { status: "none" as const }),
    });
    const ledger = memoryLedger();
    const gate = createGate({ tools: [t], ledger, breaker: false, retry: { attempts: 2, baseMs: 1, capMs: 2, budget: false } });
    const r = await gate.call("t", { amount: 1 }, { idempotencyKey: "k" });
    expect(r).toMatchObject({ ok: false, effect: "unknown" });
    const [entry] = await ledger.list({});
    expect(entry?.keyHash).not.toBeNull();
  });

  it("a token the secret patterns rewrote is not replayed where the compiled output check rejects the copy", async () => {
    const tok = `ghp_${"a".repeat(36)}`;
    const tool = defineTool({ ...base, name: "tok", output: z.object({ t: z.string().min(30) }), execute: () => ({ t: tok }) });
    const gate = createGate({ tools: [tool], ledger: memoryLedger() });
    expect(await gate.call("tok", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject({ ok: true, data: { t: tok } });
    expect(await gate.call("tok", { amount: 1 }, { idempotencyKey: "k" })).toMatchObject({ ok: false, code: "FAILED", effect: "applied", meta: { replayed: true } });
  });
});
