/** The usage blocks in the docs match what the CLI accepts. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const ledgerDoc = readFileSync(new URL("../../docs/ledger.md", import.meta.url), "utf8");
const usageLine = (sub: string): string => ledgerDoc.split("\n").find((l) => l.startsWith(`toolgate ledger ${sub} `)) ?? "";

describe("docs/ledger.md usage block", () => {
  it.each([
    ["list", ["--db", "--tool", "--limit N", "--json"]],
    ["unresolved", ["--db", "--tool", "--limit N", "--json"]],
    ["show", ["--db", "--json"]],
    ["prune", ["--db", "--older-than", "--json"]],
  ])("%s names the flags it takes", (sub, flags) => {
    const l = usageLine(sub);
    for (const f of flags) expect(l, `${sub}: ${f}`).toContain(f);
  });

  it("show names what it accepts: an entry ID, a unique prefix of it, or a call id", () => {
    expect(usageLine("show <id>")).toMatch(/prefix/);
  });
});
