/**
 * `toolgate proxy` as a child process, driven by the official client over stdio, in front of
 * real third-party servers (@modelcontextprotocol/server-everything, server-memory) and an HTTP upstream.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI, FailureSchema, ROOT, runMain, spawnHttpServe } from "./helpers.js";
import { UPSTREAM, tempDir } from "./proxy-helpers.js";

type Res = Awaited<ReturnType<Client["callTool"]>>;
const envelope = (r: Res) => FailureSchema.parse((r._meta as Record<string, unknown>)["toolgate/result"]);
const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const MEMORY = join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js");

async function proxyClient(args: readonly string[], env: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "proxy-cli-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [...CLI, "proxy", ...args], cwd: ROOT, stderr: "pipe", env: { PATH: process.env.PATH ?? "", ...env } }),
  );
  return client;
}

describe("toolgate proxy in front of @modelcontextprotocol/server-everything", () => {
  let client: Client;
  beforeAll(async () => {
    const dir = tempDir();
    const config = join(dir, "config.json");
    writeFileSync(config, JSON.stringify({ tools: { echo: { effect: "read", retries: 1 }, "get-sum": { effect: "read" } } }));
    client = await proxyClient(["--config", config, "--lock", join(dir, "lock.json"), "--", process.execPath, EVERYTHING, "stdio"]);
  });
  afterAll(async () => client?.close());

  it("lists the upstream tools", async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "get-sum", "get-structured-content"]));
  });

  it("rejects invalid arguments before the upstream with per-field issues, passes valid ones", async () => {
    expect(envelope(await client.callTool({ name: "echo", arguments: { message: 42 } }))).toMatchObject({
      code: "INVALID_INPUT",
      issues: [{ path: "message", code: "invalid_type" }],
    });
    expect(envelope(await client.callTool({ name: "get-sum", arguments: { a: 1 } }))).toMatchObject({ code: "INVALID_INPUT", issues: [{ path: "b", code: "required" }] });
    const ok = await client.callTool({ name: "echo", arguments: { message: "hi" } });
    expect((ok.content as { text: string }[])[0]!.text).toBe("Echo: hi");
    const sum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } });
    expect((sum.content as { text: string }[])[0]!.text).toMatch(/42/);
  });

  it("validates structured output against the upstream's outputSchema and passes it through", async () => {
    const r = await client.callTool({ name: "get-structured-content", arguments: { location: "Chicago" } });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ temperature: expect.any(Number), conditions: expect.any(String) });
  });
});

describe("toolgate proxy in front of @modelcontextprotocol/server-memory", () => {
  let client: Client;
  beforeAll(async () => {
    const dir = tempDir();
    const config = join(dir, "config.json");
    writeFileSync(config, JSON.stringify({ tools: { read_graph: { effect: "read" } } }));
    client = await proxyClient(["--config", config, "--no-lock", "--env", "MEMORY_FILE_PATH", "--", process.execPath, MEMORY], { MEMORY_FILE_PATH: join(dir, "memory.jsonl") });
  });
  afterAll(async () => client?.close());

  it("an invalid write never reaches the store; a valid one does", async () => {
    const bad = await client.callTool({ name: "create_entities", arguments: { entities: [{ name: "toolgate", entityType: "project" }] } });
    expect(envelope(bad)).toMatchObject({ code: "INVALID_INPUT", issues: [{ path: "entities.0.observations", code: "required" }] });
    expect((await client.callTool({ name: "read_graph", arguments: {} })).structuredContent).toEqual({ entities: [], relations: [] });
    const good = await client.callTool({ name: "create_entities", arguments: { entities: [{ name: "toolgate", entityType: "project", observations: ["guards tools"] }] } });
    expect(good.isError).toBeFalsy();
    const graph = (await client.callTool({ name: "read_graph", arguments: {} })).structuredContent as { entities: { name: string }[] };
    expect(graph.entities.map((e) => e.name)).toEqual(["toolgate"]);
  });
});

describe("toolgate proxy --upstream-url (Streamable HTTP upstream)", () => {
  it("guards an HTTP MCP server that requires a bearer token (read from the environment)", async () => {
    const TOKEN = "upstream-token-0123456789";
    const upstream = await spawnHttpServe("examples/orders/index.ts", ["--token-env", "UP_TOKEN"], { ...process.env, UP_TOKEN: TOKEN });
    const client = await proxyClient(["--no-lock", "--upstream-url", upstream.url.href, "--upstream-token-env", "UP_TOKEN"], { UP_TOKEN: TOKEN });
    try {
      const ok = await client.callTool({ name: "get_order", arguments: { customerId: "c_2" } });
      expect(ok.structuredContent).toMatchObject({ found: true, customerId: "c_2" });
      // refused by the proxy's Ajv, before the upstream's own gate
      expect(envelope(await client.callTool({ name: "get_order", arguments: { customerId: "" } }))).toMatchObject({ code: "INVALID_INPUT", issues: [{ path: "customerId", code: "too_small" }] });
    } finally {
      await client.close();
      await upstream.stop();
    }
  });
});

describe("toolgate proxy: clear errors, bounded", () => {
  it("a bad config file exits 2 with every problem and its path", async () => {
    const dir = tempDir();
    const config = join(dir, "bad.json");
    writeFileSync(config, JSON.stringify({ tools: { echo: { effect: "write", retries: 2, timeoutMs: -1 } }, allwo: [] }));
    const r = await runMain(["proxy", "--config", config, "--", process.execPath, UPSTREAM]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/tools\.echo\.retries: retries apply only to tools marked "effect": "read"/);
    expect(r.stderr).toMatch(/tools\.echo\.timeoutMs/);
    expect(r.stderr).toMatch(/Unrecognized key.*allwo|allwo/);
    expect(r.stderr).toMatch(/\(E_PROXY_CONFIG\)/);
  });

  it.each([
    [["proxy", "--config", "/nonexistent/config.json", "--", "node"], /config file \/nonexistent\/config.json: not found \(E_PROXY_CONFIG\)/],
    [["proxy"], /expected an upstream/],
    [["proxy", "--upstream-url", "ftp://x", ], /must be http: or https:/],
    [["proxy", "--upstream-url", "http://user:s3cretpw@127.0.0.1:1/mcp"], /^(?![\s\S]*s3cretpw)[\s\S]*--upstream-url must not carry a user or password/],
    [["proxy", "--no-lock", "--update-lock", "--", "node"], /--no-lock cannot be combined/],
    [["proxy", "--upstream-url", "http://127.0.0.1:1/mcp", "--upstream-token-env", "TG_UNSET_VAR_X"], /--upstream-token-env: environment variable TG_UNSET_VAR_X is not set/],
    [["proxy", "--token-env", "X", "--", "node"], /apply to --http only/],
  ])("%j exits 2", async (args, message) => {
    const r = await runMain(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it("a dead upstream exits 1 with the reason, in bounded time", async () => {
    const t0 = Date.now();
    const r = await runMain(["proxy", "--no-lock", "--", process.execPath, "-e", "process.exit(3)"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/did not start after 3 attempts.*\(E_UPSTREAM\)/);
    expect(r.stdout).toBe("");
    expect(Date.now() - t0).toBeLessThan(20_000);
  });

  it("--update-lock rewrites the lock file", async () => {
    const dir = tempDir();
    const lock = join(dir, "lock.json");
    writeFileSync(lock, JSON.stringify({ version: 1, tools: {} }));
    const client = await proxyClient(["--lock", lock, "--update-lock", "--", process.execPath, UPSTREAM]);
    try {
      expect((await client.callTool({ name: "echo", arguments: { text: "hi" } })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
    expect(Object.keys((JSON.parse(readFileSync(lock, "utf8")) as { tools: object }).tools)).toContain("echo");
  });
});
