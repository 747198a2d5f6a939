/**
 * What a store must survive that PostgreSQL refuses and SQLite takes: U+0000 and lone surrogates
 * in stored text, a row the server refuses inside a batched statement, a ttl or a clock BIGINT
 * cannot hold — and a PostgreSQL server that stops answering (connect and query timeouts).
 */
import { describe, expect, it } from "vitest";
import { createServer, connect, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { z } from "zod";
import { createGate, defineTool, type ToolResult } from "../../src/index.js";
import { memoryLedger, postgresLedger, sqliteLedger, type ClaimRequest, type Ledger } from "../../src/ledger/index.js";
import { useLedgerFixtures } from "./_pg.js";

const fx = useLedgerFixtures("toolgate-limits-");
let n = 0;
const stores: [string, () => Promise<Ledger>][] = [
  ["memory", async () => memoryLedger()],
  ["sqlite", async () => sqliteLedger({ path: join(fx.dir, `s${++n}.db`) })],
  ["postgres", async () => postgresLedger({ connectionString: fx.url(), table: `t${++n}` })],
];

const short = (r: ToolResult) => (r.ok ? "ok" : `${r.code}/${r.effect}`);

function payTool(runs: string[], ref?: string) {
  return defineTool({
    name: "pay",
    version: "1.0.0",
    description: "Pay",
    effect: "write",
    input: z.object({ orderId: z.string().min(1) }),
    output: z.object({ ok: z.boolean() }),
    idempotencyKey: (i) => `pay:${i.orderId}`,
    execute: async (i, ctx) => {
      runs.push(i.orderId);
      if (ref !== undefined) await ctx.recordEffect({ kind: "order\u0000", ref });
      return { ok: true };
    },
  });
}

describe.each(stores)("%s: stored text U+0000 and lone surrogates", (_name, make) => {
  it("stores them as U+FFFD; a bad string fails no claim (nor the others batched with it), keys stay distinct", async () => {
    const ledger = await make();
    const runs: string[] = [];
    const errors: unknown[] = [];
    const gate = createGate({ tools: [payTool(runs)], ledger, onHookError: (_h, e) => void errors.push(e) });
    const rs = await Promise.all([
      gate.call("pay", { orderId: "o_1\u0000x" }, { callId: "call\u0000a" }),
      gate.call("pay", { orderId: "o_2" }),
      gate.call("pay", { orderId: "o_3" }, { idempotencyKey: "k\ud800" }), // the caller's key (the gate refuses lone surrogates in arguments)
      gate.call("pay", { orderId: "o_4" }, { idempotencyKey: "req-\u0000-1", principal: { id: "u\udc00" } }),
    ]);
    expect(rs.map(short)).toEqual(["ok", "ok", "ok", "ok"]);
    expect(errors).toEqual([]);
    // The hash is of the raw key: the key written with U+FFFD itself is another key and runs.
    expect(short(await gate.call("pay", { orderId: "o_1\uFFFDx" }))).toBe("ok");
    expect(short(await gate.call("pay", { orderId: "o_3" }, { idempotencyKey: "k\uFFFD" }))).toBe("ok");
    // ...while the raw one replays.
    expect((await gate.call("pay", { orderId: "o_1\u0000x" })).meta.replayed).toBe(true);
    expect(runs).toHaveLength(6);
    const keys = (await ledger.list()).map((e) => e.key).sort();
    expect(keys).toEqual(["pay:o_1\uFFFDx", "pay:o_1\uFFFDx", "pay:o_2", "k\uFFFD", "k\uFFFD", "req-\uFFFD-1"].sort());
    const byCall = await ledger.get("call\u0000a"); // looked up as stored
    expect(byCall?.callId).toBe("call\uFFFDa");
    expect((await ledger.list()).find((e) => e.key === "req-\uFFFD-1")?.principal).toBe("u\uFFFD");
    await ledger.close();
  });

  it("recordEffect keeps an effect whose kind or ref holds them", async () => {
    const ledger = await make();
    const runs: string[] = [];
    const gate = createGate({ tools: [payTool(runs, "ord\u0000_\ud800")], ledger });
    const r = await gate.call("pay", { orderId: "o" });
    expect(short(r)).toBe("ok");
    expect((await ledger.list())[0]?.effects).toEqual([{ kind: "order\uFFFD", ref: "ord\uFFFD_\uFFFD" }]);
    await ledger.close();
  });
});

describe("postgres: a row the server refuses fails only its own item of a batch", () => {
  const req = (i: number, owner = "o"): ClaimRequest => ({
    id: `id-${i}-${++n}`,
    owner,
    callId: `c${i}`,
    tool: "t",
    version: "1",
    principal: null,
    fingerprint: "f",
    leaseMs: 60_000,
    takeover: false,
    key: { display: `k${i}`, hash: `h-${i}-${n}` },
  });

  it("claims and settles batched with a refused one still answer", async () => {
    const ledger = postgresLedger({ connectionString: fx.url(), table: `b${++n}` });
    await ledger.ready();
    // An owner token is identity, never rewritten: PostgreSQL refuses its U+0000 (22021).
    const [a, bad, c] = await Promise.allSettled([ledger.claim(req(1)), ledger.claim(req(2, "o\u0000")), ledger.claim(req(3))]);
    expect(a).toMatchObject({ status: "fulfilled", value: { status: "claimed" } });
    expect(bad).toMatchObject({ status: "rejected", reason: { code: "22021" } });
    expect(c).toMatchObject({ status: "fulfilled", value: { status: "claimed" } });
    const ids = [a, c].map((x) => (x.status === "fulfilled" ? x.value.entry.id : ""));
    const s = { code: "OK" as const, effect: "applied" as const, result: "{}", attempts: 1, releaseKey: false };
    const settled = await Promise.allSettled([ledger.settle(ids[0]!, "o", s), ledger.settle("x", "o\u0000", s), ledger.settle(ids[1]!, "o", s)]);
    expect(settled.map((x) => x.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(settled[0]).toMatchObject({ value: true });
    expect((await ledger.list()).map((e) => e.state)).toEqual(["settled", "settled"]);
    await ledger.close();
  });
});

describe("options every store must be able to hold", () => {
  it("refuses a ttlMs past 100 years (E_LEDGER_OPTIONS) and floors a fractional clock", async () => {
    for (const [name, o] of [
      ["memory", () => memoryLedger({ ttlMs: 1e19 })],
      ["sqlite", () => sqliteLedger({ path: join(fx.dir, `x${++n}.db`), ttlMs: 1e19 })],
      ["postgres", () => postgresLedger({ connectionString: fx.url(), ttlMs: 3_153_600_000_001 })],
    ] as const) {
      expect(o, name).toThrow(expect.objectContaining({ code: "E_LEDGER_OPTIONS" }));
    }
    const now = () => 1_800_000_000_000.75;
    for (const [, make] of stores) {
      const base = await make();
      await base.close();
      const ledger =
        base.kind === "memory"
          ? memoryLedger({ now, ttlMs: 3_153_600_000_000 })
          : base.kind === "sqlite"
            ? sqliteLedger({ path: join(fx.dir, `f${++n}.db`), now, ttlMs: 3_153_600_000_000 })
            : postgresLedger({ connectionString: fx.url(), table: `f${++n}`, now, ttlMs: 3_153_600_000_000 });
      const gate = createGate({ tools: [payTool([])], ledger });
      expect(short(await gate.call("pay", { orderId: "o" })), ledger.kind).toBe("ok");
      const e = (await ledger.list())[0];
      expect(e?.createdAt, ledger.kind).toBe(1_800_000_000_000);
      expect(e?.expiresAt, ledger.kind).toBe(1_800_000_000_000 + 3_153_600_000_000);
      await ledger.close();
    }
  });
});

/** A TCP server on 127.0.0.1 that accepts and never answers. */
async function silentServer(): Promise<{ url: string; close: () => void }> {
  const socks: Socket[] = [];
  const srv = createServer((s) => void socks.push(s));
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  return { url: `postgres://u:p@127.0.0.1:${port}/db`, close: () => (socks.forEach((s) => s.destroy()), srv.close()) };
}

/** A proxy to the test server that drops everything both ways once `freeze(match)` sees `match` go by. */
async function freezingProxy(target: string): Promise<{ url: string; freezeOn: (m: string) => void; thaw: () => void; close: () => void }> {
  const u = new URL(target);
  const socks: Socket[] = [];
  let match: string | undefined;
  let frozen = false;
  const srv: Server = createServer((c) => {
    const up = connect(Number(u.port), "127.0.0.1");
    socks.push(c, up);
    c.on("data", (d) => {
      if (match !== undefined && d.toString("latin1").includes(match)) {
        frozen = true;
        match = undefined;
      }
      if (!frozen) up.write(d);
    });
    up.on("data", (d) => void (frozen || c.write(d)));
    c.on("error", () => undefined);
    up.on("error", () => undefined);
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  return {
    url: `${u.protocol}//${u.username}:${u.password}@127.0.0.1:${port}${u.pathname}`,
    freezeOn: (m) => void (match = m),
    thaw: () => void (frozen = false),
    close: () => (socks.forEach((s) => s.destroy()), srv.close()),
  };
}

describe("postgres: a server that stops answering", () => {
  it("validates connectTimeoutMs and queryTimeoutMs", () => {
    for (const bad of [0, -1, 1.5, 600_001, "5000", Number.NaN]) {
      expect(() => postgresLedger({ connectionString: "postgres://x", connectTimeoutMs: bad as number })).toThrow(expect.objectContaining({ code: "E_LEDGER_OPTIONS" }));
      expect(() => postgresLedger({ connectionString: "postgres://x", queryTimeoutMs: bad as number })).toThrow(expect.objectContaining({ code: "E_LEDGER_OPTIONS" }));
    }
  });

  it("a claim that cannot connect answers RETRYABLE (nothing ran); the caller's cancel ends the wait sooner", async () => {
    const srv = await silentServer();
    const ledger = postgresLedger({ connectionString: srv.url, connectTimeoutMs: 300 });
    const runs: string[] = [];
    const gate = createGate({ tools: [payTool(runs)], ledger, onHookError: () => undefined });
    try {
      const r = await gate.call("pay", { orderId: "o" });
      expect(r).toMatchObject({ ok: false, code: "RETRYABLE", retryable: true, effect: "none" });
      const slow = postgresLedger({ connectionString: srv.url, connectTimeoutMs: 60_000 });
      const g2 = createGate({ tools: [payTool(runs)], ledger: slow, onHookError: () => undefined });
      const t0 = Date.now();
      const c = await g2.call("pay", { orderId: "o" }, { signal: AbortSignal.timeout(200) });
      expect(c).toMatchObject({ ok: false, code: "FAILED", effect: "none", meta: { attempts: 0 } });
      expect(Date.now() - t0).toBeLessThan(30_000); // well before the connect timeout
      expect(runs).toEqual([]);
      void slow.close();
    } finally {
      srv.close();
      await ledger.close();
    }
  });

  it("a claim whose statement stalls answers RETRYABLE, and its connection is not reused", async () => {
    const proxy = await freezingProxy(fx.url());
    const ledger = postgresLedger({ connectionString: proxy.url, table: `h${++n}`, max: 1, queryTimeoutMs: 300, connectTimeoutMs: 300 });
    await ledger.ready();
    const runs: string[] = [];
    const gate = createGate({ tools: [payTool(runs)], ledger, onHookError: () => undefined });
    try {
      expect(short(await gate.call("pay", { orderId: "o" }))).toBe("ok");
      proxy.freezeOn("FOR UPDATE"); // the locked decision on an existing key
      expect(await gate.call("pay", { orderId: "o" })).toMatchObject({ ok: false, code: "RETRYABLE", effect: "none" });
      proxy.thaw();
      // The one pool slot is a fresh connection: the stalled one was closed, not handed out again.
      const again = await gate.call("pay", { orderId: "o" });
      expect(again).toMatchObject({ ok: true, meta: { replayed: true } });
      expect(runs).toEqual(["o"]);
    } finally {
      proxy.close();
      await ledger.close();
    }
  });

  it("a transaction whose statement timed out closes its connection instead of pooling it", async () => {
    const proxy = await freezingProxy(fx.url());
    const ledger = postgresLedger({ connectionString: proxy.url, table: `h${++n}`, max: 1, queryTimeoutMs: 300, connectTimeoutMs: 2_000 });
    await ledger.ready();
    const req = { id: "e1", owner: "o", callId: "c1", tool: "t", version: "1", principal: null, fingerprint: "f", leaseMs: 60_000, takeover: false, key: { display: "k", hash: "h" } };
    try {
      expect(await ledger.claim(req)).toMatchObject({ status: "claimed" });
      proxy.freezeOn("FOR UPDATE");
      await expect(ledger.claim({ ...req, id: "e2", owner: "o2" })).rejects.toThrow(/timeout/i);
      proxy.thaw();
      // A pooled connection still waiting on its stalled statement would time this out too.
      expect((await ledger.list()).map((e) => e.id)).toEqual(["e1"]);
    } finally {
      proxy.close();
      await ledger.close();
    }
  });

  it("a settle that stalls still answers the real outcome, after the query timeout or the caller's cancel", async () => {
    const proxy = await freezingProxy(fx.url());
    const ledger = postgresLedger({ connectionString: proxy.url, table: `h${++n}`, queryTimeoutMs: 300 });
    await ledger.ready();
    const errors: unknown[] = [];
    const gate = createGate({ tools: [payTool([])], ledger, onHookError: (_h, e) => void errors.push(e) });
    try {
      proxy.freezeOn("UPDATE"); // the settlement
      expect(await gate.call("pay", { orderId: "a" })).toMatchObject({ ok: true, data: { ok: true } });
      expect(errors).toHaveLength(1);
      proxy.thaw();
      const slow = postgresLedger({ connectionString: proxy.url, table: `h${n}`, queryTimeoutMs: 60_000 });
      await slow.ready();
      const g2 = createGate({ tools: [payTool([])], ledger: slow, onHookError: () => undefined });
      const t0 = Date.now();
      proxy.freezeOn("UPDATE");
      expect(await g2.call("pay", { orderId: "b" }, { signal: AbortSignal.timeout(300) })).toMatchObject({ ok: true, data: { ok: true } });
      expect(Date.now() - t0).toBeLessThan(30_000);
      void slow.close();
    } finally {
      proxy.close();
      await ledger.close();
    }
  });
});
