import { afterEach, describe, expect, it, vi } from "vitest";
import { wallClockAt } from "../../src/wall-clock.js";
import { createGate, defineTool, type CallRecord } from "../../src/index.js";
import { z } from "zod";

describe("wallClockAt", () => {
  it("maps a performance.now() reading to epoch ms", () => {
    const before = Date.now();
    const at = wallClockAt(performance.now());
    const after = Date.now();
    expect(at).toBeGreaterThanOrEqual(before - 2);
    expect(at).toBeLessThanOrEqual(after + 2);
  });

  it("maps an earlier reading to an earlier wall time, whatever order calls finish in", () => {
    for (const ago of [5_000, 0, 2_000, 0.5, 60_000]) {
      const now = performance.now();
      const wall = Date.now();
      expect(Math.abs(wallClockAt(now - ago, now) - (wall - ago))).toBeLessThanOrEqual(5);
    }
  });

  it("is what the call records carry as startedAt", async () => {
    const records: CallRecord[] = [];
    const tool = defineTool({ name: "t", version: "1", description: "d", input: z.object({}), output: z.object({}), effect: "read", execute: () => ({}) });
    const gate = createGate({ tools: [tool], onCall: (r) => void records.push(r) });
    for (let i = 0; i < 3; i++) {
      const before = Date.now();
      await gate.call("t", {});
      const after = Date.now();
      const r = records[i]!;
      expect(r.startedAt).toBeGreaterThanOrEqual(before - 2);
      expect(r.startedAt).toBeLessThanOrEqual(after + 2);
    }
  });

  describe("under fake timers", () => {
    afterEach(() => void vi.useRealTimers());

    it("follows the fake system time at once, also when a test sets it without advancing the clocks", async () => {
      const records: CallRecord[] = [];
      const tool = defineTool({ name: "t", version: "1", description: "d", input: z.object({}), output: z.object({}), effect: "read", execute: () => ({}) });
      const gate = createGate({ tools: [tool], onCall: (r) => void records.push(r) });
      vi.useFakeTimers();
      vi.setSystemTime(new Date("2030-01-01T00:00:00Z"));
      await gate.call("t", {});
      vi.setSystemTime(new Date("2031-06-01T12:00:00Z")); // performance.now() does not move
      await gate.call("t", {});
      vi.advanceTimersByTime(2_500);
      await gate.call("t", {});
      expect(records.map((r) => new Date(r.startedAt).toISOString())).toEqual(["2030-01-01T00:00:00.000Z", "2031-06-01T12:00:00.000Z", "2031-06-01T12:00:02.500Z"]);
      vi.useRealTimers();
      const before = Date.now();
      await gate.call("t", {});
      expect(Math.abs(records[3]!.startedAt - before)).toBeLessThanOrEqual(5); // back on the real clocks
    });

    it("follows a mocked Date while performance stays real (setSystemTime alone, or toFake: ['Date'])", async () => {
      const records: CallRecord[] = [];
      const tool = defineTool({ name: "t", version: "1", description: "d", input: z.object({}), output: z.object({}), effect: "read", execute: () => ({}) });
      const gate = createGate({ tools: [tool], onCall: (r) => void records.push(r) });
      await gate.call("t", {}); // synced on the real clocks just now
      vi.setSystemTime(new Date("2032-01-01T00:00:00Z")); // without useFakeTimers: vitest mocks Date only
      await gate.call("t", {});
      vi.useRealTimers();
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(new Date("2033-01-01T00:00:00Z"));
      await gate.call("t", {});
      const iso = (r: CallRecord) => new Date(r.startedAt).toISOString();
      expect(iso(records[1]!).slice(0, 19)).toBe("2032-01-01T00:00:00");
      expect(iso(records[2]!).slice(0, 19)).toBe("2033-01-01T00:00:00");
    });
  });
});

