import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool, isToolgateConfigError, type ToolDefinition } from "../../src/index.js";

const ok = {
  name: "t",
  version: "1",
  description: "d",
  input: z.object({}),
  output: z.object({}),
  effect: "read",
  execute: () => ({}),
} as const;

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return isToolgateConfigError(e) ? e.code : "not a config error";
  }
  return undefined;
}

describe("misuse is a clear configuration error, thrown at definition time", () => {
  it.each<[string, Partial<Record<keyof ToolDefinition, unknown>>, string]>([
    ["bad name", { name: "has space" }, "E_TOOL_NAME"],
    ["long name", { name: "x".repeat(65) }, "E_TOOL_NAME"],
    ["no version", { version: "" }, "E_TOOL_VERSION"],
    ["no description", { description: "" }, "E_TOOL_DESCRIPTION"],
    ["input not a schema", { input: { type: "object" } }, "E_TOOL_SCHEMA"],
    ["bad effect", { effect: "delete" }, "E_TOOL_EFFECT"],
    ["no execute", { execute: undefined }, "E_TOOL_EXECUTE"],
    ["timeout 0", { timeoutMs: 0 }, "E_TOOL_TIMEOUT"],
    ["retry 9", { retry: { attempts: 9 } }, "E_TOOL_RETRY"],
    ["unknownKeys", { unknownKeys: "allow" }, "E_TOOL_UNKNOWN_KEYS"],
    ["concurrency", { concurrency: 0 }, "E_TOOL_CONCURRENCY"],
    ["approval", { approval: "yes" }, "E_TOOL_APPROVAL"],
    ["classify", { classify: 1 }, "E_TOOL_HOOK"],
  ])("%s", (_label, patch, code) => {
    expect(codeOf(() => defineTool({ ...ok, ...patch } as never))).toBe(code);
  });

  it("createGate: empty, duplicates, raw objects, bad options", () => {
    expect(codeOf(() => createGate({ tools: [] }))).toBe("E_GATE_TOOLS");
    expect(codeOf(() => createGate({ tools: [ok as never] }))).toBe("E_GATE_TOOLS");
    const t = defineTool(ok);
    expect(codeOf(() => createGate({ tools: [t, t] }))).toBe("E_GATE_DUPLICATE");
    expect(codeOf(() => createGate({ tools: [t], timeoutMs: -1 }))).toBe("E_GATE_TIMEOUT");
    expect(codeOf(() => createGate({ tools: [t], onCall: "x" as never }))).toBe("E_GATE_HOOK");
    expect(codeOf(() => createGate({ tools: [t], retry: { budget: { ratio: 2 } } }))).toBe("E_GATE_RETRY");
    // retry: false is a per-tool option; on the gate it would have been ignored (3 attempts).
    expect(codeOf(() => createGate({ tools: [t], retry: false as never }))).toBe("E_GATE_RETRY");
    expect(codeOf(() => createGate({ tools: [t], breaker: true as never }))).toBe("E_GATE_BREAKER");
  });

  it("an option key nobody knows is refused, naming the nearest known one (a typo would have been ignored)", () => {
    const t = defineTool(ok);
    const message = (f: () => unknown): string => {
      try {
        f();
      } catch (e) {
        return isToolgateConfigError(e) ? `${e.code}: ${e.message}` : "not a config error";
      }
      return "no error";
    };
    expect(message(() => createGate({ tools: [t], timeout: 5 } as never))).toMatch(/^E_GATE_OPTIONS: createGate: unknown option timeout \(did you mean timeoutMs\?\); known: tools, /);
    expect(message(() => defineTool({ ...ok, retries: 2 } as never))).toMatch(/^E_TOOL_OPTIONS: defineTool\("t"\): unknown option retries \(did you mean retry\?\)/);
    expect(message(() => defineTool({ ...ok, retry: { attempt: 1 } } as never))).toMatch(/E_TOOL_RETRY: .*unknown option retry\.attempt \(did you mean retry\.attempts\?\)/);
    expect(message(() => createGate({ tools: [t], retry: { budget: { ratoi: 0.5 } } } as never))).toMatch(/E_GATE_RETRY: .*retry\.budget\.ratoi \(did you mean retry\.budget\.ratio\?\)/);
    expect(message(() => createGate({ tools: [t], limits: { maxByte: 10 } } as never))).toMatch(/E_GATE_LIMITS: .*limits\.maxByte \(did you mean limits\.maxBytes\?\)/);
    expect(message(() => createGate({ tools: [t], breaker: { treshold: 3 } } as never))).toMatch(/E_GATE_BREAKER: .*breaker\.treshold \(did you mean breaker\.threshold\?\)/);
    expect(message(() => createGate({ tools: [t], redact: { pattern: [] } } as never))).toMatch(/E_GATE_REDACT: .*redact\.pattern \(did you mean redact\.patterns\?\)/);
    expect(message(() => createGate({ tools: [t], zzz: 1 } as never))).toMatch(/unknown option zzz; known:/); // nothing close: no guess
    // A class instance: its methods live on the prototype, and the frozen copy would lose execute.
    class Def {
      name = "c";
      version = "1";
      description = "d";
      input = z.object({});
      output = z.object({});
      effect = "read" as const;
      execute(): Record<string, never> {
        return {};
      }
    }
    expect(message(() => defineTool(new Def()))).toMatch(/^E_TOOL: defineTool: expected a plain object \(own keys only\)/);
    expect(message(() => defineTool(Object.assign(Object.create({ effect: "read" }) as object, { ...ok, effect: undefined }) as never))).toMatch(/^E_TOOL: /);
    expect(() => defineTool(Object.assign(Object.create(null) as object, ok) as never)).not.toThrow();
    expect(() => defineTool(Object.assign(runInNewContext("({})") as object, ok) as never)).not.toThrow(); // a plain object from a vm context
    // Every documented key is accepted; a defined tool can be spread into a new definition.
    expect(() => defineTool({ ...t, name: "t2" })).not.toThrow();
    expect(() => createGate({ tools: [t], limits: {}, retry: { attempts: 1, baseMs: 0, capMs: 0, budget: { ratio: 0.1, reserve: 1 } }, breaker: { threshold: 1, halfOpenAfterMs: 0 }, redact: { patterns: [], replacement: "x", replaceDefaults: false }, timeoutMs: 1, concurrency: 1, random: Math.random })).not.toThrow();
  });

  it("an input schema that JSON Schema cannot represent is refused with the reason", () => {
    const t = defineTool({ ...ok, input: z.object({ when: z.date() }) });
    expect(() => createGate({ tools: [t] })).toThrow(/input schema cannot be represented/);
  });

  it("an unrepresentable output schema is listed with its reason, not as {}", () => {
    const t = defineTool({ ...ok, output: z.object({ at: z.string().transform((s) => new Date(s)) }), execute: () => ({ at: "2026-01-01" }) });
    const [listing] = createGate({ tools: [t] }).list();
    expect(listing?.outputSchema).toBeUndefined();
    expect(listing?.outputSchemaError).toMatch(/./);
  });

  it("listings are frozen all the way down: editing gate.list() changes neither what is advertised nor what is enforced", async () => {
    const t = defineTool({ ...ok, input: z.object({ a: z.string() }), output: z.object({ token: z.string().meta({ secret: true }) }), execute: () => ({ token: "t" }) });
    const gate = createGate({ tools: [t] });
    const [listing] = gate.list();
    const props = listing!.inputSchema.properties as Record<string, unknown>;
    expect(() => (props.b = { type: "string" })).toThrow(TypeError);
    expect(() => ((props.a as { type: string }).type = "number")).toThrow(TypeError);
    expect(() => delete (listing!.outputSchema!.properties as Record<string, unknown>).token).toThrow(TypeError);
    expect(gate.list()[0]!.inputSchema.properties).toEqual({ a: { type: "string" } });
    expect(await gate.call("t", { a: "x", b: "y" })).toMatchObject({ ok: false, code: "INVALID_INPUT" });
  });

  it("the listing keeps its own copy: a schema library's cached JSON Schema is not frozen under it", () => {
    const cached = { type: "object", properties: { a: { type: "string", enum: ["x", "y"] } }, required: ["a"], additionalProperties: false };
    const input = z.object({ a: z.enum(["x", "y"]) });
    const own = {
      "~standard": { ...input["~standard"], jsonSchema: { input: () => cached, output: () => cached } },
    } as unknown as typeof input;
    const gate = createGate({ tools: [defineTool({ ...ok, input: own })] });
    expect(gate.list()[0]!.inputSchema).toEqual(cached);
    expect(gate.list()[0]!.inputSchema).not.toBe(cached);
    // every level, leaves included (closing the objects copies only the objects it closes)
    expect([cached, cached.properties, cached.properties.a, cached.properties.a.enum, cached.required].map((o) => Object.isFrozen(o))).toEqual([false, false, false, false, false]);
  });
});
