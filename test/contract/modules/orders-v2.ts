/**
 * The orders example with a changed get_order, chosen by env TOOLGATE_TEST_VARIANT:
 * `breaking` (a new required field, same version), `bumped` (the same change, version 2.0.0),
 * `compatible` (a new optional field, same version). Used by the CLI tests of --against.
 */
import { z } from "zod";
import { defineTool } from "../../../src/index.js";
import { createFakeOrders, makeOrderTools } from "../../../examples/orders/index.js";
import { GetOrderInput, GetOrderOutput } from "../../../examples/orders/schemas.js";

const variant = process.env.TOOLGATE_TEST_VARIANT ?? "compatible";
const [, createRefund] = makeOrderTools(createFakeOrders());
const input =
  variant === "compatible" ? GetOrderInput.extend({ limit: z.number().int().min(1).max(50).optional() }) : GetOrderInput.extend({ region: z.enum(["eu", "us"]) });

const getOrder = defineTool({
  name: "get_order",
  version: variant === "bumped" ? "2.0.0" : "1.0.0",
  description: "Look up a customer's orders by customer id.",
  input,
  output: GetOrderOutput,
  effect: "read",
  execute: (i) => ({ found: false, customerId: i.customerId, orders: [] }),
});

export default [getOrder, createRefund];
