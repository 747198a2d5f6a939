/**
 * The demo's runner: a fresh temp directory, the orders tools served by `toolgate serve` in a
 * child process (MCP stdio, SQLite service and ledger), the official MCP client, a scripted agent
 * driven through the loop policy scene by scene. The report is data.
 * @module
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { ToolResult } from "../result.js";
import { fromCallToolResult, IDEMPOTENCY_META_KEY } from "../mcp/result.js";
import { createLoopPolicy } from "../loop/policy.js";
import { runAgentLoop, type AgentModel } from "../loop/run.js";
import type { LoopSession, LoopStep, ProposedCall } from "../loop/session.js";
import type { LoopEvidence } from "../loop/decision.js";
import { openSqliteOrders, readRefundRows } from "../../examples/orders/sqlite-service.js";
import { SCENES, readLedger, type DemoLedgerEntry } from "./demo-scenes.js";

/** A call that takes longer than this fails the scene instead of hanging the demo. */
const CALL_TIMEOUT_MS = 15_000;

/** One line of a scene's transcript. */
export type DemoEvent =
  | { readonly kind: "note"; readonly text: string }
  | { readonly kind: "call"; readonly tool: string; readonly callId: string; readonly args: unknown; readonly idempotencyKey?: string }
  | { readonly kind: "step"; readonly step: LoopStep; readonly sent: boolean };

/** One scene: what it shows, its transcript, and whether it behaved as described. */
export interface SceneReport {
  readonly id: string;
  readonly title: string;
  readonly expected: string;
  readonly observed: string;
  readonly ok: boolean;
  readonly events: readonly DemoEvent[];
}

/** The whole run. `ok` is true only when every scene is. */
export interface DemoReport {
  readonly ok: boolean;
  readonly scenes: readonly SceneReport[];
  readonly evidence: readonly LoopEvidence[];
  /** Every refund row, read back from the SQLite file after the run. */
  readonly refundsInDatabase: ReturnType<typeof readRefundRows>;
  /** Every ledger entry, read back from the ledger file after the run. */
  readonly ledgerEntries: readonly DemoLedgerEntry[];
  /** The server's stderr, when a scene failed (empty otherwise). */
  readonly serverStderr: string;
  /** Lines of the server's call log (`toolgate serve --log <file>`), one per call it executed. */
  readonly callLogLines: number;
  readonly files: {
    readonly dir: string;
    readonly ordersDb: string;
    readonly ledgerDb: string;
    readonly evidence: string;
    readonly callLog: string;
    readonly kept: boolean;
  };
}

/** Sibling files with this module's extension: `.ts` under tsx, `.js` from dist. */
function sibling(relative: string): string {
  const ext = extname(fileURLToPath(import.meta.url));
  return fileURLToPath(new URL(relative + ext, import.meta.url));
}

async function callOverMcp(client: Client, call: ProposedCall, key: string | undefined): Promise<ToolResult> {
  const params = { name: call.tool, arguments: call.args as Record<string, unknown>, ...(key !== undefined ? { _meta: { [IDEMPOTENCY_META_KEY]: key } } : {}) };
  const res = await client.callTool(params, undefined, { timeout: CALL_TIMEOUT_MS });
  const env = fromCallToolResult(res);
  if (env === undefined) throw new Error("the server's answer carries no toolgate envelope");
  return env;
}

/** Options of {@link runDemoStory}. */
export interface DemoOptions {
  /** Keep the temp directory (SQLite files, evidence) instead of removing it. */
  readonly keep: boolean;
  /** The run's files are ready (before the server starts). */
  onStart?(files: DemoReport["files"]): void;
  /** A scene begins. */
  onSceneStart?(scene: Pick<SceneReport, "id" | "title" | "expected">): void;
  /** A transcript line, as it happens. */
  onEvent?(e: DemoEvent): void;
  /** A scene ended, with its verdict. */
  onScene?(report: SceneReport): void;
}

/**
 * Run the story. Creates a fresh directory in the OS temp dir, removes it afterwards unless
 * `keep`. `onEvent` sees every transcript line as it happens.
 */
