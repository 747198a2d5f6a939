/** What the proxy's log and start-up errors say about an HTTP upstream: never its query string, credentials or response bodies. */
import { describe, expect, it } from "vitest";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { _sessionLost, describe as describeUpstream } from "../../src/mcp/proxy/upstream.js";
import { errorText } from "../../src/mcp/proxy/error-text.js";
import { createProxy } from "../../src/mcp/index.js";

describe("the proxy's diagnostics about an HTTP upstream", () => {
  it("name the URL without its query, fragment or credentials", () => {
    expect(describeUpstream({ kind: "http", url: new URL("https://user:pw@mcp.example.com:8443/v1/mcp?api_key=sk-live-123#x") })).toBe("https://mcp.example.com:8443/v1/mcp");
    expect(describeUpstream({ kind: "stdio", command: "node", args: ["server.js"] })).toBe("node");
  });

  it("give an HTTP error's kind and status, never the body the SDK appends", () => {
    const body = '{"jsonrpc":"2.0","id":"toolgate:1","method":"tools/call","params":{"arguments":{"card":"4111 1111 1111 1111"}}}';
    expect(errorText(new StreamableHTTPError(400, `Error POSTing to endpoint: bad request: ${body}`))).toBe("Error POSTing to endpoint (HTTP 400)");
    expect(errorText(new StreamableHTTPError(-1, "Unexpected content type: text/html"))).toBe("Unexpected content type");
    expect(errorText(new Error("first line\nsecond"))).toBe("first line");
  });

  it("strip credentials and query strings from URLs inside any error's text (fetch and Node quote the URL)", async () => {
    expect(errorText(new TypeError("Request cannot be constructed from a URL that includes credentials: http://user:s3cretpw@127.0.0.1:1/mcp?api_key=QKEY123"))).toBe(
      "Request cannot be constructed from a URL that includes credentials: http://127.0.0.1:1/mcp?…",
    );
    expect(errorText(new Error("GET HTTPS://u@h.example/p#f failed"))).toBe("GET HTTPS://h.example/p failed");
    // The library, given such a URL: its start-up error never holds the password or the key.
    const err = await createProxy({ upstream: { kind: "http", url: new URL("http://user:s3cretpw@127.0.0.1:9/mcp?api_key=QKEY123") }, startAttempts: 1, connectTimeoutMs: 2_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).not.toMatch(/s3cretpw|QKEY123/);
  });

  it("a start-up failure names the upstream without the API key in its query string", async () => {
    // Port 9 (discard) on loopback: nothing listens, so every attempt fails fast.
    const err = await createProxy({ upstream: { kind: "http", url: new URL("http://127.0.0.1:9/mcp?api_key=sk-live-123") }, startAttempts: 1, connectTimeoutMs: 2_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/^upstream http:\/\/127\.0\.0\.1:9\/mcp did not start/);
    expect((err as Error).message).not.toMatch(/api_key|sk-live/);
  });

  it("a lost HTTP session is 404 or 400 to a POST (server-everything answers 400), never a GET's 404 or another status", () => {
    expect(_sessionLost(new StreamableHTTPError(404, "Error POSTing to endpoint: Session not found"))).toBe(true);
    expect(_sessionLost(new StreamableHTTPError(400, "Error POSTing to endpoint: Bad Request: No valid session ID provided"))).toBe(true);
    expect(_sessionLost(new StreamableHTTPError(404, "Failed to open SSE stream: Not Found"))).toBe(false);
    expect(_sessionLost(new StreamableHTTPError(500, "Error POSTing to endpoint: boom"))).toBe(false);
    expect(_sessionLost(new TypeError("fetch failed"))).toBe(true);
  });
});
