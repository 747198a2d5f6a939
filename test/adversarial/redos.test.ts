/**
 * Text an attacker chooses meets toolgate's regular expressions (the default redaction patterns,
 * the echo check of issue messages) in time linear in its length. Shapes that made a pattern
 * restart a long scan at every position: quadratic before (the JWT pattern on "-eyJ"×64k: 2 s;
 * ×256k: about a minute). The bounds below are a hundred times what linear work takes here, and a
 * hundredth of what the quadratic did: a failure means a pattern went super-linear, not a slow machine.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { createRedactor } from "../../src/redact.js";

const SIZE = 256 * 1024;
const SHAPES = ["-eyJ", "eyJa", ".eyJaaaaa", "a.", "sk-", "sk-proj-", "Bearer ", "token=", "password: ", 'password: "', "password='", 'token="a b ', "-----BEGIN RSA PRIVATE KEY-----", "ghp_", "xoxb-", "AKIA", 'password\\":\\"', 'password\\":\\"a\\\\', "password=a\\", "token=a&", "token=a]", "password: [", "password=}"];
const long = (shape: string) => shape.repeat(Math.ceil(SIZE / shape.length));

function timed<T>(f: () => T): { value: T; ms: number } {
  const t0 = performance.now();
  const value = f();
  return { value, ms: performance.now() - t0 };
}

describe("regular expressions over attacker-sized text stay linear", () => {
  it.each(SHAPES)("the default redactor on %j repeated to 256 KB", (shape) => {
    const redact = createRedactor();
    const { ms } = timed(() => redact(long(shape)));
    expect(ms).toBeLessThan(2_000);
  });

  it("a key of 256 KB of '-eyJ' through the gate (unknown key, then an issue path): INVALID_INPUT, in linear time", async () => {
    const tool = defineTool({ name: "t", version: "1", description: "d", input: z.object({ a: z.string() }), output: z.object({}), effect: "read", execute: () => ({}) });
    const gate = createGate({ tools: [tool], limits: { maxBytes: 2 * 1024 * 1024 } });
    const t0 = performance.now();
    const r = await gate.call("t", { a: "x", [long("-eyJ")]: 1 });
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(r).toMatchObject({ ok: false, code: "INVALID_INPUT" });
  });

  it("a refinement's message checked against 256 values of 4 KB (the echo check): answered, in bounded time", async () => {
    const tool = defineTool({
      name: "t",
      version: "1",
      description: "d",
      input: z.record(z.string(), z.string()).refine(() => false, { message: "no" }),
      output: z.object({}),
      effect: "read",
      execute: () => ({}),
    });
    const gate = createGate({ tools: [tool], limits: { maxBytes: 2 * 1024 * 1024 } });
    const args = Object.fromEntries(Array.from({ length: 256 }, (_, i) => [`k${i}`, `(?${i}`.padEnd(4096, "(?")]));
    const t0 = performance.now();
    const r = await gate.call("t", args);
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(r).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ message: "no" }] });
  });
});