export async function runDemoStory(options: DemoOptions): Promise<DemoReport> {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-demo-"));
  const files = {
    dir,
    ordersDb: join(dir, "orders.db"),
    ledgerDb: join(dir, "ledger.db"),
    evidence: join(dir, "evidence.jsonl"),
    callLog: join(dir, "calls.jsonl"),
    kept: options.keep,
  };
  const orders = openSqliteOrders(files.ordersDb);
  options.onStart?.(files);
  const stderr: string[] = [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...process.execArgv, sibling("./main"), "serve", sibling("../../examples/orders/demo-server"), "--name", "orders-demo", "--server-version", "1.0.0", "--log", files.callLog],
    env: { ...getDefaultEnvironment(), TOOLGATE_DEMO_DB: files.ordersDb, TOOLGATE_DEMO_LEDGER: files.ledgerDb },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString("utf8")));
  const client = new Client({ name: "toolgate-demo-agent", version: "1.0.0" });
  const scenes: SceneReport[] = [];
  const evidence: LoopEvidence[] = [];
  try {
    try {
      await client.connect(transport);
    } catch (e) {
      throw new Error(`the MCP server did not start: ${e instanceof Error ? e.message : String(e)}\n${stderr.join("").trim()}`);
    }
    const policy = createLoopPolicy();
    let session: LoopSession = policy.start();
    let n = 0;
    for (const scene of SCENES) {
      if (scene.session === "new") session = policy.start();
      options.onSceneStart?.({ id: scene.id, title: scene.title, expected: scene.expected });
      const events: DemoEvent[] = [];
      const emit = (e: DemoEvent): void => {
        events.push(e);
        options.onEvent?.(e);
      };
      const note = scene.before?.(orders);
      if (note !== undefined) emit({ kind: "note", text: note });
      const keys = new Map<string, string>();
      const args = new Map<string, unknown>();
      let sent = 0;
      let turn = 0;
      const model: AgentModel = {
        next: ({ last }) => {
          const script = scene.turns[turn++];
          const proposed = script === undefined ? [] : script(last);
          return proposed.map((p) => {
            const callId = `call_${++n}`;
            if (p.idempotencyKey !== undefined) keys.set(callId, p.idempotencyKey);
            args.set(callId, p.args);
            return { tool: p.tool, args: p.args, callId };
          });
        },
      };
      const before = session.steps.length;
      const firstEvidence = session.evidence.length;
      await runAgentLoop({
        session,
        model,
        execute: (c) => {
          sent++;
          const key = keys.get(c.callId);
          emit({ kind: "call", tool: c.tool, callId: c.callId, args: c.args, ...(key !== undefined ? { idempotencyKey: key } : {}) });
          return callOverMcp(client, c, key);
        },
        onStep: (step) => {
          if (step.result === undefined) emit({ kind: "call", tool: step.tool, callId: step.callId, args: args.get(step.callId) });
          emit({ kind: "step", step, sent: step.result !== undefined });
        },
      });
      const steps = session.steps.slice(before);
      const newEvidence = session.evidence.slice(firstEvidence);
      evidence.push(...newEvidence);
      const { ok, observed } = await scene.check(steps, { session, sent, orders, ledgerDb: files.ledgerDb });
      const report: SceneReport = { id: scene.id, title: scene.title, expected: scene.expected, observed, ok, events };
      scenes.push(report);
      options.onScene?.(report);
    }
    writeFileSync(files.evidence, evidence.map((e) => JSON.stringify(e)).join("\n") + (evidence.length > 0 ? "\n" : ""));
    orders.close();
    const refundsInDatabase = readRefundRows(files.ordersDb);
    const ledgerEntries = await readLedger(files.ledgerDb);
    await client.close(); // the server exits and flushes its call log
    const callLogLines = existsSync(files.callLog) ? readFileSync(files.callLog, "utf8").split("\n").filter((l) => l.length > 0).length : 0;
    const ok = scenes.length === SCENES.length && scenes.every((s) => s.ok);
    return { ok, scenes, evidence, refundsInDatabase, ledgerEntries, callLogLines, serverStderr: ok ? "" : stderr.join("").slice(-4_000), files };
  } finally {
    await client.close().catch(() => undefined);
    if (orders.isOpen()) orders.close();
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
  }
}
