import { describe, it, expect } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

function demo(...args: string[]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", "src/cli/main.ts", "demo", ...args], { cwd: root, encoding: "utf8", timeout: 80_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Each run spawns the CLI, which spawns `toolgate serve` (both under tsx): allow for a loaded machine.
describe("toolgate demo (MCP stdio child process, SQLite service and ledger, scripted agent)", { timeout: 90_000 }, () => {
  it("--json: every scene behaves as described, exactly one refund is in the database, evidence is recorded", () => {
    const r = demo("--json", "--keep");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      scenes: Array<{ id: string; ok: boolean; observed: string }>;
      evidence: Array<{ code: string; reason: string; issuePaths: string[]; arguments?: string }>;
      refundsInDatabase: Array<{ orderId: string; idempotencyKey: string | null; status: string }>;
      ledgerEntries: Array<{ tool: string; key: string | null; state: string; code: string | null; effect: string; attempts: number }>;
      callLogLines: number;
      files: { dir: string; ordersDb: string; ledgerDb: string; evidence: string; callLog: string; kept: boolean };
    };
    try {
      expect(report.ok).toBe(true);
      expect(report.scenes.map((s) => [s.id, s.ok])).toEqual([
        ["repair", true],
        ["no-new-evidence", true],
        ["invalid-output", true],
        ["transient", true],
        ["lost-refund", true],
      ]);
      expect(report.scenes.map((s) => s.observed)).toEqual([
        "INVALID_INPUT(customerId) → repair → ok",
        "not sent, stop (no_new_evidence), 0 call(s) sent",
        "INVALID_OUTPUT(orders.0.status) → stop, evidence recorded, 1 call(s) sent",
        "ok, attempts 2",
        "ok (attempts 2), resend replayed, 1 refund row(s) for o_100, 1 ledger entry",
      ]);
      expect(report.refundsInDatabase).toEqual([{ refundId: "rf_1", orderId: "o_100", amountCents: 2500, status: "accepted", idempotencyKey: "refund-o_100-demo" }]);
      expect(report.ledgerEntries).toEqual([{ tool: "create_refund", key: "refund-o_100-demo", state: "settled", code: "OK", effect: "applied", attempts: 2 }]);
      expect(report.evidence.map((e) => [e.code, e.reason, e.issuePaths])).toEqual([
        ["INVALID_INPUT", "no_new_evidence", ["customerId"]],
        ["INVALID_OUTPUT", "invalid_output", ["orders.0.status"]],
      ]);
      expect(report.evidence.every((e) => e.arguments === undefined)).toBe(true);
      expect(report.files.kept).toBe(true);
      for (const f of [report.files.ordersDb, report.files.ledgerDb, report.files.evidence, report.files.callLog]) expect(existsSync(f)).toBe(true);
      expect(readFileSync(report.files.evidence, "utf8").trim().split("\n")).toHaveLength(2);
      // The server's call log: one line per call it executed (6: the refused repeat and the call after
      // INVALID_OUTPUT never reached it), and never a payload.
      expect(report.callLogLines).toBe(6);
      const log = readFileSync(report.files.callLog, "utf8");
      expect(log).not.toContain("damaged in transit");
      expect(log).not.toContain("customerId\":");
      // Each line carries its attempts, though the demo's server module exports a ready gate.
      const lines = log.trim().split("\n").map((l) => JSON.parse(l) as { "toolgate.code": string; attempts: Record<string, unknown>[] });
      expect(lines.map((l) => [l["toolgate.code"], l.attempts.map((a) => a["toolgate.attempt.outcome"])])).toEqual([
        ["INVALID_INPUT", []],
        ["OK", ["success"]],
        ["INVALID_OUTPUT", ["success"]],
        ["OK", ["transient", "success"]],
        ["OK", ["transient", "success"]],
        ["OK", []],
      ]);
    } finally {
      rmSync(report.files.dir, { recursive: true, force: true });
    }
  });

  it("prints a readable transcript and the summary table, and removes its files", () => {
    const r = demo();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("← INVALID_INPUT");
    expect(r.stdout).toContain("customerId [invalid_type]");
    expect(r.stdout).toContain("✋ not sent: the loop refused it");
    expect(r.stdout).toContain("← ok (replayed from the ledger, not executed)");
    const table = r.stdout.slice(r.stdout.indexOf("Summary"));
    expect(table.match(/ pass /g)).toHaveLength(5);
    expect(table).not.toContain("FAIL");
    expect(table).toContain("rf_1  order o_100  2500 cents  accepted  key refund-o_100-demo");
    expect(r.stdout.trimEnd().endsWith("Every step behaved as described.")).toBe(true);
    const dir = /^files: (\S+) \(removed at the end/m.exec(r.stdout)?.[1];
    expect(dir).toMatch(/toolgate-demo-/);
    expect(existsSync(dir!)).toBe(false);
  });

  it("refuses unknown flags with exit code 2", () => {
    const r = demo("--bogus");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("E_USAGE");
  });
});
