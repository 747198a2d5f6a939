/**
 * `toolgate proxy -- <command>`: what environment the upstream gets. By default the SDK's safe set
 * (PATH, HOME, …) plus each `--env NAME`; `--inherit-env` passes everything; the proxy's own tokens
 * (`--token-env`, `--upstream-token-env`) never. Observed through the fixture upstream, whose
 * `echo` description is $UPSTREAM_DESCRIPTION and which appends to $UPSTREAM_STARTS_FILE.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CLI, ROOT, runMain, spawnListening } from "./helpers.js";
import { UPSTREAM, tempDir } from "./proxy-helpers.js";

const SECRET = "proxy-client-token-0123456789";

async function echoDescription(client: Client): Promise<string | undefined> {
  return (await client.listTools()).tools.find((t) => t.name === "echo")?.description;
}

async function overStdio(flags: readonly string[], env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: "env-test", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [...CLI, "proxy", "--no-lock", ...flags, "--", process.execPath, UPSTREAM],
      cwd: ROOT,
      stderr: "pipe",
      env: { PATH: process.env.PATH ?? "", ...env },
    }),
  );
  return client;
}

/** `toolgate proxy --http 127.0.0.1:0 …` as a child; resolves once it listens. */
function proxyOverHttp(flags: readonly string[], env: Record<string, string>): Promise<{ url: URL; stop: () => Promise<number | null> }> {
  return spawnListening(["proxy", "--no-lock", "--http", "127.0.0.1:0", ...flags, "--", process.execPath, UPSTREAM], { PATH: process.env.PATH ?? "", ...env });
}

describe("toolgate proxy: the upstream command's environment", () => {
  it("by default only the safe set: a variable of the proxy's environment does not reach the upstream", async () => {
    const starts = join(tempDir(), "starts.txt");
    const client = await overStdio([], { UPSTREAM_DESCRIPTION: "from the proxy's environment", UPSTREAM_STARTS_FILE: starts });
    try {
      expect(await echoDescription(client)).toBe("Echo the text back");
      expect(existsSync(starts)).toBe(false);
    } finally {
      await client.close();
    }
  });

  it("--env NAME passes that variable (and only that one)", async () => {
    const starts = join(tempDir(), "starts.txt");
    const client = await overStdio(["--env", "UPSTREAM_DESCRIPTION"], { UPSTREAM_DESCRIPTION: "passed with --env", UPSTREAM_STARTS_FILE: starts });
    try {
      expect(await echoDescription(client)).toBe("passed with --env");
      expect(existsSync(starts)).toBe(false);
    } finally {
      await client.close();
    }
  });

  it("--inherit-env passes everything but the proxy's own client token (--token-env)", async () => {
    const starts = join(tempDir(), "starts.txt");
    // The token lives in the variable the upstream would show as its description.
    const proxy = await proxyOverHttp(["--inherit-env", "--token-env", "UPSTREAM_DESCRIPTION"], { UPSTREAM_DESCRIPTION: SECRET, UPSTREAM_STARTS_FILE: starts });
    const client = new Client({ name: "env-test", version: "1" });
    try {
      await client.connect(new StreamableHTTPClientTransport(proxy.url, { requestInit: { headers: { authorization: `Bearer ${SECRET}` } } }));
      expect(await echoDescription(client)).toBe("Echo the text back");
      expect(existsSync(starts)).toBe(true); // the rest of the environment did arrive
    } finally {
      await client.close();
      await proxy.stop();
    }
  });

  it.each([
    [["--env", "A=b", "--", "node"], /--env expects a variable name, got "A=b"/],
    [["--env", "TG_UNSET_VAR_X", "--", "node"], /--env: environment variable TG_UNSET_VAR_X is not set/],
    [["--env", "PATH", "--upstream-url", "http://127.0.0.1:1/mcp"], /--env and --inherit-env apply to an upstream command/],
    [["--http", "127.0.0.1:0", "--token-env", "TG_ENV_TEST_TOKEN", "--env", "TG_ENV_TEST_TOKEN", "--", "node"], /--env TG_ENV_TEST_TOKEN: that variable holds one of the proxy's own tokens/],
  ])("%j exits 2", async (args, message) => {
    process.env.TG_ENV_TEST_TOKEN = SECRET;
    try {
      const r = await runMain(["proxy", "--no-lock", ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    } finally {
      delete process.env.TG_ENV_TEST_TOKEN;
    }
  });
});

describe("toolgate <command> --help", () => {
  it("-h after -- belongs to the upstream command, not to the CLI", async () => {
    const r = await runMain(["proxy", "--no-lock", "--update-lock", "--", "node", "server.js", "-h"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--no-lock cannot be combined/);
    expect(r.stdout).toBe("");
  });

  it("-h before -- prints the command's usage", async () => {
    const r = await runMain(["proxy", "-h", "--", "node", "server.js"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: toolgate proxy/);
    expect(r.stdout).toMatch(/--inherit-env/);
  });
});
