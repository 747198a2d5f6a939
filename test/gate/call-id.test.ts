/** Call ids (src/call-id.ts): unique, of one shape, across the table's roll-over of the low digits. */
import { describe, expect, it } from "vitest";
import { newCallId } from "../../src/call-id.js";

describe("newCallId", () => {
  it("gives 10,000 distinct ids of one shape, across several roll-overs of the low digits", () => {
    const ids = Array.from({ length: 10_000 }, () => newCallId());
    expect(new Set(ids).size).toBe(ids.length);
    const prefix = ids[0]!.slice(0, 16);
    for (const id of ids) {
      expect(id).toMatch(/^tg_[A-Za-z0-9_-]{12}_[0-9a-z]{3,}$/);
      expect(id.startsWith(prefix)).toBe(true);
    }
    // the counter reads back in order: base 36 after the prefix, two digits at least
    const counters = ids.map((id) => parseInt(id.slice(16), 36));
    for (let i = 1; i < counters.length; i++) expect(counters[i]).toBe(counters[i - 1]! + 1);
  });
});
