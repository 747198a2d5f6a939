import { describe, expect, it } from "vitest";
import { z } from "zod";
import { _rememberedPaths, declaredPath } from "../../src/issue-paths.js";

describe("declaredPath: issue paths with payload keys masked", () => {
  const Addr = z.object({ city: z.string(), extra: z.record(z.string(), z.string()) }).meta({ id: "Addr" });
  const schema = z.toJSONSchema(
    z.object({
      ship: Addr,
      bill: Addr,
      pair: z.tuple([z.string(), z.object({ n: z.number() })]),
      either: z.union([z.object({ a: z.string() }), z.object({ b: z.object({ c: z.string() }) })]),
      byId: z.record(z.string(), z.object({ qty: z.number() })),
    }),
  ) as Record<string, { properties?: Record<string, unknown> } | unknown>;
  (schema.properties as Record<string, unknown>).cond = { type: "object", if: { required: ["k"] }, then: { properties: { when: { type: "string" } } }, else: { properties: { other: { type: "string" } } } };
  (schema.properties as Record<string, unknown>).dep = { type: "object", dependentSchemas: { k: { properties: { extra: { type: "number" } } } } };

  it.each([
    ["", ""],
    ["ship.city", "ship.city"], // through $ref
    ["bill.extra.someone@example.com", "bill.extra.*.*"], // a record's key (the dot in it splits it, masked alike)
    ["pair.1.n", "pair.1.n"], // prefixItems
    ["either.b.c", "either.b.c"], // a union branch
    ["byId.user-7781.qty", "byId.*.qty"], // a record's value schema still names what is below
    ["nosuch", "*"],
    ["nosuch.deeper", "*.*"],
    ["nosuch.5551234567", "*.*"], // a number below a key the schema does not describe is the caller's too
    ["_meta", "_meta"],
    ["byId.__proto__", "byId.__proto__"],
    ["ship.3", "ship.*"], // a number is a key of an object, not an index
    ["byId.15551234567.qty", "byId.*.qty"], // a numeric-looking record key (a phone number) is the caller's
    ["cond.when", "cond.when"], // declared in `then`
    ["cond.other", "cond.other"], // declared in `else`
    ["dep.extra", "dep.extra"], // declared in dependentSchemas
  ])("%s → %s", (path, want) => {
    expect(declaredPath(schema, path)).toBe(want);
  });

  it("a union wider than a few dozen branches still finds its names", () => {
    const wide = { type: "object", properties: { action: { anyOf: Array.from({ length: 100 }, (_, i) => ({ type: "object", properties: { [`f${i}`]: { type: "string" } } })) } } };
    expect(declaredPath(wide, "action.f70")).toBe("action.f70");
  });

  it("draft-07 tuple items", () => {
    expect(declaredPath({ type: "array", items: [{ type: "object", properties: { a: {} } }, { type: "string" }] }, "0.a")).toBe("0.a");
  });

  it("remembers only paths the schema declares throughout: a payload key is never kept", () => {
    const s = { type: "object", properties: { byId: { type: "object", additionalProperties: { type: "object", properties: { qty: { type: "number" } } } } } };
    expect(declaredPath(s, "byId.alice@example.qty")).toBe("byId.*.qty");
    expect(declaredPath(s, "byId.alice@example.qty")).toBe("byId.*.qty");
    expect(declaredPath(s, "byId")).toBe("byId");
    expect(_rememberedPaths(s)).toEqual(["byId"]);
  });

  it("without a schema only numbers and the fixed names stay", () => {
    expect(declaredPath(undefined, "a.0.__proto__")).toBe("*.0.__proto__");
  });

  it("a cyclic $ref does not loop", () => {
    const cyclic = { $ref: "#/$defs/N", $defs: { N: { type: "object", properties: { next: { $ref: "#/$defs/N" } } } } };
    expect(declaredPath(cyclic, "next.next.next.x")).toBe("next.next.next.*");
  });
});
