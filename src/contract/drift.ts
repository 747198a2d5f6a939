/**
 * The drift checker: for each tool and target, payloads derived from the advertised schema and
 * mutations of them go through Ajv (the advertised verdict) and through the target mapping plus
 * a real gate (the runtime verdict). Every disagreement is shrunk by fast-check and reported
 * with its path, both verdicts and an explanation. Deterministic for a given seed.
 * @module
 */
import fc from "fast-check";
import type { JsonSchema } from "../standard.js";
import { toJsonSchema } from "../standard.js";
import { isTool, type AnyTool } from "../tool.js";
import { arbitraryFor } from "./arbitrary.js";
import { applyMutation, mutationsOf, type Mutation } from "./mutate.js";
import { CONTRACT_TARGETS, isContractTarget, targetContract, type ContractTarget, type TargetContract } from "./targets.js";
import { ToolgateConfigError } from "../errors.js";
import { compileAdvertised, runtimeProbe, runtimeVerdict, type RuntimeProbe, type Verdict } from "./verdict.js";
import { explain, normalizePath } from "./explain.js";
import { probeUnrepresentable } from "./probe.js";
import type { CheckReport, DriftFinding, Finding, TargetReport, ToolReport } from "./report.js";

/** Options of {@link checkTool} and {@link checkContracts}. */
export interface DriftOptions {
  /** Targets to check. Default: all four (`mcp`, `draft-07`, `openai`, `anthropic`). */
  readonly targets?: readonly ContractTarget[];
  /** Generated payloads per tool and target, before shrinking. Default 300. */
  readonly runs?: number;
  /** fast-check seed; the same seed gives the same report. Default 1. */
  readonly seed?: number;
  /** Stop after this many distinct disagreements per tool and target. Default 10. */
  readonly maxFindings?: number;
  /**
   * Check a schema produced elsewhere instead of the gate's own (another converter, a framework):
   * return it for a target, or `undefined` to use the gate's.
   */
  readonly advertised?: (tool: AnyTool, target: ContractTarget) => JsonSchema | undefined;
  /** openai: map strict-mode calls back with `fromOpenAIStrictArgs`, as the gate's adapters do. Default `true`. */
  readonly mapBack?: boolean;
  /** Called before each tool and target, for progress output. */
  readonly onProgress?: (event: { readonly tool: string; readonly target: ContractTarget; readonly index: number; readonly total: number }) => void;
}

/**
 * Defaults, documented in docs/contract.md.
 * @example const report = await checkContracts(tools, { runs: DRIFT_DEFAULTS.runs * 2 });
 */
export const DRIFT_DEFAULTS = Object.freeze({ runs: 300, seed: 1, maxFindings: 10 });

interface Case {
  readonly payload: unknown;
  readonly mutation: Mutation | null;
}

function problemFinding(p: string): Finding {
  const i = p.indexOf(": ");
  const path = i === -1 ? "" : p.slice(0, i);
  return { kind: "unrepresentable", side: "input", path: path === "(root)" ? "" : path, reason: i === -1 ? p : p.slice(i + 2) };
}

/** Output side: what `tools/list` advertises as `outputSchema` (mcp and draft-07 only). */
function outputFindings(tool: AnyTool, target: ContractTarget): Finding[] {
  if (target !== "mcp" && target !== "draft-07") return [];
  const dialect = target === "draft-07" ? "draft-07" : "draft-2020-12";
  const out = toJsonSchema(tool.output, "output", dialect);
  if (!out.ok) return [{ kind: "unrepresentable", side: "output", path: "", reason: `output schema cannot be advertised: ${out.reason}` }];
  return probeUnrepresentable(tool.output, "output", dialect).map((u) => ({ kind: "unrepresentable", side: "output", path: u.path, reason: u.reason }));
}

function caseArbitrary(c: TargetContract, stripsUnknown: boolean): fc.Arbitrary<Case> {
  const valid = arbitraryFor(c.schema);
  const mutated = fc.tuple(valid, fc.nat()).map(([p, n]): Case => {
    // Strict mode always sends every field (null means absent), in `$defs` too: "missing" is not a
    // call it can make. A tool that strips unknown keys ignores extra keys whatever strict mode advertises.
    const ms = mutationsOf(c.schema, p).filter((m) => !(c.target === "openai" && (m.kind === "missing" || (m.kind === "extra" && stripsUnknown))));
    const m = ms[n % Math.max(1, ms.length)];
    return m === undefined ? { payload: p, mutation: null } : { payload: applyMutation(p, m), mutation: m };
  });
  return fc.oneof({ weight: 1, arbitrary: valid.map((p): Case => ({ payload: p, mutation: null })) }, { weight: 3, arbitrary: mutated });
}

