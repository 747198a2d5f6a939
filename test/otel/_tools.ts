/** Tools for the observability tests: the orders example plus a few with controlled failures. */
import { z } from "zod";
import { defineTool, reject, transient } from "../../src/index.js";

/** A read that fails transiently `failures` times, then answers. */
export function flakyRead(state: { failures: number; calls: number }) {
  return defineTool({
    name: "flaky_read",
    version: "2.1.0",
    description: "A read that fails transiently a few times",
    input: z.object({ q: z.string() }),
    output: z.object({ answer: z.string() }),
    effect: "read",
    retry: { attempts: 3, baseMs: 1, capMs: 2 },
    execute: ({ q }) => {
      state.calls++;
      if (state.failures > 0) {
        state.failures--;
        throw transient("upstream busy");
      }
      return { answer: q.toUpperCase() };
    },
  });
}

/** A login tool whose password (schema-marked secret) must never be recorded. */
export const login = defineTool({
  name: "login",
  version: "1.0.0",
  description: "Log a user in",
  input: z.object({
    user: z.string(),
    password: z.string().meta({ secret: true }),
    profile: z.object({ apiToken: z.string().meta({ secret: true }).optional(), note: z.string().optional() }).optional(),
    keys: z.array(z.object({ value: z.string().meta({ secret: true }), label: z.string() })).optional(),
  }),
  output: z.object({ session: z.string().meta({ secret: true }), user: z.string(), note: z.string() }),
  effect: "write",
  execute: ({ user, profile }) => ({ session: "s3ss10n-value-kept-out", user, note: profile?.note ?? "none" }),
});

/** A write whose business rule says no. */
export const refuse = defineTool({
  name: "refuse",
  version: "1.0.0",
  description: "Always refuses",
  input: z.object({}),
  output: z.object({}),
  effect: "write",
  execute: () => {
    throw reject("not today");
  },
});
