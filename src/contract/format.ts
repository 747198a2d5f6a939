/**
 * The readable report of `toolgate check`: one block per tool, one line per target, each finding
 * with its path, counterexample, both verdicts and the explanation.
 * @module
 */
import type { CheckReport, Finding, TargetReport } from "./report.js";

const pad = (s: string, n: number): string => (s.length >= n ? s : s + " ".repeat(n - s.length));
const at = (p: string): string => (p === "" ? "(root)" : p);

function short(v: unknown, max = 160): string {
  const s = JSON.stringify(v) ?? "undefined";
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

function finding(f: Finding): string[] {
  if (f.kind === "unrepresentable") return [`    ✗ unrepresentable (${f.side}) at ${at(f.path)}: ${f.reason}`];
  return [
    `    ✗ drift at ${at(f.path)}: ${f.explanation}`,
    `        counterexample: ${short(f.counterexample)}   (${f.mutation.label})`,
    `        advertised: ${f.advertised.accepted ? "accepts" : `refuses (${f.advertised.reasons[0] ?? ""})`}`,
    `        runtime:    ${f.runtime.accepted ? "accepts (execute reached)" : `refuses (${f.runtime.code ?? ""}: ${f.runtime.reasons[0] ?? ""})`}`,
  ];
}

function target(t: TargetReport): string[] {
  const head = `  ${pad(t.target, 10)} ${t.ok ? "ok" : `${t.findings.length} finding${t.findings.length === 1 ? "" : "s"}`}  (${t.payloads} payloads)`;
  const lines = [t.nullable.length > 0 ? `${head}  nullable → absent: ${t.nullable.join(", ")}` : head];
  for (const f of t.findings) lines.push(...finding(f));
  return lines;
}

/**
 * Format a check report for a terminal.
 * @example
 * process.stdout.write(formatReport(await checkContracts(tools)));
 */
export function formatReport(r: CheckReport): string {
  const lines: string[] = [];
  for (const tool of r.tools) {
    lines.push(`${tool.name} ${tool.version}`);
    for (const t of tool.targets) lines.push(...target(t));
  }
  if (r.breaking !== undefined) {
    lines.push("", "contract changes:");
    for (const t of r.breaking.tools) {
      const ver = t.oldVersion === t.newVersion ? `version ${t.newVersion ?? "?"} unchanged` : `version ${t.oldVersion ?? "none"} → ${t.newVersion ?? "removed"}`;
      const state = t.ok ? (t.breaking ? "breaking, version bumped" : t.changes.length === 0 ? "unchanged" : "compatible") : t.breaking && t.newVersion !== null ? "BREAKING without a version bump" : "BREAKING";
      lines.push(`  ${t.name}: ${state} (${ver})`);
      for (const c of t.changes) lines.push(`    ${c.breaking ? "✗" : "·"} ${c.side} ${c.detail}`);
    }
  }
  if (r.fixtures !== undefined) {
    const failed = r.fixtures.results.filter((x) => !x.ok);
    lines.push("", `fixtures in ${r.fixtures.dir}: ${r.fixtures.results.length - failed.length} as expected, ${failed.length} not`);
    for (const x of failed) lines.push(`    ✗ ${x.file}#${x.index}${x.name === null ? "" : ` (${x.name})`} ${x.tool}: ${x.detail}`);
  }
  const drift = r.tools.flatMap((t) => t.targets.flatMap((x) => x.findings)).length;
  lines.push("", r.ok ? `clean: ${r.tools.length} tool(s), seed ${r.seed}, ${r.runs} runs per target` : `NOT clean: ${drift} finding(s)${r.breaking !== undefined && !r.breaking.ok ? ", breaking changes" : ""}${r.fixtures !== undefined && !r.fixtures.ok ? ", fixture failures" : ""} (seed ${r.seed})`);
  return lines.join("\n") + "\n";
}