function keyOf(adv: Verdict, runPath: string): string {
  return adv.accepted ? `runtime-refuses|${normalizePath(runPath)}` : `advertised-refuses|${normalizePath(adv.path)}`;
}

async function driftFindings(
  c: TargetContract,
  probe: RuntimeProbe,
  check: (p: unknown) => Verdict,
  o: { runs: number; seed: number; maxFindings: number; stripsUnknown: boolean },
): Promise<{ findings: DriftFinding[]; errors: string[]; payloads: number }> {
  const errors: string[] = [];
  const known = new Set<string>();
  const findings: DriftFinding[] = [];
  let payloads = 0;
  const arbitrary = caseArbitrary(c, o.stripsUnknown);
  for (let round = 0; round < o.maxFindings; round++) {
    const property = fc.asyncProperty(arbitrary, async (k) => {
      payloads++;
      const adv = check(k.payload);
      const run = await runtimeVerdict(probe, c.mapArgs, k.payload);
      if (adv.accepted === run.accepted) return true;
      return known.has(keyOf(adv, run.path));
    });
    let r: Awaited<ReturnType<typeof fc.check<[Case]>>>;
    try {
      r = await fc.check(property, { seed: o.seed, numRuns: o.runs });
    } catch (e) {
      // Generation itself failed (a schema the generator cannot handle): say so, never report clean.
      errors.push(`the drift check could not generate payloads from this schema: ${(e instanceof Error ? e.message : String(e)).slice(0, 200)}`);
      break;
    }
    if (!r.failed) break;
    if (r.counterexample === null) {
      errors.push("the drift check stopped early (too many skipped or interrupted runs)");
      break;
    }
    const k = r.counterexample[0];
    const adv = check(k.payload);
    const run = await runtimeVerdict(probe, c.mapArgs, k.payload);
    const key = keyOf(adv, run.path);
    if (adv.accepted === run.accepted || known.has(key)) {
      // Not reproducible (a validator that is not a pure function, or the check itself threw): say so, never loop.
      const first = r.errorInstance instanceof Error ? (r.errorInstance.message.split("\n", 1)[0] ?? "") : "";
      const why = first.startsWith("Property failed by returning false") ? "" : first;
      errors.push(`a disagreement did not reproduce on a second run (is the schema a pure function of its input?)${why ? `: ${why.slice(0, 200)}` : ""}`);
      break;
    }
    known.add(key);
    findings.push({
      kind: "drift",
      path: adv.accepted ? run.path : adv.path,
      accepted: adv.accepted ? "advertised" : "runtime",
      mutation: k.mutation === null ? { kind: "none", label: "a value derived from the schema" } : { kind: k.mutation.kind, label: k.mutation.label },
      counterexample: k.payload === undefined ? null : k.payload,
      advertised: { accepted: adv.accepted, reasons: adv.reasons },
      runtime: { accepted: run.accepted, code: run.code ?? null, reasons: run.reasons },
      explanation: explain(c, k.payload, k.mutation, adv, run),
    });
  }
  return { findings, errors, payloads };
}

/** Check one tool under one target. */
async function checkTarget(tool: AnyTool, target: ContractTarget, probe: RuntimeProbe, o: Required<Pick<DriftOptions, "runs" | "seed" | "maxFindings">> & DriftOptions): Promise<TargetReport> {
  const empty = { target, payloads: 0, notes: [] as string[], nullable: [] as string[] };
  const built = targetContract(tool, target, o.advertised?.(tool, target), o.mapBack ?? true);
  if (!built.ok) {
    const findings: Finding[] = [{ kind: "unrepresentable", side: "input", path: "", reason: `input schema cannot be represented: ${built.reason}` }];
    return { ...empty, ok: false, findings };
  }
  const c = built.contract;
  const findings: Finding[] = [
    ...c.problems.map(problemFinding),
    ...probeUnrepresentable(tool.input, "input", c.dialect).map((u): Finding => ({ kind: "unrepresentable", side: "input", path: u.path, reason: u.reason })),
    ...outputFindings(tool, target),
  ];
  const compiled = compileAdvertised(c.schema, c.dialect);
  if (!compiled.ok) {
    findings.push({ kind: "unrepresentable", side: "input", path: "", reason: `Ajv cannot compile the advertised schema: ${compiled.reason}` });
    return { ...empty, ok: false, findings, notes: c.notes, nullable: c.nullable };
  }
  const drift = await driftFindings(c, probe, compiled.check, { ...o, stripsUnknown: tool.unknownKeys === "strip" });
  findings.push(...drift.findings, ...drift.errors.map((reason): Finding => ({ kind: "unrepresentable", side: "input", path: "", reason })));
  return { target, ok: findings.length === 0, payloads: drift.payloads, findings, notes: c.notes, nullable: c.nullable };
}

