/**
 * Issue messages repeat no received value: a refinement's message (the schema author's text) may
 * quote any value of the payload, in any case; a built-in message quotes the schema, and stays.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";

const tool = (input: z.ZodType) => defineTool({ name: "t", version: "1", description: "d", input, output: z.object({}), effect: "read", execute: () => ({}) });

describe("issue messages and the received values", () => {
  it("a refinement over the whole object that quotes other fields: they become <value>", async () => {
    const input = z
      .object({ user: z.string(), password: z.string() })
      .refine((v) => v.password.length > 40, { error: (iss) => `password ${(iss.input as { password: string }).password} is too short for ${(iss.input as { user: string }).user}` });
    const r = await createGate({ tools: [tool(input)] }).call("t", { user: "PLANTEDuser", password: "PLANTEDpw_refine" });
    expect(r).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ code: "custom", message: "password <value> is too short for <value>" }] });
  });

  it("a message that changes a value's case still hides it", async () => {
    const input = z.object({ code: z.string() }).superRefine((v, ctx) => ctx.addIssue({ code: "custom", message: `bad code '${v.code.toUpperCase()}'`, path: [] }));
    const r = await createGate({ tools: [tool(input)] }).call("t", { code: "plantedcodeupper" });
    expect(r).toMatchObject({ ok: false, issues: [{ message: "bad code '<value>'" }] });
  });

  it("a built-in message keeps the schema's words, even when the payload holds them elsewhere", async () => {
    const input = z.object({ status: z.enum(["pending", "paid"]), note: z.string(), kind: z.string() });
    const r = await createGate({ tools: [tool(input)] }).call("t", { status: "shipped", note: "pending", kind: "string" });
    expect(r).toMatchObject({ ok: false, issues: [{ path: "status", message: 'Invalid option: expected one of "pending"|"paid"' }] });
  });
});
