/**
 * MCP benchmarks.
 * 1. In-memory transport, 20,000 sequential get_order calls: createMcpServer (gate) vs the SDK's
 *    own McpServer.registerTool with the same zod schemas. Target: toolgate ≥ 1.0× the SDK's calls/s.
 * 2. Proxy: p50 latency added over a direct stdio round trip to the same upstream (the fixture's
 *    echo). Target ≤ 15%. Measured twice: the proxy as a library in the client's process
 *    (createProxy, upstream over stdio), and `toolgate proxy` as its own process (one more stdio hop).
 *    Each next to its floor — an SDK pass-through that checks nothing, and a byte relay process —
 *    so the cost of the architecture and the cost of toolgate's checks are told apart.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
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
 * The floor under an SDK-based proxy in the client's process: an SDK `Server` that forwards
 * every tools/call to an SDK `Client` of the upstream, validating nothing.
 */
async function passThroughServer(upstream: Client): Promise<Client> {
  const server = new Server({ name: "pass-through", version: "1" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => upstream.listTools());
  const register = Protocol.prototype.setRequestHandler as unknown as (this: Server, schema: typeof CallRequestSchema, h: (r: z.infer<typeof CallRequestSchema>) => Promise<Record<string, unknown>>) => void;
  register.call(server, CallRequestSchema, (r) => upstream.request({ method: "tools/call", params: r.params }, AnyResult));
  return inMemoryClient((t) => server.connect(t));
}

const CallRequestSchema = z.object({ method: z.literal("tools/call"), params: z.looseObject({}) });
const AnyResult = z.looseObject({});

async function proxyLatency(): Promise<void> {
  const direct = await stdioClient(process.execPath, [UPSTREAM]);
  const proxy = await createProxy({ upstream: { kind: "stdio", command: process.execPath, args: [UPSTREAM] }, config: { tools: { echo: { effect: "read" } } } });
  const inProcess = await inMemoryClient((t) => proxy.createServer().connect(t));
  const cli = await stdioClient(process.execPath, [...CLI, "proxy", "--no-lock", "--", process.execPath, UPSTREAM]);
  const passUpstream = await stdioClient(process.execPath, [UPSTREAM]);
  const passThrough = await passThroughServer(passUpstream);
  const relay = await stdioClient(process.execPath, [RELAY, process.execPath, UPSTREAM]);
  const call = { name: "echo", arguments: { text: "hello" } };
  const clients = { direct, inProcess, passThrough, cli, relay } as const;
  for (const c of Object.values(clients)) for (let i = 0; i < 1_000; i++) await c.callTool(call); // warm-up
  const samples: Record<keyof typeof clients, number[]> = { direct: [], inProcess: [], passThrough: [], cli: [], relay: [] };
  for (let round = 0; round < 5; round++) {
    for (const [k, c] of Object.entries(clients) as [keyof typeof clients, Client][]) samples[k].push(await p50(() => c.callTool(call), 1_000));
  }
  const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const d = med(samples.direct);
  const row = (label: string, us: number) => `${label.padEnd(58)} ${us.toFixed(1).padStart(8)} µs  (+${(((us - d) / d) * 100).toFixed(1)}%)\n`;
  const [ip, pt, cp, rl] = [med(samples.inProcess), med(samples.passThrough), med(samples.cli), med(samples.relay)];
  process.stdout.write(`\n## Proxy latency, stdio upstream (fixture echo), p50 of 5×1,000 sequential calls\n`);
  process.stdout.write(`${"direct stdio round trip".padEnd(58)} ${d.toFixed(1).padStart(8)} µs\n`);
  process.stdout.write(row("createProxy in the client's process", ip));
  process.stdout.write(row("  floor: SDK Server → SDK Client pass-through, no checks", pt));
  process.stdout.write(row("toolgate proxy as its own process (2 stdio hops)", cp));
  process.stdout.write(row("  floor: byte relay process, parses nothing", rl));
  verdict("proxy (library) added p50", ((ip - d) / d) * 100, 15, "%");
  verdict("proxy (own process) added p50", ((cp - d) / d) * 100, 15, "%");
  // What toolgate itself adds on top of the floor its architecture cannot go under.
  process.stdout.write(`toolgate's own share (library): +${(((ip - pt) / d) * 100).toFixed(1)}% of direct; (own process): +${(((cp - rl) / d) * 100).toFixed(1)}% of direct\n`);
  await Promise.all(Object.values(clients).map((c) => c.close()));
  await passUpstream.close();
  await proxy.close();
}

export default async function run(): Promise<void> {
  await serverVsSdk();
  await proxyLatency();
}
