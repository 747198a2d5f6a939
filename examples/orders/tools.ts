/** The example tools, built over any OrdersService. */
import { defineTool, reject } from "../../src/index.js";
import { CreateRefundInput, CreateRefundOutput, GetOrderInput, GetOrderOutput } from "./schemas.js";
import type { OrdersService } from "./service.js";

/** Build `get_order` (read) and `create_refund` (write) over a service. */
export function makeOrderTools(service: OrdersService) {
  const getOrder = defineTool({
    name: "get_order",
    version: "1.0.0",
    description: "Look up a customer's orders by customer id. Cancelled orders are hidden unless includeHistory is true.",
    input: GetOrderInput,
    output: GetOrderOutput,
    effect: "read",
    timeoutMs: 2_000,
    // The example services answer from memory or a local file and cannot be cancelled, so this tool
    // does not ask for ctx.signal (the gate creates one only when a tool reads it). A tool backed by
    // the network passes it on: `fetch(url, { signal: ctx.signal })`.
    execute: (input) => service.findOrders(input.customerId, { includeHistory: input.includeHistory }),
  });

  const createRefund = defineTool({
    name: "create_refund",
    version: "1.0.0",
    description: "Refund a paid order, in cents. Declined when the order is not refundable.",
    input: CreateRefundInput,
    output: CreateRefundOutput,
    effect: "write",
    timeoutMs: 5_000,
    // The refund's business identity: a second refund of the same order is the same request.
    idempotencyKey: (input) => `refund:${input.orderId}`,
    // The refunds service dedupes on ctx.idempotencyKey, so a lost response may be retried safely.
    idempotentDownstream: true,
    execute: (input, ctx) =>
      service.createRefund({ orderId: input.orderId, amountCents: input.amountCents, reason: input.reason, idempotencyKey: ctx.idempotencyKey }),
    check: (out) => (out.status === "declined" ? reject("The refund was declined: the order is not refundable") : undefined),
  });

  return [getOrder, createRefund] as const;
}
