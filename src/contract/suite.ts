/**
 * The contract suite: property checks of one tool through a real gate, for a user's own tests.
 * Invalid input never reaches `execute`; an output that breaks the output schema answers
 * INVALID_OUTPUT (and one that passes never does, and what it returns passes the advertised outputSchema); transient failures stay within the retry cap
 * (writes are not retried without a guarantee); and the drift check is clean.
 * @module
 */
import fc from "fast-check";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { createGate, type Gate } from "../gate.js";
import { defineTool, isTool, type AnyTool, type ArgsOf } from "../tool.js";
import { ToolgateConfigError, transient } from "../errors.js";
import { isPromiseLike, toJsonSchema } from "../standard.js";
import { advertisedInput } from "../json-schema.js";
import { notJsonData } from "../json-data.js";
import { arbitraryFor } from "./arbitrary.js";
import { applyMutation, mutationsOf } from "./mutate.js";
import { _checkDriftOptions, _checkRunsAndSeed, checkTool, type DriftOptions } from "./drift.js";
import { formatReport } from "./format.js";
import { compileAdvertised } from "./verdict.js";

/** Options of {@link contractSuite} and {@link contractProperties}; `A`: the tool's arguments ({@link ArgsOf}). */
export interface ContractSuiteOptions<A = unknown> {
  /** Generated cases per property (the retry property runs at most 30; the drift check takes `drift.runs` over it, and 300 when neither is given). Default 100. */
  readonly runs?: number;
  /** fast-check seed. Default 1. */
  readonly seed?: number;
  /** A valid input for the output and retry properties. Default: one generated from the input schema. */
  readonly input?: A;
  /** Options of the drift check, or `false` to leave it out. Default `{}` (every target). */
  readonly drift?: DriftOptions | false;
}

/** One property's outcome. */
export interface PropertyResult {
  readonly name: string;
  readonly ok: boolean;
  /** Empty when ok; otherwise the counterexample and what went wrong. */
  readonly message: string;
}

/** One property, ready to run. */
export interface ContractProperty {
  readonly name: string;
  run(): Promise<PropertyResult>;
}

type Validation = { ok: true; value: unknown } | { ok: false };

async function validates(schema: StandardSchemaV1, v: unknown): Promise<Validation> {
  try {
    let r: StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>> = schema["~standard"].validate(v);
    if (isPromiseLike(r)) r = await r;
    return r.issues === undefined ? { ok: true, value: r.value } : { ok: false };
  } catch {
    return { ok: false };
  }
}

function jsonArbitrary(schema: { ok: true; schema: Record<string, unknown> } | { ok: false }): fc.Arbitrary<unknown> {
  const anyJson = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
  if (!schema.ok) return anyJson;
  const valid = arbitraryFor(schema.schema);
  const mutated = fc.tuple(valid, fc.nat()).map(([p, n]) => {
    const ms = mutationsOf(schema.schema, p);
    const m = ms[n % Math.max(1, ms.length)];
    return m === undefined ? p : applyMutation(p, m);
  });
  return fc.oneof({ weight: 2, arbitrary: valid }, { weight: 3, arbitrary: mutated }, { weight: 1, arbitrary: anyJson });
}

function noInput(tool: AnyTool): string {
  const adv = advertisedInput(tool);
  return adv.ok ? "no valid input found among 200 generated ones: pass options.input" : `the input schema cannot be represented as JSON Schema (${adv.reason}); pass options.input`;
}

async function validInput(tool: AnyTool, o: ContractSuiteOptions): Promise<{ ok: true; value: unknown } | { ok: false }> {
  if ("input" in o) return { ok: true, value: o.input };
  const adv = advertisedInput(tool);
  if (!adv.ok) return { ok: false };
  for (const v of fc.sample(arbitraryFor(adv.schema), { seed: o.seed ?? 1, numRuns: 200 })) {
    if ((await validates(tool.input, v)).ok) return { ok: true, value: v };
  }
  return { ok: false };
}

/** createGate, or the reason it refuses the tool (e.g. an input schema without JSON Schema). */
function gateFor(stub: AnyTool, retryOff: boolean): { ok: true; gate: Gate } | { ok: false; reason: string } {
  try {
    const gate = createGate({ tools: [stub], approve: () => true, breaker: false, ...(retryOff ? {} : { retry: { budget: false } }), onHookError: () => undefined });
    return { ok: true, gate };
  } catch (e) {
    return { ok: false, reason: `the gate refuses this tool: ${e instanceof Error ? e.message : String(e)}` };
  }
}

function failed(name: string, r: fc.RunDetails<[unknown]>, what: string): PropertyResult {
  const ex = r.counterexample === null ? "" : (JSON.stringify(r.counterexample[0]) ?? "").slice(0, 400);
  const err = r.errorInstance instanceof Error ? r.errorInstance.message : "";
  return { name, ok: false, message: `${what}\ncounterexample: ${ex}\n${err}\n(seed ${r.seed}, path ${r.counterexample === null ? "" : r.counterexamplePath})`.trim() };
}

