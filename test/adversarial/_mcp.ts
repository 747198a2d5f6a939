/** A raw Streamable HTTP MCP session: adversarial bodies go over the wire as text, not through a client's encoder. */

export interface RawReply {
  readonly status: number;
  /** The JSON-RPC message answering the request (parsed from JSON or from the SSE stream). */
  readonly message: Record<string, unknown> | undefined;
}

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

function parseReply(text: string): Record<string, unknown> | undefined {
  const t = text.trim();
  if (t.startsWith("{")) return JSON.parse(t) as Record<string, unknown>;
  const data = t
    .split("\n")
    .filter((l) => l.startsWith("data:"))
    .map((l) => l.slice(5).trim())
    .join("");
  return data.length > 0 ? (JSON.parse(data) as Record<string, unknown>) : undefined;
}

/** Open a session: initialize, then the initialized notification. */
export async function rawSession(url: URL): Promise<{ post(body: string): Promise<RawReply>; call(name: string, argumentsText: string): Promise<RawReply> }> {
  const init = await fetch(url, {
    method: "POST",
    headers: HEADERS,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "adversary", version: "1" } },
    }),
  });
  const sessionId = init.headers.get("mcp-session-id");
  await init.text();
  if (sessionId === null) throw new Error(`no session (${init.status})`);
  const headers = { ...HEADERS, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" };
  await (await fetch(url, { method: "POST", headers, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })).text();
  let id = 1;
  const post = async (body: string): Promise<RawReply> => {
    const res = await fetch(url, { method: "POST", headers, body });
    const text = await res.text();
    let message: Record<string, unknown> | undefined;
    try {
      message = parseReply(text);
    } catch {
      message = undefined;
    }
    return { status: res.status, message };
  };
  return {
    post,
    call: (name, argumentsText) => post(`{"jsonrpc":"2.0","id":${id++},"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${argumentsText}}}`),
  };
}

/** Adversarial `arguments` as JSON text on the wire (JSON-RPC bodies are JSON: no functions or cycles here). */
export const WIRE: { name: string; tool: string; args: () => string; codes: readonly string[] }[] = [
  { name: "depth 5,000 arrays", tool: "get_order", args: () => `{"customerId":${"[".repeat(5_000)}${"]".repeat(5_000)}}`, codes: ["too_deep"] },
  { name: "depth 20,000 objects", tool: "get_order", args: () => `{"customerId":${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}}`, codes: ["too_deep"] },
  { name: "10^6-element array (2 MB)", tool: "get_order", args: () => `{"customerId":"c_1","a":[${new Array(1_000_000).fill("0").join(",")}]}`, codes: ["too_large"] },
  { name: "3 MB string", tool: "get_order", args: () => `{"customerId":"${"x".repeat(3 * 1024 * 1024)}"}`, codes: ["too_large"] },
  { name: "__proto__ at the top", tool: "get_order", args: () => '{"customerId":"c_1","__proto__":{"polluted":true}}', codes: ["forbidden_key"] },
  { name: "__proto__ deep", tool: "create_refund", args: () => '{"orderId":"o_100","amountCents":1,"x":[{"__proto__":{"polluted":true}}]}', codes: ["forbidden_key"] },
  { name: "__proto__ inside a record", tool: "tag", args: () => '{"tags":{"a":"1","__proto__":{"polluted":"yes"}}}', codes: ["forbidden_key"] },
  { name: "constructor.prototype inside a record", tool: "tag", args: () => '{"tags":{"constructor":{"prototype":{"polluted":"yes"}}}}', codes: ["forbidden_key"] },
  { name: "lone surrogate", tool: "get_order", args: () => '{"customerId":"\\ud800"}', codes: ["lone_surrogate"] },
  { name: "integer beyond 2^53", tool: "create_refund", args: () => '{"orderId":"o_100","amountCents":9007199254740993}', codes: ["unsafe_integer"] },
];

