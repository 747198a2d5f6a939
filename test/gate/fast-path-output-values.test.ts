/**
 * The compiled output check counts the values it builds as notJsonData counts them (src/json-data.ts,
 * as JSON writes them: a default is one, an absent key none) and says NO past MAX_OUTPUT_VALUES, so
 * the schema path answers INVALID_OUTPUT, as it does without the fast path.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compileFastOutput, NO } from "../../src/fast-path.js";
import { MAX_OUTPUT_VALUES } from "../../src/json-data.js";

describe("the compiled output check and MAX_OUTPUT_VALUES", () => {
  it("an array: exactly the limit passes, one value more is NO", { timeout: 20_000 }, () => {
    const fast = compileFastOutput(z.array(z.boolean()));
    expect(fast).toBeDefined();
    const data = new Array<boolean>(MAX_OUTPUT_VALUES).fill(true); // the array and its elements: one value past the limit
    expect(fast!(data) === NO).toBe(true); // (not toBe: a failure would print ten million values)
    data.pop(); // exactly MAX_OUTPUT_VALUES values, which notJsonData accepts ("more than" is refused)
    expect((fast!(data) as unknown[]).length).toBe(MAX_OUTPUT_VALUES - 1);
  });

  it("defaults and nulls count, absent keys do not", { timeout: 20_000 }, () => {
    const fast = compileFastOutput(z.object({ a: z.array(z.object({ b: z.null(), c: z.number().default(1), d: z.string().optional() })) }));
    expect(fast).toBeDefined();
    // The root, the array, and per element the object, b and c's default (d absent): 2 + 3n values.
    const data = { a: new Array<object>((MAX_OUTPUT_VALUES - 1) / 3).fill({ b: null }) };
    expect(2 + 3 * data.a.length).toBe(MAX_OUTPUT_VALUES + 1);
    expect(fast!(data) === NO).toBe(true);
  });

  it("small data: unchanged", () => {
    const fast = compileFastOutput(z.object({ a: z.array(z.number().nullable()), b: z.enum(["x", "y"]).default("x") }));
    expect(fast!({ a: [1, null] })).toEqual({ a: [1, null], b: "x" });
  });
});
