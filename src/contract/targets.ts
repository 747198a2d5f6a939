/**
 * The contract targets: one tool definition, four advertised schemas. `mcp` (JSON Schema 2020-12,
 * what `gate.list()` serves), `draft-07` (older clients), `openai` (strict function calling) and
 * `anthropic` (`input_schema`). Each comes with the mapping the gate applies to a call made against
 * it before validation (identity except for `openai`).
 * @module
 */
import type { JsonSchema } from "../standard.js";
import { advertisedInput } from "../json-schema.js";
import type { AnyTool } from "../tool.js";
import { fromOpenAIStrictArgs, toOpenAIStrict } from "./openai-strict.js";
import { toAnthropicInputSchema } from "./anthropic.js";
import { typesOf } from "./_schema.js";

/** A contract target. */
export type ContractTarget = "mcp" | "draft-07" | "openai" | "anthropic";

/**
 * Every target, in report order.
 * @example for (const target of CONTRACT_TARGETS) console.log(target); // "mcp", "draft-07", "openai", "anthropic"
 */
export const CONTRACT_TARGETS: readonly ContractTarget[] = Object.freeze(["mcp", "draft-07", "openai", "anthropic"]);

/** JSON Schema dialect a target's schema is written in (picks the Ajv build). */
export type Dialect = "draft-2020-12" | "draft-07";

/** One tool's input contract as one target sees it. */
export interface TargetContract {
  readonly target: ContractTarget;
  readonly dialect: Dialect;
  /** The schema this target is given. */
  readonly schema: JsonSchema;
  /** The gate's advertised input schema (2020-12) the target schema was derived from. */
  readonly base: JsonSchema;
  /** What the target cannot express exactly (removed keywords, loosened shapes). */
  readonly problems: readonly string[];
  /** Changes that alter no verdict. */
  readonly notes: readonly string[];
  /** Optional fields made nullable (openai). */
  readonly nullable: readonly string[];
  /** Fields optional in the base but always sent in this target's shape (openai: every optional field). */
  readonly alwaysSent: readonly string[];
  /** The call as received from this target, mapped to the original shape before validation. */
  mapArgs(args: unknown): unknown;
}

const identity = (a: unknown): unknown => a;

/**
 * True for a known target name.
 * @example const targets = flag.split(",").filter(isContractTarget);
 */
export function isContractTarget(v: unknown): v is ContractTarget {
  return typeof v === "string" && (CONTRACT_TARGETS as readonly string[]).includes(v);
}

/**
 * Build a tool's input contract for one target, or the reason its input cannot be represented.
 * Pass `advertised` to check a schema produced elsewhere (another converter, a framework) instead
 * of the gate's own; `mapBack: false` leaves strict-mode calls unmapped (what a framework that
 * forwards them as they come does).
 * @example
 * const c = targetContract(getOrder, "openai");
 * if (c.ok) console.log(c.contract.schema, c.contract.problems);
 */
export function targetContract(
  tool: AnyTool,
  target: ContractTarget,
  advertised?: JsonSchema,
  mapBack = true,
): { ok: true; contract: TargetContract } | { ok: false; reason: string } {
  if (!isContractTarget(target)) return { ok: false, reason: `unknown target ${JSON.stringify(target)}; the targets are ${CONTRACT_TARGETS.join(", ")}` };
  const dialect: Dialect = target === "draft-07" ? "draft-07" : "draft-2020-12";
  let base: JsonSchema;
  if (advertised !== undefined) base = advertised;
  else {
    const r = advertisedInput(tool, dialect);
    if (!r.ok) return r;
    base = r.schema;
  }
  const rootProblems = typesOf(base).includes("object") ? [] : ["(root): the input schema is not `type: \"object\"`; MCP and provider tool formats need an object"];
  switch (target) {
    case "mcp":
    case "draft-07":
      return { ok: true, contract: { target, dialect, schema: base, base, problems: rootProblems, notes: [], nullable: [], alwaysSent: [], mapArgs: identity } };
    case "openai": {
      const s = toOpenAIStrict(base);
      return {
        ok: true,
        contract: {
          target,
          dialect,
          schema: s.schema,
          base,
          problems: s.problems,
          notes: s.notes,
          nullable: s.nullable,
          alwaysSent: s.optional,
          mapArgs: mapBack ? (a) => fromOpenAIStrictArgs(a, base) : identity,
        },
      };
    }
    case "anthropic": {
      const s = toAnthropicInputSchema(base);
      return { ok: true, contract: { target, dialect, schema: s.schema, base, problems: s.problems, notes: [], nullable: [], alwaysSent: [], mapArgs: identity } };
    }
  }
}
