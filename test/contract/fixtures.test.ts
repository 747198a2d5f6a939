import { describe, it, expect } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkFixtures, loadFixtures } from "../../src/testing/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";

const tools = makeOrderTools(createFakeOrders());

describe("payload fixtures", () => {
  it("each fixture parses or fails with the expected code; bad files are failing results, not crashes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolgate-fixtures-"));
    try {
      writeFileSync(join(dir, "a.json"), JSON.stringify([
        { name: "ok", tool: "get_order", args: { customerId: "c_1" }, expect: "ok" },
        { name: "refused", tool: "get_order", args: { customerId: "c_1", extra: 1 }, expect: "INVALID_INPUT" },
        { name: "wrong expectation", tool: "create_refund", args: { orderId: "o_1", amountCents: 0 }, expect: "ok" },
        { name: "unknown tool", tool: "nope", args: {}, expect: "UNKNOWN_TOOL" },
        { name: "strict null", tool: "create_refund", target: "openai", args: '{"orderId":"o_1","amountCents":5,"reason":null}', expect: "ok" },
        { name: "strict null, no target", tool: "create_refund", args: '{"orderId":"o_1","amountCents":5,"reason":null}', expect: "INVALID_INPUT" },
        { tool: "get_order", expect: "ok" },
      ]));
      writeFileSync(join(dir, "b.json"), "{ not json");
      writeFileSync(join(dir, "c.txt"), "ignored");
      const { fixtures, problems } = await loadFixtures(dir);
      expect(fixtures).toHaveLength(6);
      expect(problems.map((p) => `${p.file}#${p.index}: ${p.detail.split(":")[0]}`)).toEqual(['a.json#6: "args" is required (JSON text or a JSON value)', "b.json#0: not valid JSON"]);
      const report = await checkFixtures(tools, fixtures, dir, problems);
      expect(report.ok).toBe(false);
      expect(report.results.map((r) => `${r.name ?? r.file}: ${r.ok ? "ok" : r.got}`)).toEqual([
        "a.json: invalid_fixture",
        "b.json: invalid_fixture",
        "ok: ok",
        "refused: ok",
        "wrong expectation: INVALID_INPUT",
        "unknown tool: ok",
        "strict null: ok",
        "strict null, no target: ok",
      ]);
      expect(report.results.find((r) => r.name === "wrong expectation")?.detail).toMatch(/^expected ok, got INVALID_INPUT: amountCents: too_small/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a missing directory is an error for the caller (the CLI makes it a usage error)", async () => {
    await expect(loadFixtures(join(tmpdir(), "toolgate-no-such-dir-xyz"))).rejects.toThrow();
  });
});
