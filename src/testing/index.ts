/**
 * `toolgate/testing`: the contract suite and the drift checker, for a user's own vitest or
 * node:test suite, plus the JSON Schema targets and breaking-change detection they build on.
 * @example
 * import { it } from "vitest";
 * import { contractSuite } from "toolgate/testing";
 * import { getOrder } from "../src/tools.js";
 * contractSuite(getOrder, { it });
 * @module
 */
export { contractSuite, contractProperties } from "../contract/suite.js";
export type { ContractProperty, ContractSuiteOptions, PropertyResult, TestFn } from "../contract/suite.js";
export { checkContracts, checkTool, DRIFT_DEFAULTS } from "../contract/drift.js";
export type { DriftOptions } from "../contract/drift.js";
export type { CheckReport, DriftFinding, Finding, TargetReport, ToolReport, UnrepresentableFinding } from "../contract/report.js";
export { formatReport } from "../contract/format.js";
export { CONTRACT_TARGETS, isContractTarget, targetContract } from "../contract/targets.js";
export type { ContractTarget, Dialect, TargetContract } from "../contract/targets.js";
export { toOpenAIStrict, fromOpenAIStrictArgs, OPENAI_STRICT_FORMATS, OPENAI_STRICT_UNSUPPORTED } from "../contract/openai-strict.js";
export type { OpenAIStrictSchema } from "../contract/openai-strict.js";
export { toAnthropicInputSchema } from "../contract/anthropic.js";
export type { AnthropicInputSchema } from "../contract/anthropic.js";
export { probeUnrepresentable } from "../contract/probe.js";
export type { Unrepresentable } from "../contract/probe.js";
export { snapshotOf, parseSnapshot } from "../contract/snapshot.js";
export type { ContractSnapshot, ToolContract } from "../contract/snapshot.js";
export { compareSnapshots, versionBumped } from "../contract/breaking.js";
export type { BreakingReport, ChangeKind, ContractChange, ToolChanges } from "../contract/breaking.js";
export { checkFixtures, loadFixtures } from "../contract/fixtures.js";
export type { Fixture, FixtureResult, FixturesReport, LocatedFixture } from "../contract/fixtures.js";
export type { MutationKind } from "../contract/mutate.js";
