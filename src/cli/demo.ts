/**
 * `toolgate demo [--json] [--keep]`: the seed's story end to end, with no network and no key.
 * The orders example over a SQLite file, served over MCP stdio by `toolgate serve` in a child
 * process, driven by a scripted agent through the official MCP client and the loop policy.
 * Exit code 0 only when every scene behaved as described.
 * @module
 */
import { parseArgs } from "node:util";
import { CliError, type Command } from "./command.js";
import type { DemoEvent, DemoReport, SceneReport } from "./demo-run.js";
import { isToolgateConfigError } from "../errors.js";
import { _sqliteDriver } from "../ledger/_sqlite-driver.js";

const usage = `Usage: toolgate demo [--json] [--keep]

Run the orders story: an agent sends a bad argument, repairs it, resends a failing call, meets a
service that breaks its output contract, a dropped connection, and a refund whose response is lost
after the commit. Everything runs locally: SQLite files in the OS temp dir, an MCP server over stdio.

Options:
  --json       print the transcript and the summary as JSON
  --keep       keep the SQLite files and the evidence file (their paths are printed)
  -h, --help   this help

Exit codes: 0 when every scene behaved as described, 1 when one did not, 2 for a usage error or
when better-sqlite3 (an optional peer dependency: npm install better-sqlite3) cannot be loaded.`;

function clip(text: string, max = 110): string {
  return text.length <= max ? text : text.slice(0, max - 1) + "…";
}

function eventLines(e: DemoEvent): string[] {
  switch (e.kind) {
    case "note":
      return [`   ⚡ ${e.text}`];
    case "call":
      return [`   → ${e.tool} ${clip(JSON.stringify(e.args) ?? "")}${e.idempotencyKey !== undefined ? `   [idempotency key ${e.idempotencyKey}]` : ""}`];
    case "step": {
      const { result, decision } = e.step;
      const out: string[] = [];
      if (result === undefined) out.push("   ✋ not sent: the loop refused it");
      else if (result.ok) {
        const how = result.meta.replayed === true ? "replayed from the ledger, not executed" : `attempts ${result.meta.attempts}`;
        out.push(`   ← ok (${how}): ${clip(JSON.stringify(result.data) ?? "")}`);
      } else {
        out.push(`   ← ${result.code} (attempts ${result.meta.attempts}, effect ${result.effect}): ${result.message}`);
        for (const i of result.issues ?? []) out.push(`       ${i.path === "" ? "(root)" : i.path} [${i.code}]: ${i.message}`);
      }
      const left = decision.action === "repair" ? ` · ${decision.repairsLeft} repair(s) left` : "";
      out.push(`   ⇒ loop: ${decision.action} (${decision.reason}): ${decision.message}${left}`);
      if ((decision.action === "stop" || decision.action === "escalate") && decision.evidence !== undefined) {
        out.push(`   ⎙ evidence: ${JSON.stringify(decision.evidence)}`);
      }
      return out;
    }
  }
}

function sceneHeader(index: number, s: Pick<SceneReport, "title" | "expected">): string[] {
  return ["", `${index}. ${s.title}`, `   expected: ${s.expected}`];
}

function summary(report: DemoReport): string[] {
  const idWidth = Math.max(...report.scenes.map((s) => s.id.length), 5);
  const lines = ["", "Summary", `  #  ${"scene".padEnd(idWidth)}  verdict  observed`];
  report.scenes.forEach((s, i) => lines.push(`  ${i + 1}  ${s.id.padEnd(idWidth)}  ${s.ok ? "pass   " : "FAIL   "}  ${s.observed}`));
  const rows = report.refundsInDatabase;
  lines.push("", `Refunds read back from the SQLite file (${rows.length}):`);
  for (const r of rows) lines.push(`  ${r.refundId}  order ${r.orderId}  ${r.amountCents} cents  ${r.status}  key ${r.idempotencyKey ?? "(none)"}`);
  lines.push("", `Ledger entries read back from the ledger file (${report.ledgerEntries.length}):`);
  for (const e of report.ledgerEntries) lines.push(`  ${e.tool}  key ${e.key ?? "(none)"}  ${e.state}  ${e.code ?? "-"}  effect ${e.effect}  attempts ${e.attempts}`);
  lines.push("", `Evidence records: ${report.evidence.length}${report.files.kept ? ` (in ${report.files.evidence})` : ""}`);
  lines.push(`Server call log: ${report.callLogLines} line(s), one per call the server answered, no payloads${report.files.kept ? ` (in ${report.files.callLog})` : ""}`);
  if (report.files.kept) lines.push(`Files kept in ${report.files.dir} (inspect the ledger: toolgate ledger list --db ${report.files.ledgerDb})`);
  lines.push("", report.ok ? "Every step behaved as described." : "Some steps did NOT behave as described (see FAIL above).");
  if (!report.ok && report.serverStderr.length > 0) lines.push("", "Server stderr:", report.serverStderr.trimEnd());
  return lines;
}

async function run(argv: readonly string[]): Promise<number> {
  let values: { json?: boolean; keep?: boolean };
  try {
    ({ values } = parseArgs({ args: [...argv], allowPositionals: false, options: { json: { type: "boolean" }, keep: { type: "boolean" } } }));
  } catch (e) {
    throw new CliError("E_USAGE", e instanceof Error ? e.message : String(e));
  }
  // The story runs on SQLite files. The driver is an optional peer: say so, with the install
  // command, before anything starts; the story's modules import it, so they load only after.
  try {
    _sqliteDriver();
  } catch (e) {
    if (!isToolgateConfigError(e)) throw e;
    process.stderr.write(`toolgate demo: ${e.message} (${e.code})\n`);
    return 2;
  }
  const { runDemoStory } = await import("./demo-run.js");
  const json = values.json === true;
  // A reader that goes away (`toolgate demo | head`) must not kill the run before it cleans up.
  let readerGone = false;
  const onStdoutError = (e: NodeJS.ErrnoException): void => {
    if (e.code !== "EPIPE") throw e;
    readerGone = true;
  };
  process.stdout.on("error", onStdoutError);
  const write = (lines: string[]): void => {
    if (!readerGone) process.stdout.write(lines.join("\n") + "\n");
  };
  if (!json) write(["toolgate demo: the orders tools over MCP stdio (toolgate serve), a SQLite service and ledger, a scripted agent and the loop policy"]);
  let index = 0;
  const report = await runDemoStory({
    keep: values.keep === true,
    ...(json
      ? {}
      : {
          onStart: (f: DemoReport["files"]) => write([`files: ${f.dir} (${f.kept ? "kept" : "removed at the end; --keep keeps them"})`]),
          onSceneStart: (s: Pick<SceneReport, "title" | "expected">) => write(sceneHeader(++index, s)),
          onEvent: (e: DemoEvent) => write(eventLines(e)),
          onScene: (s: SceneReport) => write([`   ${s.ok ? "✓" : "✗"} observed: ${s.observed}`]),
        }),
  });
  if (json) write([JSON.stringify(report, null, 2)]);
  else write(summary(report));
  return report.ok ? 0 : 1;
}

const demo: Command = { summary: "Run the orders story end to end (MCP stdio, SQLite, the loop policy)", usage, run };
export default demo;
