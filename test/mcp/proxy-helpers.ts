/** Helpers of the proxy tests: a proxy in front of the misbehaving upstream, a client on it. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createProxy, type Proxy, type ProxyOptions } from "../../src/mcp/index.js";
import { ROOT } from "./helpers.js";

export const UPSTREAM = join(ROOT, "test/fixtures/mcp/upstream.mjs");

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "toolgate-mcp-"));
}

/** A proxy over the fixture upstream, and a v1 client connected to it in memory. */
export async function proxied(
  opts: Partial<ProxyOptions> & { env?: Record<string, string> } = {},
): Promise<{ proxy: Proxy; client: Client; logs: string[]; close: () => Promise<void> }> {
  const logs: string[] = [];
  const { env, ...rest } = opts;
  const proxy = await createProxy({
    upstream: { kind: "stdio", command: process.execPath, args: [UPSTREAM], env: { PATH: process.env.PATH ?? "", ...env } },
    onLog: (l) => logs.push(l),
    ...rest,
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await proxy.createServer().connect(a);
  const client = new Client({ name: "proxy-test", version: "1.0.0" });
  await client.connect(b);
  return {
    proxy,
    client,
    logs,
    close: async () => {
      await client.close();
      await proxy.close();
    },
  };
}

/** Poll until `fn` is true (bounded). */
export async function until(fn: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("condition not met in time");
}
