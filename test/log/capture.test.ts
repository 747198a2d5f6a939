/** Captured arguments and results: every string is redacted whole, then cut, so a secret straddling a cut never leaks its start. */
import { describe, it, expect } from "vitest";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { createCallLog } from "../../src/log/index.js";

const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZUBleGFtcGxlLmNvbSIsInJvbGUiOiJhZG1pbiJ9.c2lnbmF0dXJlc2lnbmF0dXJl";
const JWT_START = JWT.slice(0, 40); // enough of the token to be worth stealing

function setup() {
  const lines: string[] = [];
  const log = createCallLog({ sink: (l) => void lines.push(l), capture: { arguments: true, result: true, maxLength: 100_000 } });
  const note = defineTool({
    name: "note", version: "1", description: "d", effect: "read",
    input: z.object({ text: z.string() }).catchall(z.string()),
    output: z.object({ echo: z.string() }).catchall(z.string()),
    execute: (i) => ({ ...i, echo: i.text }),
  });
  const gate = log.instrument(createGate({ ...log.hooks, tools: [note] }));
  const captured = () => {
    const ev = JSON.parse(lines.at(-1)!) as Record<string, string>;
    return { args: ev["gen_ai.tool.call.arguments"]!, result: ev["gen_ai.tool.call.result"]! };
  };
  return { gate, captured, lines };
}

describe("capture: redact first, then cut", () => {
  it("redacts a token that straddles the 1,024-character cut of a string (arguments and result)", async () => {
    const { gate, captured, lines } = setup();
    for (const before of [1_024 - 60, 1_024 - 3, 1_024 - 100]) {
      const text = `${"x".repeat(before)} ${JWT}`;
      const r = await gate.call("note", { text });
      expect(r.ok).toBe(true);
      const { args, result } = captured();
      expect(args).not.toContain(JWT_START);
      expect(result).not.toContain(JWT_START);
      expect(lines.at(-1)).not.toContain("eyJhbGciOiJIUzI1NiJ9");
      const cut = (JSON.parse(args) as { text: string }).text;
      expect(cut.length).toBeLessThanOrEqual(1_024);
      expect(cut.startsWith("x".repeat(Math.min(before, 1_000)))).toBe(true);
    }
  });

  it("redacts a token that straddles the 200-character cut of a key", async () => {
    const { gate, captured } = setup();
    const key = `${"k".repeat(180)}-${JWT}`;
    const r = await gate.call("note", { text: "t", [key]: "v" });
    expect(r.ok).toBe(true);
    const { args, result } = captured();
    expect(args).not.toContain("eyJhbGciOiJIUzI1NiJ9");
    expect(result).not.toContain("eyJhbGciOiJIUzI1NiJ9");
    expect(args).toContain("k".repeat(180));
  });

  it("still redacts a secret near the start of a string longer than the redaction window", async () => {
    const { gate, captured } = setup();
    const text = `token=${"s".repeat(40)} ${"y".repeat(200_000)}`;
    await gate.call("note", { text });
    const { args } = captured();
    expect(args).not.toContain("s".repeat(40));
    expect((JSON.parse(args) as { text: string }).text.startsWith("token=[REDACTED] yyy")).toBe(true); // the name stays, the value goes
  });
});