function inputGuard(tool: AnyTool, o: ContractSuiteOptions): ContractProperty {
  const name = `${tool.name}: invalid input never reaches execute`;
  return {
    name,
    async run() {
      let reached = false;
      const built = gateFor(defineTool({ ...tool, retry: false, execute: () => ((reached = true), undefined) }), true);
      if (!built.ok) return { name, ok: false, message: built.reason };
      const gate = built.gate;
      const arb = jsonArbitrary(advertisedInput(tool));
      const r = await fc.check(
        fc.asyncProperty(arb, async (payload) => {
          reached = false;
          const res = await gate.call(tool.name, JSON.stringify(payload));
          if ((await validates(tool.input, payload)).ok) return true;
          if (reached) throw new Error("execute ran on input the schema refuses");
          if (res.ok || res.code !== "INVALID_INPUT") throw new Error(`expected INVALID_INPUT, got ${res.ok ? "ok" : res.code}`);
          return true;
        }),
        { seed: o.seed ?? 1, numRuns: o.runs ?? 100 },
      );
      return r.failed ? failed(name, r as fc.RunDetails<[unknown]>, "invalid input reached execute, or was not answered INVALID_INPUT") : { name, ok: true, message: "" };
    },
  };
}

function outputGuard(tool: AnyTool, o: ContractSuiteOptions): ContractProperty {
  const name = `${tool.name}: output that breaks the output schema answers INVALID_OUTPUT`;
  return {
    name,
    async run() {
      const input = await validInput(tool, o);
      if (!input.ok) return { name, ok: false, message: noInput(tool) };
      let next: unknown;
      const built = gateFor(defineTool({ ...tool, retry: false, execute: () => next }), true);
      if (!built.ok) return { name, ok: false, message: built.reason };
      const gate = built.gate;
      const outSchema = toJsonSchema(tool.output, "output");
      const arb = jsonArbitrary(outSchema);
      // What MCP clients check `structuredContent` against: the advertised outputSchema.
      const advertised = outSchema.ok ? compileAdvertised(outSchema.schema, "draft-2020-12") : undefined;
      const r = await fc.check(
        fc.asyncProperty(arb, async (out) => {
          next = JSON.parse(JSON.stringify(out)) as unknown;
          const res = await gate.call(tool.name, input.value);
          // What the gate answers success for: data the schema accepts and JSON carries (src/json-data.ts).
          const checked = await validates(tool.output, out);
          const valid = checked.ok && notJsonData(checked.value) === undefined;
          if (!valid && (res.ok || res.code !== "INVALID_OUTPUT")) throw new Error(`output the schema refuses was answered ${res.ok ? "ok" : res.code}`);
          if (valid && !res.ok && res.code === "INVALID_OUTPUT") throw new Error("output the schema accepts was answered INVALID_OUTPUT");
          if (res.ok && advertised?.ok === true) {
            const v = advertised.check(JSON.parse(JSON.stringify(res.data ?? null)));
            if (!v.accepted) throw new Error(`data the gate returned breaks the advertised outputSchema (${v.reasons[0] ?? ""})`);
          }
          return true;
        }),
        { seed: o.seed ?? 1, numRuns: o.runs ?? 100 },
      );
      return r.failed ? failed(name, r as fc.RunDetails<[unknown]>, "the gate's output verdict differs from the output schema") : { name, ok: true, message: "" };
    },
  };
}

function keyOf(tool: AnyTool, input: unknown): boolean {
  try {
    const k: unknown = tool.idempotencyKey?.(input);
    return typeof k === "string" && k.length > 0;
  } catch {
    return false;
  }
}

