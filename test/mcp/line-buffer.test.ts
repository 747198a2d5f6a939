import { describe, expect, it } from "vitest";
import { ReadBuffer } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { installLineBuffer, InvalidAnswerError } from "../../src/mcp/proxy/line-buffer.js";

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
