import { describe, expect, it } from "vitest";
import { ReadBuffer } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { installLineBuffer, installServerLineBuffer, InvalidAnswerError, TooDeepError } from "../../src/mcp/proxy/line-buffer.js";
import { nestsWithin } from "../../src/mcp/json-depth.js";

interface Reader {
  append(chunk: Buffer): void;
  readMessage(): unknown;
  clear(): void;
}

function reader(maxBytes = 1024): Reader {
  const t = { _readBuffer: new ReadBuffer() as unknown };
  expect(installLineBuffer(t, maxBytes)).toBe(true);
  expect(t._readBuffer).not.toBeInstanceOf(ReadBuffer);
  return t._readBuffer as Reader;
}

const line = (id: number) => `${JSON.stringify({ jsonrpc: "2.0", id, result: {} })}\n`;

describe("the proxy's stdio line reader", () => {
  it("reads one message per chunk, chunk after chunk", () => {
    const r = reader();
    for (let id = 1; id <= 3; id++) {
      r.append(Buffer.from(line(id)));
      expect(r.readMessage()).toEqual({ jsonrpc: "2.0", id, result: {} });
      expect(r.readMessage()).toBeNull();
    }
  });

  it("keeps what follows a line: two messages in one chunk, one split across chunks, CRLF", () => {
    const r = reader();
    const text = line(1) + line(2).replace("\n", "\r\n") + line(3);
    r.append(Buffer.from(text.slice(0, text.length - 10)));
    expect(r.readMessage()).toMatchObject({ id: 1 });
    expect(r.readMessage()).toMatchObject({ id: 2 });
    expect(r.readMessage()).toBeNull(); // the third is incomplete
    r.append(Buffer.from(text.slice(text.length - 10)));
    expect(r.readMessage()).toMatchObject({ id: 3 });
    expect(r.readMessage()).toBeNull();
  });

  it("counts the bytes it holds against the limit, and forgets them on clear", () => {
    const r = reader(64);
    r.append(Buffer.from("x".repeat(40)));
    expect(() => r.append(Buffer.from("y".repeat(40)))).toThrow(/exceeded maximum size of 64 bytes/);
    r.append(Buffer.from(line(7))); // the oversized part was dropped
    expect(r.readMessage()).toMatchObject({ id: 7 });
  });

  it("names the lane request an invalid answer was for; other invalid lines throw as the SDK's reader does", () => {
    const r = reader();
    r.append(Buffer.from(`${JSON.stringify({ jsonrpc: "2.0", id: "toolgate:9", result: 5 })}\n`));
    expect(() => r.readMessage()).toThrow(InvalidAnswerError);
    r.append(Buffer.from(`${JSON.stringify({ jsonrpc: "2.0", id: 9, result: 5 })}\n`));
    expect(() => r.readMessage()).toThrow();
    r.append(Buffer.from("not json\n"));
    expect(() => r.readMessage()).toThrow(SyntaxError);
    r.append(Buffer.from(line(10)));
    expect(r.readMessage()).toMatchObject({ id: 10 });
  });
});

describe("the stdio line reader on long and deep lines (client side and server side)", () => {
  function serverReader(maxBytes: number): Reader {
    const t = { _readBuffer: new ReadBuffer() as unknown };
    expect(installServerLineBuffer(t, maxBytes)).toBe(true);
    return t._readBuffer as Reader;
  }

  it("a line split over many chunks, then lines in one chunk: each read once, in order", () => {
    const r = serverReader(1024 * 1024);
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(100_000) } }) + "\n";
    for (let i = 0; i < big.length; i += 977) {
      r.append(Buffer.from(big.slice(i, i + 977)));
      if (i + 977 < big.length) expect(r.readMessage()).toBeNull();
    }
    expect(r.readMessage()).toMatchObject({ id: 1, method: "ping" });
    r.append(Buffer.from(line(2) + line(3)));
    expect([r.readMessage(), r.readMessage(), r.readMessage()]).toEqual([{ jsonrpc: "2.0", id: 2, result: {} }, { jsonrpc: "2.0", id: 3, result: {} }, null]);
  });

  it("a 32 MiB line in 64 KiB chunks reads in linear time (the SDK's reader re-joins and re-searches the whole buffer per chunk)", () => {
    const r = serverReader(40 * 1024 * 1024);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const t0 = performance.now();
    for (let i = 0; i < 512; i++) {
      r.append(chunk);
      expect(r.readMessage()).toBeNull();
    }
    r.append(Buffer.from(line(7)));
    expect(r.readMessage()).toEqual({ jsonrpc: "2.0", id: 7, result: {} });
    expect(performance.now() - t0).toBeLessThan(3_000); // quadratic: about 10 s here; linear: well under 1 s
  });

  it("80,000 chunks of 16 bytes before the newline: the held chunks are walked once, not once per chunk", () => {
    const r = serverReader(40 * 1024 * 1024);
    const chunk = Buffer.alloc(16, 0x20);
    const t0 = performance.now();
    for (let i = 0; i < 80_000; i++) {
      r.append(chunk);
      expect(r.readMessage()).toBeNull();
    }
    r.append(Buffer.from(line(8)));
    expect(r.readMessage()).toEqual({ jsonrpc: "2.0", id: 8, result: {} });
    expect(performance.now() - t0).toBeLessThan(2_000); // walking every held chunk per read: about 6 s here
  });

  it("a line nested deeper than MAX_MESSAGE_DEPTH is refused before it is parsed; the next line is read", () => {
    const r = serverReader(40 * 1024 * 1024);
    const deep = "[".repeat(2_000_000) + "]".repeat(2_000_000);
    r.append(Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":${deep}}}}\n`));
    expect(() => r.readMessage()).toThrow(TooDeepError);
    r.append(Buffer.from(line(2)));
    expect(r.readMessage()).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    expect(nestsWithin('{"a":"[[[[[[","b":[[1]]}', 3)).toBe(true); // brackets inside strings do not count
    expect(nestsWithin('{"a":"\\\\"}', 1)).toBe(true);
    expect(nestsWithin("[[[]]]", 2)).toBe(false);
  });
});
