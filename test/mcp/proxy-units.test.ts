/** The proxy's building blocks: Ajv-backed Standard Schemas, pins, the token bucket, config checks. */
import { describe, expect, it } from "vitest";
import { ajvStandardSchema, createAjvCompilers, hashTool, parseProxyConfig, tokenBucket } from "../../src/mcp/index.js";

describe("ajvStandardSchema", () => {
  const ajv = createAjvCompilers();
  const schema = { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { a: { type: "array", prefixItems: [{ type: "string" }] } }, required: ["a"] };

  it("implements ~standard.validate and returns the source schema from ~standard.jsonSchema", () => {
    const c = ajv.compile(schema);
    if (!c.ok) throw new Error(c.reason);
    const s = ajvStandardSchema(schema, c.validate);
    expect(s["~standard"].version).toBe(1);
    expect(s["~standard"].jsonSchema.input({ target: "draft-2020-12" })).toEqual(schema);
    expect(s["~standard"].jsonSchema.output({ target: "draft-07" })).toEqual(schema);
    const value = { a: ["x"] };
    expect(s["~standard"].validate(value)).toEqual({ value });
    expect(s["~standard"].validate({ a: [1] })).toEqual({ issues: [{ code: "invalid_type", message: "must be string", path: ["a", "0"] }] });
    // the returned schema is a copy: callers cannot change what is enforced
    (s["~standard"].jsonSchema.input({ target: "draft-2020-12" }) as { type: string }).type = "string";
    expect(s["~standard"].jsonSchema.input({ target: "draft-2020-12" })).toEqual(schema);
  });

  it("picks the draft from $schema and reports schemas that do not compile", () => {
    expect(ajv.compile({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", items: [{ type: "string" }] }).ok).toBe(true);
    const bad = ajv.compile({ type: "object", properties: { a: { $ref: "https://example.com/remote.json" } } });
    expect(bad).toMatchObject({ ok: false, reason: expect.stringMatching(/resolve reference|can't resolve/i) });
  });
});

describe("hashTool", () => {
  it("is stable under key order and changes with the description or a schema", () => {
    const a = hashTool({ name: "t", description: "d", inputSchema: { type: "object", properties: { x: { type: "string", minLength: 1 } } } });
    const b = hashTool({ inputSchema: { properties: { x: { minLength: 1, type: "string" } }, type: "object" }, description: "d", name: "t" });
    expect(a).toBe(b);
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(hashTool({ name: "t", description: "d2", inputSchema: { type: "object", properties: { x: { type: "string", minLength: 1 } } } })).not.toBe(a);
    expect(hashTool({ name: "t", description: "d", inputSchema: { type: "object" }, outputSchema: { type: "object" } })).not.toBe(
      hashTool({ name: "t", description: "d", inputSchema: { type: "object" } }),
    );
  });
});

describe("tokenBucket", () => {
  it("allows a burst, then refills at the rate", () => {
    const b = tokenBucket({ perSecond: 2, burst: 2 });
    const t = Date.now();
    expect(b.take(t)).toBe(0);
    expect(b.take(t)).toBe(0);
    expect(b.take(t)).toBe(500);
    expect(b.take(t + 500)).toBe(0);
  });
});

describe("parseProxyConfig", () => {
  it("accepts a full config and refuses bad ones with paths", () => {
    expect(parseProxyConfig({ allow: ["a"], tools: { a: { effect: "read", retries: 4, timeoutMs: 10, concurrency: 1, rateLimit: { perSecond: 1 } } } })).toBeTruthy();
    expect(() => parseProxyConfig({ tools: { a: { retries: 1 } } })).toThrow(/config\.tools\.a\.retries: retries apply only to tools marked "effect": "read"/);
    expect(() => parseProxyConfig({ tools: { a: { effect: "read", retries: 9 } } })).toThrow(/config\.tools\.a\.retries/);
    expect(() => parseProxyConfig({ defaults: { effect: "read" } })).toThrow(/config\.defaults/);
    expect(() => parseProxyConfig([])).toThrow(/E_PROXY_CONFIG|expected object/);
  });

  it("refuses what it would otherwise lose or misread: a __proto__ tool key, a first restart delay above the cap", () => {
    expect(() => parseProxyConfig(JSON.parse('{"tools":{"__proto__":{"effect":"read"}}}'))).toThrow(/config\.tools\.__proto__: not a usable tool name/);
    expect(() => parseProxyConfig({ restart: { initialDelayMs: 5_000, maxDelayMs: 1_000 } })).toThrow(/config\.restart\.initialDelayMs: initialDelayMs must not exceed maxDelayMs/);
    expect(() => parseProxyConfig({ restart: { initialDelayMs: 20_000 } })).toThrow(/must not exceed maxDelayMs \(default 10,000\)/);
    expect(parseProxyConfig({ restart: { initialDelayMs: 20_000, maxDelayMs: 60_000 } })).toBeTruthy();
  });
});
