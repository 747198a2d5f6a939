import { describe, it, expect } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createGate } from "../../src/index.js";
import { createMcpServer } from "../../src/mcp/index.js";
import { createGateTelemetry, ATTR } from "../../src/otel/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";
import { memoryTracing } from "./_otel.js";

describe("spans for calls served over MCP", () => {
  it("one execute_tool span per tools/call, with the MCP request's call id; _meta never recorded", async () => {
    const t = memoryTracing();
    const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false });
    const gate = otel.instrument(createGate({ tools: makeOrderTools(createFakeOrders()), ...otel.hooks }));
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(gate, { name: "orders", version: "1.0.0" }).connect(a);
    const client = new Client({ name: "otel-test", version: "1.0.0" });
    await client.connect(b);
    await client.callTool({ name: "get_order", arguments: { customerId: "c_1" }, _meta: { secretish: "Bearer abcdefghijklmnopqrstuvwxyz" } });
    await client.callTool({ name: "get_order", arguments: { customerId: 5 } });
    await client.close();
    const spans = t.spans().filter((s) => s.name === "execute_tool get_order");
    expect(spans).toHaveLength(2);
    expect(spans.map((s) => s.attributes[ATTR.errorType])).toEqual([undefined, "INVALID_INPUT"]);
    expect(spans.map((s) => s.attributes[ATTR.callId])).toEqual(["1", "2"]); // the JSON-RPC request ids (initialize was 0)
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain("abcdefghijklmnop");
  });
});
