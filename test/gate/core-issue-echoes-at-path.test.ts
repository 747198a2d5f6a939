/**
 * A schema's own error function keeps zod's built-in code (`invalid_type`): its message may print
 * the object or array it received. Each leaf of that value is hidden, as a string at the path is.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool, type ToolResult } from "../../src/index.js";

const gateOf = (input: z.ZodType, output: z.ZodType = z.null(), execute: () => unknown = () => null) =>
  createGate({ tools: [defineTool({ name: "t", version: "1", description: "d", input, output, effect: "read", execute: execute as () => never })] });
const issuesOf = (r: ToolResult) => (r.ok ? null : r.issues);

describe("an error function under a built-in code that prints the object or array it received", () => {
  const n = z.number({ error: (iss) => `expected a number, got ${JSON.stringify(iss.input)}` });
  const s = z.string({ error: (iss) => `not a string: ${String(iss.input)}` });

  it("an object and an array at the path: their leaves become <value>, the code stays", async () => {
    const r = await gateOf(z.object({ n, s })).call("t", { n: { card: "4111111111111111", cvc: "737" }, s: ["hunter2-password", "other"] });
    expect(issuesOf(r)).toEqual([
      { path: "n", code: "invalid_type", message: 'expected a number, got {"card":"<value>","cvc":"<value>"}' },
      { path: "s", code: "invalid_type", message: "not a string: <value>,<value>" },
    ]);
  });

  it("nested leaves, numbers and JSON-escaped strings too; a string at the path as before", async () => {
    const r = await gateOf(z.object({ n })).call("t", { n: { deep: [{ pin: 123456, note: 'say "hi"' }] } });
    expect(issuesOf(r)).toEqual([{ path: "n", code: "invalid_type", message: 'expected a number, got {"deep":[{"pin":<value>,"note":"<value>"}]}' }]);
    const r2 = await gateOf(z.object({ n })).call("t", { n: "hunter2-password" });
    expect(issuesOf(r2)).toEqual([{ path: "n", code: "invalid_type", message: 'expected a number, got "<value>"' }]);
  });

  it("on the output side: the service's data in such a message is hidden", async () => {
    const r = await gateOf(z.object({}), z.object({ total: n }), () => ({ total: { owner: "alice.smith@example.com" } })).call("t", {});
    expect(issuesOf(r)).toEqual([{ path: "total", code: "invalid_type", message: 'expected a number, got {"owner":"<value>"}' }]);
  });

  it("a value too large to hide leaf by leaf (past 256 leaves or 10,000 nodes): fixed wording, the code stays", async () => {
    const emails = Array.from({ length: 300 }, (_, i) => `customer${i}@example.com`);
    const big = await gateOf(z.object({}), z.object({ total: n }), () => ({ total: emails })).call("t", {});
    expect(issuesOf(big)).toEqual([{ path: "total", code: "invalid_type", message: "Invalid value" }]);
    const deep = await gateOf(z.object({}), z.object({ total: n }), () => ({ total: { history: new Array<number>(10_001).fill(0), owner: "alice.smith@example.com" } })).call("t", {});
    expect(issuesOf(deep)).toEqual([{ path: "total", code: "invalid_type", message: "Invalid value" }]);
    // A refinement's own text on a large payload is kept (its echoes hidden as far as the pattern reaches).
    const refined = await gateOf(z.object({ xs: z.array(z.string()) }).refine(() => false, { message: "pick fewer items" })).call("t", { xs: emails });
    expect(issuesOf(refined)).toEqual([{ path: "", code: "custom", message: "pick fewer items" }]);
  });

  it("zod's own message for an object is unchanged", async () => {
    const r = await gateOf(z.object({ n: z.number() })).call("t", { n: { card: "4111111111111111" } });
    expect(issuesOf(r)).toEqual([{ path: "n", code: "invalid_type", message: "Invalid input: expected number, received object" }]);
  });
});
