import { describe, it, expect, afterAll } from "vitest";
import "./_prime.js";
import { assertNoPoisoning, restoreGlobals } from "@fast-check/poisoning";
import { ADVERSARIAL_CASES, adversarialGate } from "./_inputs.js";

const IGNORED = /^(__vitest|__VITEST|__vite|\$|__coverage|__tinypool)/;

describe("adversarial inputs through gate.call", () => {
  afterAll(() => {
    try {
      assertNoPoisoning({ ignoredRootRegex: IGNORED });
    } finally {
      restoreGlobals({ ignoredRootRegex: IGNORED });
    }
  });

  it.each(ADVERSARIAL_CASES.map((c) => [c.name, c] as const))("%s → INVALID_INPUT, no service call, no pollution", async (_name, c) => {
    const { gate, serviceCalls } = adversarialGate();
    let result: Awaited<ReturnType<typeof gate.call>> | undefined;
    let threw: unknown;
    try {
      result = await gate.call(c.tool, c.args());
    } catch (e) {
      threw = e;
    }
    expect(threw).toBeUndefined();
    expect(result!.ok).toBe(false);
    if (result!.ok) return;
    expect(result!.code).toBe("INVALID_INPUT");
    expect(result!.retryable).toBe(false);
    expect(result!.effect).toBe("none");
    expect(result!.meta.attempts).toBe(0);
    expect(c.codes).toContain(result!.issues?.[0]?.code);
    expect(JSON.stringify(result).length).toBeLessThan(2_000); // nothing of the payload echoed
    expect(serviceCalls()).toBe(0);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty("polluted");
  });

  it("still serves valid calls after the barrage (sanity: the gate and counters work)", async () => {
    const { gate, serviceCalls } = adversarialGate();
    expect((await gate.call("get_order", '{"customerId":"c_1"}')).ok).toBe(true);
    expect((await gate.call("tag", { tags: { a: "1" } })).ok).toBe(true);
    expect(serviceCalls()).toBe(2);
  });

  // hardenValue returns a plain copy, reading each property exactly once: what the walk checked is
  // what the schema validates and what the tool receives. A getter runs once; a proxy is refused.
  it("a getter cannot smuggle a value past the size limit: it is read once, and that value is used", async () => {
    const { gate } = adversarialGate();
    let reads = 0;
    const args = {
      get customerId(): string {
        return reads++ === 0 ? "c_1" : "x".repeat(5 * 1024 * 1024);
      },
    };
    const r = await gate.call("get_order", args);
    expect(reads).toBe(1);
    expect(r.ok && (r.data as { customerId: string }).customerId).toBe("c_1");
  });

  it("a Proxy cannot smuggle a forbidden key past the walk (proxies are refused)", async () => {
    const { gate, serviceCalls } = adversarialGate();
    let reads = 0;
    const tags = new Proxy({} as Record<string, string>, {
      ownKeys: () => (reads++ === 0 ? [] : ["constructor"]),
      getOwnPropertyDescriptor: () => ({ value: "x", enumerable: true, configurable: true }),
      get: () => "x",
    });
    const r = await gate.call("tag", { tags });
    expect(r.ok === false && r.code).toBe("INVALID_INPUT");
    expect(serviceCalls()).toBe(0);
  });
});
