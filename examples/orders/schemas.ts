/** Schemas of the running example: one read (get_order) and one write (create_refund). */
import { z } from "zod";

export const OrderStatus = z.enum(["pending", "paid", "cancelled"]);

export const GetOrderInput = z.object({
  customerId: z.string().min(1),
  includeHistory: z.boolean().default(false),
});

export const Order = z.object({ id: z.string(), status: OrderStatus });

export const GetOrderOutput = z.object({
  found: z.boolean(),
  customerId: z.string(),
  orders: z.array(Order),
});

export const CreateRefundInput = z.object({
  orderId: z.string().min(1),
  amountCents: z.number().int().positive().max(1_000_000),
  reason: z.string().max(200).optional(),
});

export const CreateRefundOutput = z.object({
  refundId: z.string(),
  orderId: z.string(),
  amountCents: z.number().int(),
  status: z.enum(["accepted", "declined"]),
});

export type OrderRecord = z.infer<typeof Order>;
export type RefundRecord = z.infer<typeof CreateRefundOutput>;
