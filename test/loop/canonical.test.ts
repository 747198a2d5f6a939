/** The canonical form of a call's arguments: bounded work whatever the host hands in. */
import { describe, expect, it } from "vitest";
import { callKey, canonicalJson } from "../../src/loop/canonical.js";

/** `levels` levels of an object that holds the level below it twice: 2^levels leaves, one object per level. */
function shared(levels: number): unknown {
  let v: unknown = { leaf: 1 };
  for (let i = 0; i < levels; i++) v = { left: v, right: v };
  return v;
}

describe("canonicalJson", () => {
  it("gives up on a value that holds one object in exponentially many places, at once, as on a too-deep one", () => {
    // Unbounded, this is 2^40 visits (hours). Bounded, the three walks take about a second here: an
    // order of magnitude more means the bound no longer holds (8 million visits took 12 s).
    const t0 = performance.now();
    expect(canonicalJson(shared(40))).toBeUndefined();
    // two such calls are never the same call (a unique key each), as for arguments too deep to compare
    expect(callKey("t", shared(40))).not.toBe(callKey("t", shared(40)));
    expect(performance.now() - t0).toBeLessThan(6_000);
  });

  it("still compares a value with shared objects when it is small, like its JSON", () => {
    expect(canonicalJson(shared(3))).toBe(canonicalJson(JSON.parse(JSON.stringify(shared(3)))));
    expect(canonicalJson({ b: 1, a: [1, 2] })).toBe('{"a":[1,2],"b":1}');
  });
});
