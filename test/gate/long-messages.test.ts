/**
 * Messages a tool, a classifier or `authorize` makes are redacted and cut to 200 characters; one
 * of several MiB keeps its code, and only its first few KiB are redacted (before, the redactor read
 * all of it: half a second, then a RangeError that turned a REJECTED into "The tool failed").
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool, denied, reject } from "../../src/index.js";

const big = `password="${"a".repeat(4 * 1024 * 1024)}`;
/** A custom pattern that records the length of each text the redactor tests it on. */
class Spy extends RegExp {
  readonly seen: number[] = [];
  override test(text: string): boolean {
    this.seen.push(text.length);
    return super.test(text);
  }
}

const base = { version: "1", description: "d", input: z.object({}), output: z.object({}), effect: "read" } as const;

describe("a message of several MiB", () => {
  it("from reject() or denied() stays REJECTED or DENIED, redacted and cut to 200 characters", async () => {
    const gate = createGate({
      tools: [
        defineTool({ ...base, name: "rejects", execute: () => Promise.reject(reject(big)) }),
        defineTool({ ...base, name: "denies", execute: () => Promise.reject(denied(`${"x".repeat(150)} ${big}`)) }),
      ],
    });
    const r = await gate.call("rejects", {});
    const d = await gate.call("denies", {});
    expect(r).toMatchObject({ ok: false, code: "REJECTED", message: 'password="[REDACTED]' });
    expect(d).toMatchObject({ ok: false, code: "DENIED", message: `${"x".repeat(150)} password="[REDACTED]` });
    const long = await createGate({ tools: [defineTool({ ...base, name: "t", execute: () => Promise.reject(reject(`${"y".repeat(300)} ${big}`)) })] }).call("t", {});
    expect(long).toMatchObject({ ok: false, code: "REJECTED", message: `${"y".repeat(199)}…` });
  });

  it("is redacted only as far as its first 4 KiB past the cut", async () => {
    const spy = new Spy("ACME-\\d{8}", "g");
    const gate = createGate({ redact: { patterns: [spy], replaceDefaults: true }, tools: [defineTool({ ...base, name: "t", execute: () => Promise.reject(reject(`ACME-12345678 ${big}`)) })] });
    const r = await gate.call("t", {});
    expect(spy.seen).toEqual([200 + 4_096]);
    // What the redactor left unchanged of the window's last 4,096 characters is dropped before the
    // cut (a secret the window's end cut in half would show there): 4,296 - 13 + 10 - 4,096 = 197.
    expect(r).toMatchObject({ ok: false, code: "REJECTED", message: `[REDACTED] ${big.slice(0, 186)}…` });
  });

  it("never shows a secret that the read window's end cut in half, even after an earlier replacement shortened the text", async () => {
    const seconds = ["postgres://admin:Hunter2Secret@db.internal:5432/app", "AKIAIOSFODNN7EXAMPLE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "password=CorrectHorse99", "Authorization: Bearer abcdefghijklmnopqrstuv"];
    for (const second of seconds) {
      // A 4 KiB token redacted to "[REDACTED]", then the second secret across the window's end (200 + 4,096).
      const head = `upstream refused session token=${"J".repeat(4_096)} `;
      const message = `${head}${"x".repeat(200 + 4_096 - head.length - Math.floor(second.length / 2))}${second} and more ${"y".repeat(100)}`;
      const gate = createGate({ tools: [defineTool({ ...base, name: "t", execute: () => Promise.reject(reject(message)) })] });
      const r = await gate.call("t", {});
      expect(r).toMatchObject({ ok: false, code: "REJECTED", message: "upstream refused session token=[REDACTED]…" });
    }
  });

  it("from authorize's reason is DENIED with the reason redacted and cut", async () => {
    const gate = createGate({
      tools: [defineTool({ ...base, name: "t", execute: () => ({}) })],
      authorize: () => ({ allow: false, reason: big }),
    });
    const r = await gate.call("t", {});
    expect(r).toMatchObject({ ok: false, code: "DENIED", message: 'password="[REDACTED]' });
  });
});
