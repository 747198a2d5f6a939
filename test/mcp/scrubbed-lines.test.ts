/**
 * Diagnostics toolgate writes itself (the stdio server's stderr line, the proxy's log) and text an
 * upstream sends (its stderr, its error messages, an isError result) are scrubbed of secrets before
 * anyone sees them, and bounded; a secret straddling a cut is scrubbed whole first.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { describeError } from "../../src/mcp/stdio.js";
import { errorText, scrubLine, withoutUrlSecrets } from "../../src/mcp/proxy/error-text.js";
import { upstreamToolError } from "../../src/mcp/proxy/upstream-result.js";
import { createLoopPolicy } from "../../src/loop/index.js";

const PLANTED = /PLANTED/;

describe("scrubbed diagnostics", () => {
  it("the stdio server's line for a thrown message: URL credentials and secret shapes out", () => {
    const line = describeError(new Error("pool error: connect postgres://svc:PLANTEDservepw@db:5432/app failed; DB_PASSWORD=PLANTEDenvpw sk-live-PLANTED0123456789abcdef"));
    expect(line).not.toMatch(PLANTED);
    expect(line).toContain("postgres://db:5432/app");
  });

  it("proxy log lines and upstream error text", () => {
    expect(scrubLine("upstream stderr: api_key=PLANTEDstderrkey123 Bearer PLANTEDbearer0123 https://u:PLANTEDpw@h/p?token=PLANTEDq")).not.toMatch(PLANTED);
    expect(errorText(new Error("init failed: password=PLANTEDinitpw"))).not.toMatch(PLANTED);
  });

  it("URL scrubbing stays linear on text an upstream chooses ('a.' × 80k: 18 s before)", () => {
    const t0 = performance.now();
    withoutUrlSecrets("a.".repeat(80_000));
    expect(performance.now() - t0).toBeLessThan(2_000);
  });

  it("an upstream's isError text: a secret across the 200-character cut is scrubbed whole, not cut into a head that passes", async () => {
    for (const secret of ["sk-live-PLANTEDstraddle0123456789abcdef", "Bearer PLANTEDbr0123456789"]) {
      const text = "x".repeat(185) + " " + secret;
      const tool = defineTool({
        name: "up",
        version: "1",
        description: "d",
        input: z.object({}),
        output: z.object({}),
        effect: "read",
        execute: () => {
          throw upstreamToolError({ isError: true, content: [{ type: "text", text }] }, "read");
        },
      });
      const r = await createGate({ tools: [tool] }).call("up", {});
      expect(r.ok).toBe(false);
      expect(JSON.stringify(r), secret).not.toMatch(PLANTED);
    }
  });

  it("the loop's evidence and decisions show an invented tool name as the records do, redacted", async () => {
    const gate = createGate({ tools: [defineTool({ name: "real", version: "1", description: "d", input: z.object({}), output: z.object({}), effect: "read", execute: () => ({}) })] });
    const s = createLoopPolicy().start();
    const name = "sk-live-PLANTEDtoolname0123456789abcdef";
    const step = await s.run({ tool: name, args: {}, callId: "c1" }, (c) => gate.call(c.tool, c.args, { callId: c.callId }));
    const again = await s.run({ tool: name, args: {}, callId: "c2" }, (c) => gate.call(c.tool, c.args, { callId: c.callId }));
    expect(JSON.stringify([step.decision, again.decision, s.evidence])).not.toMatch(PLANTED);
  });
});
