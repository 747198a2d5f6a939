/**
 * The shape `toolgate check --json` prints and `checkContracts` returns. Stable: fields are only
 * added, never renamed or removed, within one `version`. Documented in docs/contract.md.
 * @module
 */
import type { ContractTarget } from "./targets.js";
import type { MutationKind } from "./mutate.js";
import type { BreakingReport } from "./breaking.js";
import type { FixturesReport } from "./fixtures.js";

/** The advertised and the runtime verdicts differ for one payload. */
export interface DriftFinding {
  readonly kind: "drift";
  /** Field path where the verdicts differ (`lines.0.sku`; `""` for the root). */
  readonly path: string;
  /** Which side accepts the counterexample: `advertised` (the runtime refuses it) or `runtime`. */
  readonly accepted: "advertised" | "runtime";
  /** How the payload was made: a mutation of a valid value, or `none` (a value derived from the schema). */
  readonly mutation: { readonly kind: MutationKind | "none"; readonly label: string };
  /** The smallest payload found (shrunk by fast-check), in the target's shape, as JSON. */
  readonly counterexample: unknown;
  readonly advertised: { readonly accepted: boolean; readonly reasons: readonly string[] };
  readonly runtime: { readonly accepted: boolean; readonly code: string | null; readonly reasons: readonly string[] };
  /** One line a developer understands: what differs and what to change. */
  readonly explanation: string;
}

/** Something the target's JSON Schema cannot express (reported, never emitted silently as `{}`). */
export interface UnrepresentableFinding {
  readonly kind: "unrepresentable";
  readonly side: "input" | "output";
  /** Field path (`""` for the root, `*` for array items). */
  readonly path: string;
  readonly reason: string;
}

/** One finding. */
export type Finding = DriftFinding | UnrepresentableFinding;

/** One tool under one target. */
export interface TargetReport {
  readonly target: ContractTarget;
  /** No findings. */
  readonly ok: boolean;
  /** Payloads compared (including the ones fast-check tried while shrinking). */
  readonly payloads: number;
  readonly findings: readonly Finding[];
  /** Changes that alter no verdict (e.g. a discriminated `oneOf` written as `anyOf`). */
  readonly notes: readonly string[];
  /** openai: optional fields made nullable, where a `null` is mapped back to "absent". */
  readonly nullable: readonly string[];
}

/** One tool, every target checked. */
export interface ToolReport {
  readonly name: string;
  readonly version: string;
  readonly ok: boolean;
  readonly targets: readonly TargetReport[];
}

/** The whole report. */
export interface CheckReport {
  readonly format: "toolgate-check";
  readonly version: 1;
  /** No drift, nothing unrepresentable, no unversioned breaking change, every fixture as expected. */
  readonly ok: boolean;
  readonly seed: number;
  /** Generated payloads per tool and target (before shrinking). */
  readonly runs: number;
  readonly tools: readonly ToolReport[];
  /** Present with `--against`. */
  readonly breaking?: BreakingReport;
  /** Present with `--fixtures`. */
  readonly fixtures?: FixturesReport;
}
