/**
 * MCP benchmarks.
 * 1. In-memory transport, 20,000 sequential get_order calls: createMcpServer (gate) vs the SDK's
 *    own McpServer.registerTool with the same zod schemas. Target: toolgate ≥ 1.0× the SDK's calls/s.
 * 2. Proxy: p50 latency added over a direct stdio round trip to the same upstream (the fixture's
 *    echo). Target ≤ 15%. Measured twice: the proxy as a library in the client's process
 *    (createProxy, upstream over stdio), and `toolgate proxy` as its own process (one more stdio hop).
 *    Each next to its floors — relays that check nothing (on the SDK's transports, and for the
 *    process also one that copies bytes) — so the cost of the architecture and the cost of
 *    toolgate's checks are told apart; and the CPU time per call, which the machine's wake-up
 *    latency does not stretch.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { createGate } from "../src/index.js";
import { createMcpServer, createProxy } from "../src/mcp/index.js";
import { createFakeOrders, makeOrderTools } from "../examples/orders/index.js";
import { GetOrderInput, GetOrderOutput } from "../examples/orders/schemas.js";
import { compare, printTable, verdict } from "./harness.js";

// `npm run bench` runs this file compiled under .bench/; fixtures and the CLI live in the project root.
const HERE = fileURLToPath(new URL(".", import.meta.url));
const COMPILED = /[\\/]\.bench[\\/]bench[\\/]$/.test(HERE);
const ROOT = join(HERE, COMPILED ? "../.." : "..");
const UPSTREAM = join(ROOT, "test/fixtures/mcp/upstream.mjs");
const RELAY = join(ROOT, "bench/fixtures/relay.mjs");
const SDK_RELAY = join(ROOT, "bench/fixtures/sdk-relay.mjs");
const CLI = COMPILED ? [join(HERE, "../src/cli/main.js")] : ["--import", "tsx", join(ROOT, "src/cli/main.ts")];

async function inMemoryClient(connect: (t: InMemoryTransport) => Promise<void>): Promise<Client> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await connect(a);
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(b);
  return client;
}

async function serverVsSdk(): Promise<void> {
  const service = createFakeOrders();
  const gate = createGate({ tools: makeOrderTools(service) });
  const toolgate = await inMemoryClient((t) => createMcpServer(gate, { name: "tg", version: "1" }).connect(t));

  const sdkService = createFakeOrders();
  const sdk = new McpServer({ name: "sdk", version: "1" });
  sdk.registerTool(
    "get_order",
    { description: "Look up a customer's orders", inputSchema: GetOrderInput.shape, outputSchema: GetOrderOutput.shape },
    async (input) => {
      const data = await sdkService.findOrders(input.customerId, { includeHistory: input.includeHistory });
      return { content: [{ type: "text", text: JSON.stringify(data) }], structuredContent: data as unknown as Record<string, unknown> };
    },
  );
  const sdkClient = await inMemoryClient((t) => sdk.connect(t));

  const args = { name: "get_order", arguments: { customerId: "c_1" } };
  const check = await toolgate.callTool(args);
  const checkSdk = await sdkClient.callTool(args);
  if (check.isError || checkSdk.isError) throw new Error("bench setup: a call failed");

  const rows = await compare(
    {
      "sdk McpServer.registerTool (zod)": () => sdkClient.callTool(args),
      "toolgate createMcpServer (gate)": () => toolgate.callTool(args),
    },
    { iterations: 20_000, rounds: 7, warmup: 3_000 },
  );
  printTable("MCP in-memory, 20,000 sequential get_order calls", rows, "sdk McpServer.registerTool (zod)");
  const [sdkRow, tgRow] = rows;
  verdict("toolgate/sdk calls/s", tgRow!.opsPerSec / sdkRow!.opsPerSec, 1.0, "×", true);
  await toolgate.close();
  await sdkClient.close();
}

/** Median latency of `n` sequential calls, µs. */
async function p50(fn: () => Promise<unknown>, n: number): Promise<number> {
  const t: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = process.hrtime.bigint();
    await fn();
    t.push(Number(process.hrtime.bigint() - s) / 1000);
  }
  t.sort((a, b) => a - b);
  return t[Math.floor(t.length / 2)]!;
}

async function stdioClient(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StdioClientTransport({ command, args, cwd: ROOT, stderr: "inherit" }));
  return client;
}

/**
 * The floor under a proxy in the client's process on the SDK's transports: every message the
 * client sends is handed, unchecked, to an SDK StdioClientTransport of the upstream, and back.
 */