function retryCap(tool: AnyTool, o: ContractSuiteOptions): ContractProperty {
  const name = `${tool.name}: transient failures stay within the retry cap`;
  const cap = tool.retry === false ? 1 : (tool.retry?.attempts ?? 3);
  return {
    name,
    async run() {
      const input = await validInput(tool, o);
      if (!input.ok) return { name, ok: false, message: noInput(tool) };
      let failuresLeft = 0;
      let calls = 0;
      const retry = tool.retry === false ? false : { ...tool.retry, baseMs: 0, capMs: 0 };
      // A write may be retried only with a guarantee: a downstream that dedupes on a key, or a state check.
      const parsed = await validates(tool.input, input.value);
      const safeWrite = tool.effect === "write" && (tool.reconcile !== undefined || (tool.idempotentDownstream === true && parsed.ok && keyOf(tool, parsed.value)));
      const { reconcile, ...rest } = tool;
      const stub = defineTool({
        ...rest,
        // The stub's failures apply nothing: answer that, rather than asking the real service.
        ...(reconcile !== undefined ? { reconcile: () => ({ status: "none" as const }) } : {}),
        retry,
        execute: () => {
          calls++;
          if (failuresLeft > 0) {
            failuresLeft--;
            throw transient("injected by the contract suite");
          }
          return undefined;
        },
      });
      const built = gateFor(stub, false);
      if (!built.ok) return { name, ok: false, message: built.reason };
      const gate = built.gate;
      const r = await fc.check(
        fc.asyncProperty(fc.integer({ min: 0, max: 6 }), async (failures) => {
          failuresLeft = failures;
          calls = 0;
          const res = await gate.call(tool.name, input.value);
          if (res.meta.attempts !== calls) throw new Error(`meta.attempts ${res.meta.attempts} but execute ran ${calls} time(s)`);
          if (calls > cap) throw new Error(`execute ran ${calls} times, over the cap of ${cap}`);
          if (tool.effect === "write" && !safeWrite && calls > 1) throw new Error("a write was retried without an idempotency guarantee");
          if (tool.effect === "read" && failures >= cap && (res.ok || res.code !== "RETRYABLE" || !res.retryable)) {
            throw new Error(`after ${failures} transient failures a read must answer RETRYABLE, got ${res.ok ? "ok" : res.code}`);
          }
          if (failures > 0 && calls <= failures && res.ok) throw new Error("answered ok although every attempt failed");
          return true;
        }),
        { seed: o.seed ?? 1, numRuns: Math.min(o.runs ?? 100, 30) },
      );
      return r.failed ? failed(name, r as unknown as fc.RunDetails<[unknown]>, "retry behaviour broke the cap or the envelope") : { name, ok: true, message: "" };
    },
  };
}

function drift(tool: AnyTool, d: DriftOptions): ContractProperty {
  const name = `${tool.name}: advertised contracts match the runtime (drift check)`;
  return {
    name,
    async run() {
      const report = await checkTool(tool, d);
      if (report.ok) return { name, ok: true, message: "" };
      const text = formatReport({ format: "toolgate-check", version: 1, ok: false, seed: d.seed ?? 1, runs: d.runs ?? 300, tools: [report] });
      return { name, ok: false, message: text };
    },
  };
}

/**
 * The suite's properties for one tool, to run yourself.
 * @example
 * for (const p of contractProperties(getOrder)) {
 *   const r = await p.run();
 *   if (!r.ok) console.error(r.message);
 * }
 */
export function contractProperties<T extends AnyTool>(tool: T, options: ContractSuiteOptions<ArgsOf<T>> = {}): ContractProperty[] {
  checkSuiteOptions(tool, options, "contractProperties");
  return properties(tool, options);
}

/** The properties, from checked options. */
function properties(tool: AnyTool, options: ContractSuiteOptions): ContractProperty[] {
  const props = [inputGuard(tool, options), outputGuard(tool, options), retryCap(tool, options)];
  // The suite's runs and seed reach the drift check too; its own `drift.runs`/`drift.seed` win.
  const shared = { ...(options.runs !== undefined ? { runs: options.runs } : {}), ...(options.seed !== undefined ? { seed: options.seed } : {}) };
  if (options.drift !== false) props.push(drift(tool, { ...shared, ...(options.drift ?? {}) }));
  return props;
}

/**
 * Checked before any property runs: a fractional `runs` made fast-check spin forever, and `runs: 0`
 * passed every property without generating a case.
 */
function checkSuiteOptions(tool: unknown, options: unknown, who: string): void {
  const bad = (m: string): never => {
    throw new ToolgateConfigError("E_CHECK_OPTIONS", `${who}: ${m}`);
  };
  if (!isTool(tool)) bad("the first argument must be a defineTool(...) value");
  if (typeof options !== "object" || options === null) bad("options must be an object");
  const o = options as ContractSuiteOptions;
  _checkRunsAndSeed(o.runs ?? 1, o.seed ?? 0, bad);
  if (o.drift !== undefined && o.drift !== false) _checkDriftOptions(o.drift, `${who} (drift)`);
}

/** The `test`/`it` function of vitest, node:test or jest. */
export type TestFn = (name: string, fn: () => Promise<void>) => unknown;

/**
 * Register the contract suite of one tool in your test framework: one test per property.
 * Pass `it` (or `test`) from vitest or node:test.
 * @example
 * import { it } from "vitest"; // or: import { it } from "node:test";
 * import { contractSuite } from "toolgate/testing";
 * contractSuite(getOrder, { it, seed: 7 });
 */
export function contractSuite<T extends AnyTool>(tool: T, options: ContractSuiteOptions<ArgsOf<T>> & { readonly it: TestFn }): void {
  checkSuiteOptions(tool, options, "contractSuite");
  if (typeof options.it !== "function") throw new ToolgateConfigError("E_CHECK_OPTIONS", "contractSuite: options.it must be your test framework's it or test function");
  for (const p of properties(tool, options)) {
    options.it(p.name, async () => {
      const r = await p.run();
      if (!r.ok) throw new Error(r.message);
    });
  }
}
