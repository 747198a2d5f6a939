/**
 * Shared by the zod and valibot corpus tests: build a tool around an input schema, run the drift
 * check, and reduce the report to `target kind path` strings that the expectations list.
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { z } from "zod";
import { defineTool, type AnyTool } from "../../src/index.js";
import { checkTool, type ToolReport } from "../../src/testing/index.js";

/** Output side is not under test here: anything goes (and it has a JSON Schema: `{}`). */
export const OUT: StandardSchemaV1 = z.unknown();

export function toolOf(name: string, input: StandardSchemaV1, extra: Partial<{ unknownKeys: "strip" | "reject"; output: StandardSchemaV1 }> = {}): AnyTool {
  return defineTool({ name, version: "1", description: `corpus: ${name}`, input, output: extra.output ?? OUT, effect: "read", execute: () => ({}), ...(extra.unknownKeys ? { unknownKeys: extra.unknownKeys } : {}) });
}

/** `mcp drift advertised a`: target, kind, which side accepts (drift only), path (`-` for the root). */
export function verdicts(r: ToolReport): Set<string> {
  const out = new Set<string>();
  for (const t of r.targets) {
    for (const f of t.findings) {
      const path = f.path === "" ? "-" : f.path;
      out.add(f.kind === "drift" ? `${t.target} drift ${f.accepted} ${path}` : `${t.target} unrepresentable ${f.side} ${path}`);
    }
  }
  return out;
}

/** Every target gets the same finding. */
export const all = (rest: string): string[] => ["mcp", "draft-07", "openai", "anthropic"].map((t) => `${t} ${rest}`);

export interface CorpusCase {
  readonly name: string;
  readonly tool: AnyTool;
  /** Findings that must be reported (empty: the schema must be clean). */
  readonly expect: readonly string[];
  /** Findings that may be reported too (e.g. found on one target's generator but not another's). */
  readonly allow?: readonly string[];
  readonly why: string;
}

export async function runCase(c: CorpusCase, seed = 1): Promise<{ got: Set<string>; report: ToolReport }> {
  const report = await checkTool(c.tool, { seed, runs: 200 });
  return { got: verdicts(report), report };
}
