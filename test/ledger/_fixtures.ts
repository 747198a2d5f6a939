/** Shared test fixtures: a fake payments service (the downstream a write tool calls) and tools over it. */
import { z } from "zod";
import { defineTool, type ToolContext } from "../../src/index.js";

/** An error shaped like a dropped connection (classified transient). */
export class Reset extends Error {
  readonly code = "ECONNRESET";
}

/** A downstream that applies payments; optionally deduplicates on an idempotency key. */
export function fakeBank() {
  const applied: { id: string; orderId: string; key: string | undefined }[] = [];
  const byKey = new Map<string, string>();
  return {
    applied,
    /** Apply once (per key when given and honoured). */
    pay(orderId: string, key: string | undefined, honourKey: boolean): string {
      if (honourKey && key !== undefined) {
        const prior = byKey.get(key);
        if (prior !== undefined) return prior;
      }
      const id = `pay_${applied.length + 1}`;
      applied.push({ id, orderId, key });
      if (honourKey && key !== undefined) byKey.set(key, id);
      return id;
    },
    countFor(orderId: string): number {
      return applied.filter((a) => a.orderId === orderId).length;
    },
    find(orderId: string) {
      return applied.find((a) => a.orderId === orderId);
    },
  };
}

export const PayInput = z.object({ orderId: z.string().min(1), amountCents: z.number().int().positive(), note: z.string().optional() });
export const PayOutput = z.object({ paymentId: z.string(), orderId: z.string() });

type Exec = (input: z.infer<typeof PayInput>, ctx: ToolContext) => Promise<z.input<typeof PayOutput>>;

/** A write tool over `exec`, with optional guarantees. */
export function payTool(
  exec: Exec,
  extra: {
    name?: string;
    idempotentDownstream?: boolean;
    reconcile?: (input: z.infer<typeof PayInput>) => Promise<{ status: "applied"; output: z.input<typeof PayOutput> } | { status: "none" } | { status: "unknown" }>;
    idempotencyKey?: (input: z.infer<typeof PayInput>) => string | undefined;
    concurrency?: number;
  } = {},
) {
  return defineTool({
    name: extra.name ?? "pay",
    version: "1.0.0",
    description: "Pay an order",
    input: PayInput,
    output: PayOutput,
    effect: "write",
    timeoutMs: 2_000,
    retry: { attempts: 3, baseMs: 0, capMs: 0 },
    ...(extra.idempotentDownstream !== undefined ? { idempotentDownstream: extra.idempotentDownstream } : {}),
    ...(extra.reconcile !== undefined ? { reconcile: extra.reconcile } : {}),
    ...(extra.idempotencyKey !== undefined ? { idempotencyKey: extra.idempotencyKey } : {}),
    ...(extra.concurrency !== undefined ? { concurrency: extra.concurrency } : {}),
    execute: exec,
  });
}

/** A controllable clock. */
export function fakeClock(start = 1_800_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

/** Resolve a promise from outside. */
export function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
