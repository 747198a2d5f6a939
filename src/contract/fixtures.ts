/**
 * Payload fixtures: calls recorded against an old contract must still parse, or fail with the
 * code they are expected to fail with. Each `*.json` file in the directory holds one fixture or
 * an array of them: `{ "tool": "get_order", "args": {…} | "<JSON text>", "expect": "ok" | "INVALID_INPUT" | …,
 * "target"?: "openai", "name"?: "…" }`. `ok` means the input passes validation (execute is reached).
 * @module
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { TOOL_ERROR_CODES, type ToolErrorCode } from "../result.js";
import type { AnyTool } from "../tool.js";
import { isRecord } from "./_schema.js";
import { isContractTarget, targetContract, type ContractTarget } from "./targets.js";
import { runtimeProbe, type RuntimeProbe } from "./verdict.js";

/** One recorded call and its expected outcome. */
export interface Fixture {
  readonly tool: string;
  /** The arguments as a model sent them: JSON text, or a JSON value. */
  readonly args: unknown;
  /** `ok` (validation passes) or the expected error code. */
  readonly expect: "ok" | ToolErrorCode;
  /** The call was made against this target's schema (`openai`: strict-mode nulls are mapped back first). */
  readonly target?: ContractTarget;
  readonly name?: string;
}

/** A fixture with where it came from. */
export interface LocatedFixture {
  readonly file: string;
  readonly index: number;
  readonly fixture: Fixture;
}

/** One fixture's outcome. */
export interface FixtureResult {
  readonly file: string;
  readonly index: number;
  readonly name: string | null;
  readonly tool: string;
  readonly expect: string;
  /** `ok`, an error code, or `invalid_fixture`. */
  readonly got: string;
  readonly ok: boolean;
  readonly detail: string;
}

/** The `fixtures` part of the check report. */
export interface FixturesReport {
  readonly dir: string;
  readonly ok: boolean;
  readonly results: readonly FixtureResult[];
}

function parseFixture(v: unknown): Fixture | string {
  if (!isRecord(v)) return "a fixture must be an object";
  if (typeof v.tool !== "string" || v.tool.length === 0) return '"tool" must be a tool name';
  if (!("args" in v)) return '"args" is required (JSON text or a JSON value)';
  if (v.expect !== "ok" && !(TOOL_ERROR_CODES as readonly unknown[]).includes(v.expect)) return `"expect" must be "ok" or one of ${TOOL_ERROR_CODES.join(", ")}`;
  if (v.target !== undefined && !isContractTarget(v.target)) return '"target" must be mcp, draft-07, openai or anthropic';
  if (v.name !== undefined && typeof v.name !== "string") return '"name" must be a string';
  return v as unknown as Fixture;
}

/**
 * Read every `*.json` file of a directory (sorted by name). A file that is not valid JSON, or an
 * entry that is not a fixture, becomes a problem (reported as a failing result), never a throw.
 * Throws only when the directory cannot be read.
 * @example
 * const { fixtures, problems } = await loadFixtures("test/fixtures/calls");
 */
export async function loadFixtures(dir: string): Promise<{ fixtures: LocatedFixture[]; problems: FixtureResult[] }> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".json")).sort();
  const fixtures: LocatedFixture[] = [];
  const problems: FixtureResult[] = [];
  const bad = (file: string, index: number, detail: string) =>
    problems.push({ file, index, name: null, tool: "", expect: "", got: "invalid_fixture", ok: false, detail });
  for (const file of files) {
    let value: unknown;
    try {
      value = JSON.parse(await readFile(join(dir, file), "utf8"));
    } catch (e) {
      bad(file, 0, `not valid JSON: ${e instanceof Error ? e.message : String(e)}`);
      continue;
    }
    const list = Array.isArray(value) ? value : [value];
    list.forEach((entry, index) => {
      const f = parseFixture(entry);
      if (typeof f === "string") bad(file, index, f);
      else fixtures.push({ file, index, fixture: f });
    });
  }
  return { fixtures, problems };
}

/**
 * Run fixtures through the runtime path (target mapping, then a gate whose execute is a stub).
 * @example
 * const report = await checkFixtures(tools, fixtures, "test/fixtures/calls");
 * expect(report.ok).toBe(true);
 */
export async function checkFixtures(tools: readonly AnyTool[], fixtures: readonly LocatedFixture[], dir = "", problems: readonly FixtureResult[] = []): Promise<FixturesReport> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const probes = new Map<string, RuntimeProbe>();
  const results: FixtureResult[] = [...problems];
  for (const { file, index, fixture: f } of fixtures) {
    const base = { file, index, name: f.name ?? null, tool: f.tool, expect: f.expect };
    const tool = byName.get(f.tool);
    let got: string;
    let detail: string;
    if (tool === undefined) {
      got = "UNKNOWN_TOOL";
      detail = `no tool named ${JSON.stringify(f.tool)}`;
    } else {
      let probe = probes.get(tool.name);
      if (probe === undefined) probes.set(tool.name, (probe = runtimeProbe(tool)));
      let args = typeof f.args === "string" ? f.args : JSON.stringify(f.args);
      if (f.target !== undefined) {
        const c = targetContract(tool, f.target);
        if (c.ok) args = c.contract.mapArgs(args) as string;
      }
      const v = await probe.check(args);
      got = v.accepted ? "ok" : (v.code ?? "FAILED");
      detail = v.accepted ? "validation passes" : v.reasons.join("; ");
    }
    const ok = got === f.expect;
    results.push({ ...base, got, ok, detail: ok ? detail : `expected ${f.expect}, got ${got}: ${detail}` });
  }
  return { dir, ok: results.every((r) => r.ok), results };
}
