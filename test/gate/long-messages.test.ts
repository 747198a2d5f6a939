/**
 * Messages a tool, a classifier or `authorize` makes are redacted, then cut to 200 characters; one
 * of several MiB keeps its code (before, the redactor threw a RangeError on it after half a second,
 * which turned a REJECTED into "The tool failed").
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool, denied, reject } from "../../src/index.js";

const big = `password="${"a".repeat(4 * 1024 * 1024)}`;
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

  it("is redacted whole before the cut: a secret past 4 KiB is never shown in part after earlier replacements shortened the text", async () => {
    const seconds: [secret: string, part: string][] = [
      ["postgres://admin:Hunter2Secret@db.internal:5432/app", "Hunter2"],
      ["AKIAIOSFODNN7EXAMPLE", "AKIAIOSF"],
      ["ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abc"],
      ["password=CorrectHorse99", "CorrectH"],
      ["Authorization: Bearer abcdefghijklmnopqrstuv", "Bearer abc"],
    ];
    for (const [second, part] of seconds) {
      // Two 2 KiB tokens, each redacted to "[REDACTED]", then the second secret placed so that
      // character 4,296 falls just after `part`: a read window of the cut plus 4 KiB ended there, the
      // half before it matched no pattern, and the replacements pulled it into the first 200.
      const head = `upstream refused session token=${"J".repeat(2_100)} secret=${"K".repeat(2_100)} `;
      const cutAt = second.indexOf(part) + part.length;
      const message = `${head}${"x".repeat(200 + 4_096 - head.length - cutAt - 1)} ${second} and more ${"y".repeat(100)}`;
      const gate = createGate({ tools: [defineTool({ ...base, name: "t", execute: () => Promise.reject(reject(message)) })] });
      const r = await gate.call("t", {});
      expect(r).toMatchObject({ ok: false, code: "REJECTED", message: expect.stringMatching(/^upstream refused session token=\[REDACTED\] secret=\[REDACTED\] x+ .*…$/) });
      expect(r.ok ? "" : r.message, second).not.toContain(part);
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
