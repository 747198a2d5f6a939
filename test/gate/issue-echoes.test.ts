/**
 * Issue messages repeat no received value: a refinement's message (the schema author's text) may
 * quote any value of the payload, in any case; a built-in message quotes the schema, and stays.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type } from "arktype";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { createGate, defineTool, type ToolResult } from "../../src/index.js";

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

describe("issue messages and the received values: ArkType", () => {
  const SECRET = "correct-horse-battery";
  const gateOf = (input: StandardSchemaV1, output: StandardSchemaV1 = type({}), execute: () => unknown = () => ({})) =>
    createGate({ tools: [defineTool({ name: "t", version: "1", description: "d", input, output, effect: "read", execute: execute as () => never })] });
  const messages = (r: ToolResult): string => (r.ok ? "" : JSON.stringify(r.issues?.map((i) => i.message)));

  it.each([
    ["a narrow over an object (the object printed as JSON)", type({ user: "string", note: "string" }).narrow((o) => o.user !== o.note), { user: SECRET, note: SECRET }, "", "predicate"],
    ["an object where a literal was expected", type({ a: "'x'" }), { a: { s: SECRET } }, "a", "unit"],
    ["a string with a quote (printed JSON-escaped)", type({ a: "'x' | 'y'" }), { a: `${SECRET}"q` }, "a", undefined],
    ["a tab in an email (printed JSON-escaped)", type({ e: "string.email" }), { e: `correct\thorse-battery` }, "e", "pattern"],
    ["ctx.reject({ actual })", type({ a: "string" }).narrow((o, ctx) => o.a === "ok" || ctx.reject({ expected: "ok", actual: o.a })), { a: SECRET }, "", "predicate"],
    ["a union whose value is built to end ArkType's '(was …)' early", type({ a: "'x' | 'y'" }), { a: `q) or ${SECRET}` }, "a", "union"],
    ["a union with an index signature (its message names the payload's keys)", type({ o: type({ "[string]": "number" }).or("string") }), { o: { [`${SECRET}_k`]: "s" } }, `o.${SECRET}_k`, undefined], // the key is in the path, as for any validator
    ["pipe.try (the exception's text)", type({ a: type("string").pipe.try((s): unknown => JSON.parse(s)) }), { a: `{${SECRET}` }, "a", "predicate"],
  ])("%s: no received value, no exception text", async (_label, input, args, path, code) => {
    const r = await gateOf(input).call("t", args);
    expect(r).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path, ...(code === undefined ? {} : { code }) }] });
    expect(messages(r)).not.toContain("correct");
    expect(messages(r)).not.toContain("SyntaxError");
    expect(messages(r)).not.toMatch(/\(was /);
  });

  it("the service's data in an output narrow's message is not shown either", async () => {
    const r = await gateOf(type({}), type({ ok: "boolean", owner: "string" }).narrow((o) => o.ok), () => ({ ok: false, owner: "alice.smith@example.com" })).call("t", {});
    expect(r).toMatchObject({ ok: false, code: "INVALID_OUTPUT" });
    expect(messages(r)).not.toContain("alice");
  });

  it("an undeclared key of a closed type is an unknown field: named in the path only", async () => {
    const r = await gateOf(type({ "+": "reject", a: "string" })).call("t", { a: "x", "alice@example.com": 1 });
    expect(r).toMatchObject({ ok: false, issues: [{ path: "alice@example.com", code: "unrecognized_key", message: "Unknown field" }] });
  });

  it("ArkType's own codes are kept (minLength), its message worded from the schema", async () => {
    const r = await gateOf(type({ s: "string > 0" })).call("t", { s: "" });
    expect(r).toMatchObject({ ok: false, issues: [{ path: "s", code: "minLength", message: "must be non-empty" }] });
  });
});
