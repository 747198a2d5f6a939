/** The redactor: custom patterns apply to strings of any length; the length shortcut holds only for the defaults. */
import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { createRedactor, DEFAULT_SECRET_PATTERNS } from "../../src/index.js";

/** The shortest strings each default pattern matches (found by hand from the patterns). */
const SHORTEST = ["token=abcdef", "secret:abcdef", "Bearer abcdefgh", "xoxb-abcdefghij", "sk_live_abcdefghij", "sk-abcdefghijklmnop", "eyJabcde.abcde.abcde", "AKIAABCDEFGHIJKLMNOP"];

describe("createRedactor", () => {
  it("applies custom patterns to short strings (a 7-character PIN, a 4-digit code)", () => {
    expect(createRedactor({ patterns: [/\bPIN\d{4}\b/g] })("PIN1234")).toBe("[REDACTED]");
    expect(createRedactor({ patterns: [/\b\d{4}\b/] })("1234")).toBe("[REDACTED]");
    expect(createRedactor({ patterns: [/\b\d{4}\b/g], replaceDefaults: true, replacement: "#" })("pin 1234")).toBe("pin #");
    expect(createRedactor({ patterns: [/x/g] })("")).toBe("");
  });

  it("still redacts the shortest secrets the default patterns match", () => {
    const redact = createRedactor();
    for (const s of SHORTEST) expect(redact(s), s).toBe("[REDACTED]");
    expect(Math.min(...SHORTEST.map((s) => s.length))).toBe(12);
  });

  it("no default pattern matches a string shorter than 12 characters (so the shortcut loses nothing)", () => {
    const pieces = ["sk-", "sk_live_", "ghp_", "xoxb-", "AKIA", "AIza", "Bearer ", "eyJ", ".", "token", "secret", "apikey", "passwd", "=", ":", "-----BEGIN ", "PRIVATE KEY-----", "a", "Z", "0", "_", "-", " "];
    const short = fc.array(fc.constantFrom(...pieces), { maxLength: 8 }).map((p) => p.join("")).filter((s) => s.length < 12);
    fc.assert(
      fc.property(short, (s) => DEFAULT_SECRET_PATTERNS.every((p) => new RegExp(p.source, p.flags.replace("g", "")).exec(s) === null)),
      { numRuns: 5_000 },
    );
    // And matches generated from each pattern (word boundaries dropped, case fixed) are never shorter.
    for (const p of DEFAULT_SECRET_PATTERNS) {
      const re = new RegExp(`^(?:${p.source.replace(/\\b/g, "")})$`);
      for (const m of fc.sample(fc.stringMatching(re), 200)) expect(m.length, p.source).toBeGreaterThanOrEqual(12);
    }
  });
});
