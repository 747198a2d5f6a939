/**
 * The proxy's configuration file (JSON): which upstream tools to expose, and each tool's policy.
 * Retries apply only to tools the config marks as reads; upstream annotations are never trusted.
 * @module
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { ToolgateConfigError } from "../../errors.js";

const posInt = (max: number) => z.number().int().min(1).max(max);

const RateLimitSchema = z.strictObject({
  perSecond: z.number().positive().max(1_000_000),
  burst: posInt(1_000_000).optional(),
});

const PolicyFields = {
  timeoutMs: posInt(2 ** 31 - 1).optional(),
  concurrency: posInt(1_000_000).optional(),
  rateLimit: RateLimitSchema.optional(),
};

const ToolPolicySchema = z
  .strictObject({
    effect: z.enum(["read", "write"]).optional(),
    retries: z.number().int().min(0).max(4).optional(),
    ...PolicyFields,
  })
  .refine((p) => p.retries === undefined || p.retries === 0 || p.effect === "read", {
    message: 'retries apply only to tools marked "effect": "read"',
    path: ["retries"],
  });

const ProxyConfigSchema = z.strictObject({
  allow: z.array(z.string().min(1)).optional(),
  deny: z.array(z.string().min(1)).optional(),
  defaults: z.strictObject(PolicyFields).optional(),
  tools: z.record(z.string().min(1), ToolPolicySchema).optional(),
  restart: z
    .strictObject({
      initialDelayMs: posInt(60_000).optional(),
      maxDelayMs: posInt(600_000).optional(),
    })
    // the defaults are createUpstream's: 200 ms first delay, 10 s cap
    .refine((r) => (r.initialDelayMs ?? 200) <= (r.maxDelayMs ?? 10_000), {
      message: "initialDelayMs must not exceed maxDelayMs (default 10,000)",
      path: ["initialDelayMs"],
    })
    .optional(),
  limits: z.strictObject({ maxBytes: posInt(2 ** 31).optional(), maxDepth: posInt(1000).optional() }).optional(),
});

/** One tool's policy. */
export type ToolPolicy = z.infer<typeof ToolPolicySchema>;
/** The proxy configuration. */
export type ProxyConfig = z.infer<typeof ProxyConfigSchema>;

/** The config problems named one by one; the rest are counted. */
const MAX_LISTED_ISSUES = 10;

/**
 * Check a configuration value. Throws {@link ToolgateConfigError} `E_PROXY_CONFIG` listing the first
 * 10 problems with their paths and counting the rest.
 * @example parseProxyConfig({ tools: { echo: { effect: "read", retries: 2 } } })
 */
export function parseProxyConfig(value: unknown, source = "config"): ProxyConfig {
  // zod's record drops a "__proto__" key without a word: refuse it instead of losing a policy.
  const tools = typeof value === "object" && value !== null ? (value as { tools?: unknown }).tools : undefined;
  if (typeof tools === "object" && tools !== null && Object.hasOwn(tools, "__proto__")) {
    throw new ToolgateConfigError("E_PROXY_CONFIG", `${source}.tools.__proto__: not a usable tool name`);
  }
  const r = ProxyConfigSchema.safeParse(value);
  if (r.success) return r.data;
  const lines = r.error.issues.slice(0, MAX_LISTED_ISSUES).map((i) => `${[source, ...i.path.map(String)].join(".")}: ${i.message}`);
  // Never cut silently: the problems past the first ones are counted.
  const more = r.error.issues.length - MAX_LISTED_ISSUES;
  throw new ToolgateConfigError("E_PROXY_CONFIG", lines.join("; ") + (more > 0 ? `; (+${more} more)` : ""));
}

/** Read and check a JSON configuration file. Throws `E_PROXY_CONFIG`. */
export async function loadProxyConfig(path: string): Promise<ProxyConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    throw new ToolgateConfigError("E_PROXY_CONFIG", `config file ${path}: ${code === "ENOENT" ? "not found" : `cannot be read (${String(code)})`}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new ToolgateConfigError("E_PROXY_CONFIG", `config file ${path} is not valid JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  return parseProxyConfig(doc, path);
}
