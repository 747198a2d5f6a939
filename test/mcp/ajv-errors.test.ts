/**
 * The proxy's Ajv validators list every error of a small value (up to the gate's 20 issues) and
 * only the first of a large one: Ajv's allErrors builds them all before any is dropped.
 */
import { describe, expect, it } from "vitest";
import { createAjvCompilers } from "../../src/mcp/proxy/ajv.js";

const schema = { type: "object", properties: { xs: { type: "array", items: { type: "integer" } }, a: { type: "string" }, b: { type: "string" } }, required: ["a", "b"] };

describe("proxy validators: all errors of a small value, the first of a large one", () => {
  it("a small invalid value: every error; a valid one: none", () => {
    const c = createAjvCompilers().compile(schema);
    if (!c.ok) throw new Error(c.reason);
    expect(c.validate({ xs: [1, "x", "y"], a: 1 })).toBe(false);
    expect(c.validate.errors?.map((e) => e.instancePath + " " + e.keyword).sort()).toEqual([" required", "/a type", "/xs/1 type", "/xs/2 type"]);
    expect(c.validate({ xs: [1], a: "a", b: "b" })).toBe(true);
    expect(c.validate.errors).toBeNull();
  });

  it("500,000 wrong items (about 1 MiB): the first error, without building the rest", () => {
    const c = createAjvCompilers().compile(schema);
    if (!c.ok) throw new Error(c.reason);
    const xs = Array<string>(500_000).fill("x");
    expect(c.validate({ xs, a: "a", b: "b" })).toBe(false);
    expect(c.validate.errors).toHaveLength(1);
    expect(c.validate.errors?.[0]).toMatchObject({ instancePath: "/xs/0", keyword: "type" });
  });
});