async function inProcessRelay(): Promise<{ client: Client; close: () => Promise<void> }> {
  const upstream = new StdioClientTransport({ command: process.execPath, args: [UPSTREAM], stderr: "inherit" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  upstream.onmessage = (m) => void a.send(m);
  a.onmessage = (m) => void upstream.send(m);
  await upstream.start();
  await a.start();
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(b);
  return { client, close: () => upstream.close() };
}

async function proxyLatency(how: string): Promise<void> {
  const direct = await stdioClient(process.execPath, [UPSTREAM]);
  const proxy = await createProxy({ upstream: { kind: "stdio", command: process.execPath, args: [UPSTREAM] }, config: { tools: { echo: { effect: "read" } } } });
  const library = await inMemoryClient((t) => proxy.createServer().connect(t));
  const relayIn = await inProcessRelay();
  const cli = await stdioClient(process.execPath, [...CLI, "proxy", "--no-lock", "--", process.execPath, UPSTREAM]);
  const sdkRelay = await stdioClient(process.execPath, [SDK_RELAY, process.execPath, UPSTREAM]);
  const byteRelay = await stdioClient(process.execPath, [RELAY, process.execPath, UPSTREAM]);
  const call = { name: "echo", arguments: { text: "hello" } };
  const clients = { direct, library, relayIn: relayIn.client, cli, sdkRelay, byteRelay } as const;
  type Key = keyof typeof clients;
  for (const c of Object.values(clients)) for (let i = 0; i < 1_000; i++) await c.callTool(call); // warm-up
  const samples = Object.fromEntries(Object.keys(clients).map((k) => [k, [] as number[]])) as Record<Key, number[]>;
  const ROUNDS = 24;
  const PER_ROUND = 250;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [k, c] of Object.entries(clients) as [Key, Client][]) samples[k].push(await p50(() => c.callTool(call), PER_ROUND));
  }
  // The lower quartile of the rounds' medians, as the harness does: noise on this kind of machine only adds.
  const q1 = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor((xs.length - 1) / 4)]!;
  const lat = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, q1(v)])) as Record<Key, number>;
  const d = lat.direct;
  const added = (us: number) => ((us - d) / d) * 100;
  const row = (label: string, k: Key) => `${label.padEnd(62)} ${lat[k].toFixed(1).padStart(7)} µs  (+${added(lat[k]).toFixed(1)}%)\n`;
  process.stdout.write(`\n## Proxy latency, ${how}: stdio upstream (fixture echo), lower quartile of ${ROUNDS} rounds' p50 of ${PER_ROUND} sequential calls\n`);
  process.stdout.write(`${"direct stdio round trip".padEnd(62)} ${d.toFixed(1).padStart(7)} µs\n`);
  process.stdout.write(row("createProxy in the client's process", "library"));
  process.stdout.write(row("  floor: in-process message relay on the SDK transports", "relayIn"));
  process.stdout.write(row("toolgate proxy as its own process (one more stdio hop)", "cli"));
  process.stdout.write(row("  floor: relay process on the SDK stdio transports", "sdkRelay"));
  process.stdout.write(row("  floor: byte relay process, parses nothing", "byteRelay"));
  verdict(`proxy (library, ${how}) added p50`, added(lat.library), 15, "%");
  verdict(`proxy (own process, ${how}) added p50`, added(lat.cli), 15, "%");
  process.stdout.write(`toolgate's own share over its floor: library +${(added(lat.library) - added(lat.relayIn)).toFixed(1)}% of direct; own process +${(added(lat.cli) - added(lat.sdkRelay)).toFixed(1)}% of direct\n`);
  await Promise.all(Object.values(clients).map((c) => c.close()));
  await relayIn.close();
  await proxy.close();
}

/**
 * The proxy rows once as the machine schedules them, and once with every process on one core
 * (Linux `taskset`, when there): on a small VM, waking a process on the other core costs tens of
 * µs and swings from run to run, more than any proxy's own work; on one core the rows measure
 * the work itself.
 */
export default async function run(): Promise<void> {
  await serverVsSdk();
  await proxyLatency("as scheduled");
  if (process.platform !== "linux" || spawnSync("taskset", ["-c", "0", "true"]).status !== 0) {
    process.stdout.write("(no taskset here: the one-core rows are skipped)\n");
    return;
  }
  spawnSync("taskset", ["-c", "0", process.execPath, fileURLToPath(import.meta.url), ONE_CORE], { stdio: "inherit" });
}

const ONE_CORE = "--proxy-on-one-core";
if (process.argv.includes(ONE_CORE)) await proxyLatency("one core");
