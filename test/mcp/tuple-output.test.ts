/**
 * Tuple outputs over MCP: the SDK 1.x Client validates structuredContent with a draft-07 Ajv
 * whatever `$schema` says, so the advertised outputSchema must not carry a 2020-12 `items` beside
 * `prefixItems` (draft-07 reads it as every element's schema and refuses each valid tuple).
 */
import { createRequire } from "node:module";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { Ajv2020 } from "ajv/dist/2020.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createGate, defineTool } from "../../src/index.js";
import { createMcpServer, toMcpTool } from "../../src/mcp/index.js";
import { _CLIENT_FORMATS } from "../../src/mcp/listing.js";

const Output = z.object({
  pair: z.tuple([z.string(), z.number()]),
  rest: z.tuple([z.string()], z.number()),
  nested: z.array(z.object({ p: z.tuple([z.boolean()]) })),
});

const tool = defineTool({
  name: "shapes",
  version: "1",
  description: "tuples",
  input: z.object({}),
  output: Output,
  effect: "read",
  execute: () => ({ pair: ["a", 1] as [string, number], rest: ["b", 2, 3] as [string, ...number[]], nested: [{ p: [true] as [boolean] }] }),
});

async function connected(): Promise<Client> {
  const gate = createGate({ tools: [tool] });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await createMcpServer(gate, { name: "t", version: "1" }).connect(a);
  const client = new Client({ name: "c", version: "1" });
  await client.connect(b);
  return client;
}

describe("tuple outputs over MCP", () => {
  it("the SDK 1.x client accepts a valid tuple result", async () => {
    const client = await connected();
    await client.listTools(); // the client compiles each outputSchema here
    const res = await client.callTool({ name: "shapes", arguments: {} });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toEqual({ pair: ["a", 1], rest: ["b", 2, 3], nested: [{ p: [true] }] });
    await client.close();
  });

  it("a fixed tuple keeps its length bound; the element types stay in prefixItems", async () => {
    const client = await connected();
    const { tools } = await client.listTools();
    await client.close();
    const schema = tools[0]!.outputSchema as { properties: Record<string, Record<string, unknown>> };
    expect(schema.properties.pair).toEqual({ type: "array", prefixItems: [{ type: "string" }, { type: "number" }], minItems: 2, maxItems: 2 });
    expect(schema.properties.rest).not.toHaveProperty("items");
    const validate = new Ajv2020({ strict: false }).compile(schema);
    expect(validate({ pair: ["a", 1], rest: ["b"], nested: [] })).toBe(true);
    expect(validate({ pair: ["a", 1, 2], rest: ["b"], nested: [] })).toBe(false); // the same contract as items: false
    expect(validate({ pair: [1, "a"], rest: ["b"], nested: [] })).toBe(false);
    expect(validate({ pair: ["a", 1], rest: ["b"], nested: [{ p: [true, false] }] })).toBe(false);
  });

  it("rewrites subschemas only, never data under const, enum or default", () => {
    const data = { prefixItems: [1], items: false };
    const t = toMcpTool({
      name: "t",
      version: "1",
      description: "d",
      effect: "read",
      approval: false,
      inputSchema: { type: "object" },
      outputSchema: {
        type: "object",
        properties: { c: { const: data }, e: { enum: [data] }, d: { default: data } },
        $defs: { T: { type: "array", prefixItems: [{}], items: false, maxItems: 5 } },
        anyOf: [{ type: "object", properties: { u: { type: "array", prefixItems: [{}, {}], items: { type: "string" } } } }],
      },
    });
    const out = t.outputSchema as unknown as { properties: unknown; $defs: { T: unknown }; anyOf: { properties: { u: unknown } }[] };
    expect(out.properties).toEqual({ c: { const: data }, e: { enum: [data] }, d: { default: data } });
    expect(out.$defs.T).toEqual({ type: "array", prefixItems: [{}], maxItems: 1 });
    expect(out.anyOf[0]!.properties.u).toEqual({ type: "array", prefixItems: [{}, {}] });
  });
});

describe("formats in output schemas over MCP", () => {
  it("a format the SDK 1.x client does not know is left out (its pattern stays); no warning on tools/list", async () => {
    const tool = defineTool({
      name: "ids",
      version: "1",
      description: "formats",
      input: z.object({}),
      output: z.object({ e: z.email(), j: z.jwt(), c: z.cuid(), moji: z.string().emoji() }),
      effect: "read",
      execute: () => ({ e: "a@example.com", j: "x.y.z", c: "cjld2cjxh0000qzrmn831i7rn", moji: "🙂" }),
    });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(createGate({ tools: [tool] }), { name: "t", version: "1" }).connect(a);
    const client = new Client({ name: "c", version: "1" });
    await client.connect(b);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    try {
      const { tools } = await client.listTools();
      const props = (tools[0]!.outputSchema as { properties: Record<string, Record<string, unknown>> }).properties;
      expect(props.e).toMatchObject({ format: "email" });
      for (const k of ["j", "c", "moji"]) expect(props[k], k).not.toHaveProperty("format");
      expect(props.c).toHaveProperty("pattern");
      const said = [...warn.mock.calls, ...log.mock.calls].map((c) => c.join(" "));
      expect(said.filter((l) => /unknown format/.test(l))).toEqual([]);
    } finally {
      warn.mockRestore();
      log.mockRestore();
      await client.close();
    }
  });

  it("the formats kept are exactly the ones ajv-formats (the client's) knows", () => {
    const { fullFormats } = createRequire(import.meta.url)("ajv-formats/dist/formats") as { fullFormats: Record<string, unknown> };
    expect([..._CLIENT_FORMATS].sort()).toEqual(Object.keys(fullFormats).sort());
  });
});