/** A tool no gate can serve (its input cannot be represented): what each target would have lacked. */
function unservable(tool: AnyTool, target: ContractTarget, o: DriftOptions): TargetReport {
  const built = targetContract(tool, target, o.advertised?.(tool, target));
  const reason = built.ok ? "the gate refuses this tool (createGate failed)" : `input schema cannot be represented: ${built.reason}`;
  const findings: Finding[] = [{ kind: "unrepresentable", side: "input", path: "", reason }, ...outputFindings(tool, target)];
  return { target, ok: false, payloads: 0, findings, notes: [], nullable: [] };
}

function resolved(options: DriftOptions, who = "checkTool"): Required<Pick<DriftOptions, "runs" | "seed" | "maxFindings">> & DriftOptions {
  if (typeof options !== "object" || options === null) throw new ToolgateConfigError("E_CHECK_OPTIONS", `${who}: options must be an object`);
  const runs = options.runs ?? DRIFT_DEFAULTS.runs;
  const seed = options.seed ?? DRIFT_DEFAULTS.seed;
  const maxFindings = options.maxFindings ?? DRIFT_DEFAULTS.maxFindings;
  const bad = (m: string): never => {
    throw new ToolgateConfigError("E_CHECK_OPTIONS", `${who}: ${m}`);
  };
  if (options.advertised !== undefined && typeof options.advertised !== "function") bad("advertised must be a function");
  _checkRunsAndSeed(runs, seed, bad);
  if (!Number.isInteger(maxFindings) || maxFindings < 1 || maxFindings > 1000) bad("maxFindings must be an integer from 1 to 1,000");
  if (options.targets !== undefined && (!Array.isArray(options.targets) || !options.targets.every(isContractTarget))) {
    bad(`targets must be a list of ${CONTRACT_TARGETS.join(", ")}`);
  }
  return { ...options, runs, seed, maxFindings };
}

/**
 * Check one tool: for each target, what it cannot express and where the advertised schema and
 * the runtime disagree. Never throws for a tool; throws {@link ToolgateConfigError} for bad options.
 * @example
 * const report = await checkTool(getOrder, { targets: ["mcp", "openai"], seed: 7 });
 * for (const t of report.targets) for (const f of t.findings) console.log(t.target, f);
 */
export async function checkTool(tool: AnyTool, options: DriftOptions = {}): Promise<ToolReport> {
  if (!isTool(tool)) throw new ToolgateConfigError("E_CHECK_OPTIONS", "checkTool: the first argument must be a defineTool(...) value");
  const o = resolved(options);
  const targets = o.targets ?? CONTRACT_TARGETS;
  let probe: RuntimeProbe | undefined;
  try {
    probe = runtimeProbe(tool);
  } catch {
    // createGate refuses a tool whose input cannot be advertised: report it per target, never throw.
    probe = undefined;
  }
  const out: TargetReport[] = [];
  for (const [index, target] of targets.entries()) {
    o.onProgress?.({ tool: tool.name, target, index, total: targets.length });
    out.push(probe === undefined ? unservable(tool, target, o) : await checkTarget(tool, target, probe, o));
  }
  return { name: tool.name, version: tool.version, ok: out.every((t) => t.ok), targets: out };
}

/**
 * Check every tool; the report `toolgate check --json` prints (without `breaking`/`fixtures`).
 * @example
 * const report = await checkContracts(gate.list().map((l) => gate.tool(l.name)!), { seed: 1 });
 * if (!report.ok) process.exitCode = 1;
 */
export async function checkContracts(tools: readonly AnyTool[], options: DriftOptions = {}): Promise<CheckReport> {
  if (!Array.isArray(tools) || !tools.every(isTool)) {
    throw new ToolgateConfigError("E_CHECK_OPTIONS", "checkContracts: the first argument must be an array of defineTool(...) values (for a gate: gate.list().map((l) => gate.tool(l.name)!))");
  }
  const o = resolved(options, "checkContracts");
  const reports: ToolReport[] = [];
  for (const tool of tools) reports.push(await checkTool(tool, o));
  return { format: "toolgate-check", version: 1, ok: reports.every((r) => r.ok), seed: o.seed, runs: o.runs, tools: reports };
}

/** @internal `runs` and `seed` as every property-based check takes them; `bad` throws with the caller's name. */
export function _checkRunsAndSeed(runs: unknown, seed: unknown, bad: (message: string) => never): void {
  if (!Number.isInteger(runs) || (runs as number) < 1 || (runs as number) > 1_000_000) bad("runs must be an integer from 1 to 1,000,000");
  if (!Number.isInteger(seed)) bad("seed must be an integer");
}

/** @internal The drift options' checks, for callers that take them ahead of a run (the contract suite). */
export function _checkDriftOptions(options: DriftOptions, who: string): void {
  resolved(options, who);
}
