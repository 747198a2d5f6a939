/** A module whose tool drifts: a refinement the advertised schema cannot say. Used by the CLI tests. */
import { z } from "zod";
import { defineTool } from "../../../src/index.js";

export default [
  defineTool({
    name: "book_slot",
    version: "1.0.0",
    description: "Book a slot; weekends are refused by a refinement the JSON Schema cannot express",
    input: z.object({ day: z.number().int().min(1).max(7).refine((d) => d < 6, "weekdays only"), who: z.string().min(1) }),
    output: z.object({ ok: z.boolean() }),
    effect: "read",
    execute: () => ({ ok: true }),
  }),
];
