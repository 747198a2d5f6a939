/**
 * `toolgate check <module>`: contract fidelity. For every tool and target, what the target cannot
 * express and where the advertised schema and the runtime disagree; optionally a contract snapshot,
 * a breaking-change comparison against an older one, and payload fixtures.
 * Exit codes: 0 clean, 1 drift / unrepresentable / unversioned breaking change / fixture failure, 2 usage.
 * @module
 */
import { readFile, writeFile } from "node:fs/promises";
import { CliError, parseFlags, type Command } from "./command.js";
import { loadTools } from "./load.js";
import { checkContracts, DRIFT_DEFAULTS } from "../contract/drift.js";
import { CONTRACT_TARGETS, isContractTarget, type ContractTarget } from "../contract/targets.js";
import { compareSnapshots } from "../contract/breaking.js";
import { parseSnapshot, snapshotOf } from "../contract/snapshot.js";
import { checkFixtures, loadFixtures } from "../contract/fixtures.js";
import { formatReport } from "../contract/format.js";
import type { CheckReport } from "../contract/report.js";

const usage = `Usage: toolgate check <module> [options]

Check that what <module>'s tools advertise (MCP 2020-12, draft-07, OpenAI strict, Anthropic) is
what the gate enforces: generated payloads and their mutations go through Ajv on the advertised
schema and through the real gate; every disagreement is shrunk and explained.

Options:
  --target <t>        mcp, draft-07, openai, anthropic (repeatable or comma-separated; default: all)
  --runs <n>          generated payloads per tool and target (default ${DRIFT_DEFAULTS.runs})
  --seed <s>          fast-check seed, an integer (default ${DRIFT_DEFAULTS.seed}); same seed, same report
  --json              print the report as JSON (format "toolgate-check", version 1) on stdout
  --snapshot <file>   write the advertised contracts to <file>
  --against <file>    compare with an earlier snapshot: breaking changes need a version bump
  --fixtures <dir>    run the payload fixtures (*.json) of <dir>: each must parse or fail as expected
  -h, --help          this help

Exit codes: 0 clean, 1 drift, unrepresentable schema, unversioned breaking change or fixture
failure, 2 usage error.`;

function intFlag(name: string, v: string | undefined, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) throw new CliError("E_USAGE", `--${name} expects an integer, got ${JSON.stringify(v)}`);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new CliError("E_USAGE", `--${name} must be from ${min} to ${max}, got ${v}`);
  return n;
}

function targetsFlag(values: readonly string[] | undefined): ContractTarget[] | undefined {
  if (values === undefined) return undefined;
  const out: ContractTarget[] = [];
  for (const t of values.flatMap((v) => v.split(",")).map((v) => v.trim())) {
    if (!isContractTarget(t)) throw new CliError("E_USAGE", `--target must be one of ${CONTRACT_TARGETS.join(", ")}, got ${JSON.stringify(t)}`);
    if (!out.includes(t)) out.push(t);
  }
  return out;
}

async function readSnapshot(file: string) {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    throw new CliError("E_SNAPSHOT", `cannot read --against ${file}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CliError("E_SNAPSHOT", `--against ${file} is not valid JSON`);
  }
  const p = parseSnapshot(value);
  if (!p.ok) throw new CliError("E_SNAPSHOT", `--against ${file}: ${p.reason}`);
  return p.snapshot;
}

async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseFlags({
    args: [...argv],
    allowPositionals: true,
    options: {
      target: { type: "string", multiple: true },
      runs: { type: "string" },
      seed: { type: "string" },
      json: { type: "boolean" },
      snapshot: { type: "string" },
      against: { type: "string" },
      fixtures: { type: "string" },
    },
  });
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new CliError("E_USAGE", positionals.length === 0 ? "expected a module path" : "expected exactly one module path");
  const targets = targetsFlag(values.target);
  const runs = intFlag("runs", values.runs, 1, 1_000_000);
  const seed = intFlag("seed", values.seed, -(2 ** 31), 2 ** 31 - 1);
  const against = values.against === undefined ? undefined : await readSnapshot(values.against);
  const fixtureSet = values.fixtures === undefined ? undefined : await loadFixtures(values.fixtures).catch(() => {
    throw new CliError("E_FIXTURES", `cannot read the --fixtures directory ${values.fixtures}`);
  });
  // A directory without a fixture checks nothing: a mistyped path must not pass as "all as expected".
  if (fixtureSet !== undefined && fixtureSet.fixtures.length === 0 && fixtureSet.problems.length === 0) {
    throw new CliError("E_FIXTURES", `the --fixtures directory ${values.fixtures} holds no fixture (*.json)`);
  }

  // Every tool, also one whose input cannot be represented: the check reports it per target (exit 1).
  const { tools, listings } = await loadTools(positionals[0] as string);
  const json = values.json === true;
  const progress = !json || process.stderr.isTTY === true;
  const report: CheckReport = await checkContracts(tools, {
    ...(targets !== undefined ? { targets } : {}),
    ...(runs !== undefined ? { runs } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(progress ? { onProgress: (e: { tool: string; target: string; index: number; total: number }) => void process.stderr.write(`checking ${e.tool} × ${e.target} (${e.index + 1}/${e.total})\n`) } : {}),
  });

  // A tool no gate can serve has no advertised contract to snapshot, and no gate to run fixtures in.
  const served = tools.filter((t) => listings.some((l) => l.name === t.name));
  const snapshot = snapshotOf(listings);
  const breaking = against === undefined ? undefined : compareSnapshots(against, snapshot);
  const fixtures = fixtureSet === undefined ? undefined : await checkFixtures(served, fixtureSet.fixtures, values.fixtures, fixtureSet.problems);
  const full: CheckReport = {
    ...report,
    ok: report.ok && (breaking?.ok ?? true) && (fixtures?.ok ?? true),
    ...(breaking !== undefined ? { breaking } : {}),
    ...(fixtures !== undefined ? { fixtures } : {}),
  };
  if (values.snapshot !== undefined) {
    try {
      await writeFile(values.snapshot, JSON.stringify(snapshot, null, 2) + "\n");
    } catch {
      throw new CliError("E_SNAPSHOT", `cannot write --snapshot ${values.snapshot}`);
    }
    if (!json) process.stderr.write(`wrote ${Object.keys(snapshot.tools).length} contract(s) to ${values.snapshot}\n`);
  }
  process.stdout.write(json ? JSON.stringify(full, null, 2) + "\n" : formatReport(full));
  return full.ok ? 0 : 1;
}

const command: Command = { summary: "Check that advertised contracts match what the gate enforces", usage, run };
export default command;
