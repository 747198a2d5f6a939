/** Shared helpers for the gate tests. */
import { createGate, type GateOptions } from "../../src/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";

/** The orders example behind a gate, with its fake service exposed for spying. */
export function ordersGate(options: Omit<GateOptions, "tools"> = {}) {
  const service = createFakeOrders();
  const tools = makeOrderTools(service);
  const gate = createGate({ tools, retry: { baseMs: 1, capMs: 5 }, ...options });
  return { gate, service, tools };
}

/** Replace the varying parts of an envelope so inline snapshots are stable. */
export function stable<T extends { meta: { durationMs: number; callId: string } }>(r: T): T {
  return { ...r, meta: { ...r.meta, durationMs: 0, callId: "<id>" } };
}
