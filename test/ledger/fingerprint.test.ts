/**
 * The fingerprint that tells "same key, same arguments" (replay) from "same key, other arguments"
 * (CONFLICT): a validated input holding a Set or a Map (a transform's output, `z.set`, `z.map`)
 * is fingerprinted by its contents, never as the `{}` JSON.stringify writes for it.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createHash } from "node:crypto";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { memoryLedger, sqliteLedger } from "../../src/ledger/index.js";

/** Validated inputs a transform can produce, by name. */
const VALUES: Record<string, () => unknown> = {
  setAlice: () => ({ a: new Set(["alice"]) }),
  setAlice2: () => ({ a: new Set(["alice"]) }),
  setOthers: () => ({ a: new Set(["mallory", "eve"]) }),
  mapK1: () => new Map([["k", 1]]),
  mapK2: () => new Map([["k", 2]]),
  mapObjBA: () => new Map([[{ b: 1, a: 2 }, new Set([1])]]),
  mapObjAB: () => new Map([[{ a: 2, b: 1 }, new Set([1])]]),
  emptySet: () => ({ a: new Set() }),
  emptyMap: () => ({ a: new Map() }),
  emptyObj: () => ({ a: {} }),
  spelledSet: () => ({ a: { "#set": ["alice"] } }),
  spelledText: () => `~{".a":{"#set":["alice"]}}`,
  pairSetFirst: () => [new Set(), { "#set": [] }],
  pairSetLast: () => [{ "#set": [] }, new Set()],
};

/** Do two validated inputs count as the same arguments for one key (replay) or not (CONFLICT)? */
async function same(a: string, b: string): Promise<boolean> {
  const tool = defineTool({
    name: "t",
    version: "1.0.0",
    description: "A write whose validated input is built by a transform",
    effect: "write",
    input: z.object({ v: z.string() }).transform(({ v }) => VALUES[v]!()),
    output: z.object({ ok: z.boolean() }),
    execute: async () => ({ ok: true }),
  });
  const gate = createGate({ tools: [tool], ledger: memoryLedger() });
  expect(await gate.call("t", { v: a }, { idempotencyKey: "k" })).toMatchObject({ ok: true });
  const r = await gate.call("t", { v: b }, { idempotencyKey: "k" });
  if (r.ok) return r.meta.replayed === true;
  expect(r).toMatchObject({ code: "CONFLICT", retryable: false });
  return false;
}

describe("fingerprint of Sets and Maps", () => {
  it("differs when their contents differ, and never equals a value without one", async () => {
    expect(await same("setAlice", "setAlice2")).toBe(true);
    expect(await same("setAlice", "setOthers")).toBe(false);
    expect(await same("mapK1", "mapK2")).toBe(false);
    expect(await same("mapObjBA", "mapObjAB")).toBe(true); // object keys sorted inside too
    expect(await same("emptySet", "emptyObj")).toBe(false);
    expect(await same("emptySet", "emptyMap")).toBe(false);
    // A plain value spelling out the tagged form is another value.
    expect(await same("setAlice", "spelledSet")).toBe(false);
    expect(await same("setAlice", "spelledText")).toBe(false);
    expect(await same("pairSetFirst", "pairSetLast")).toBe(false);
  });

  it("keeps the fingerprint of an input without a Set or Map (entries stored before stay valid)", async () => {
    const ledger = memoryLedger();
    const tool = defineTool({
      name: "t",
      version: "1.0.0",
      description: "Plain input",
      effect: "write",
      input: z.object({ b: z.array(z.union([z.number(), z.object({ d: z.number(), c: z.number() })])), a: z.string() }),
      output: z.object({ ok: z.boolean() }),
      execute: async () => ({ ok: true }),
    });
    await createGate({ tools: [tool], ledger }).call("t", { b: [1, { d: 1, c: 2 }], a: "x" });
    const expected = createHash("sha256").update('{"a":"x","b":[1,{"c":2,"d":1}]}').digest("hex");
    expect((await ledger.list())[0]?.fingerprint).toBe(expected);
  });

  for (const [name, make] of [
    ["memory", () => memoryLedger()],
    ["sqlite", (dir: string) => sqliteLedger({ path: join(dir, "f.db") })],
  ] as const) {
    it(`${name}: same key, other Set contents: CONFLICT, not the other call's result`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "toolgate-fp-"));
      const seen: string[][] = [];
      const tag = defineTool({
        name: "tag_users",
        version: "1.0.0",
        description: "Tag users",
        effect: "write",
        input: z.object({ userIds: z.array(z.string()).transform((a) => new Set(a)) }),
        output: z.object({ tagged: z.array(z.string()) }),
        execute: async (i) => (seen.push([...i.userIds]), { tagged: [...i.userIds] }),
      });
      const ledger = make(dir);
      try {
        const gate = createGate({ tools: [tag], ledger });
        expect(await gate.call("tag_users", { userIds: ["alice"] }, { idempotencyKey: "k1" })).toMatchObject({ ok: true });
        expect(await gate.call("tag_users", { userIds: ["mallory", "eve"] }, { idempotencyKey: "k1" })).toMatchObject({ ok: false, code: "CONFLICT", retryable: false });
        expect(await gate.call("tag_users", { userIds: ["alice"] }, { idempotencyKey: "k1" })).toMatchObject({ ok: true, meta: { replayed: true } });
        expect(seen).toEqual([["alice"]]);
      } finally {
        await ledger.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it("an input no fingerprint can be taken of (a cycle) answers FAILED: no key, nothing ran", async () => {
    let runs = 0;
    const tool = defineTool({
      name: "loop",
      version: "1.0.0",
      description: "Cyclic input",
      effect: "write",
      input: z.object({ a: z.string() }).transform((v) => {
        const o: Record<string, unknown> = { ...v };
        o.self = o;
        return o;
      }),
      output: z.object({ ok: z.boolean() }),
      execute: async () => (runs++, { ok: true }),
    });
    const errors: string[] = [];
    const gate = createGate({ tools: [tool], ledger: memoryLedger(), onHookError: (h) => void errors.push(h) });
    expect(await gate.call("loop", { a: "x" })).toMatchObject({ ok: false, code: "FAILED", retryable: false, effect: "none", message: expect.stringContaining("could not be derived") });
    expect(runs).toBe(0);
    expect(errors).toEqual([]);
  });
});
