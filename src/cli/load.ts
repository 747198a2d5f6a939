/**
 * The shared module loader of the CLI (`serve`, `check`, …): import a user's module and turn its
 * default export into a gate. `.js`/`.mjs` load natively; `.ts`/`.mts`/`.tsx` load through tsx's
 * ESM API (`tsx/esm/api` `register`) when no TypeScript loader is active already.
 * Every way it can go wrong is a {@link CliError} with a stable code.
 * @module
 */
import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { createGate, type Gate } from "../gate.js";
import { isTool, type AnyTool } from "../tool.js";
import { advertisedInput, type ToolListing } from "../json-schema.js";
import { isToolgateConfigError } from "../errors.js";
import type { HookSet } from "../log/compose.js";
import { CliError, markImporting } from "./command.js";

/** Extensions loaded through tsx when Node cannot load them itself. */
const TS_EXTENSIONS = /\.(?:ts|mts|cts|tsx)$/i;

let tsxRegistered = false;

/** True when `v` looks like a gate (from this or another copy of toolgate). */
export function _isGate(v: unknown): v is Gate {
  if (typeof v !== "object" || v === null) return false;
  const g = v as Record<string, unknown>;
  return typeof g.call === "function" && typeof g.list === "function" && typeof g.tool === "function";
}

/** esbuild's (tsx's) "Transform failed with N error(s):" and, on the next line, the first one. */
const TRANSFORM_FAILED = /^Transform failed with (\d+) errors?:\n(.+?): ERROR: (.+)$/m;

function firstLine(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  const esbuild = TRANSFORM_FAILED.exec(msg);
  // A TypeScript syntax error: the first line alone drops where it is.
  const line = esbuild !== null ? `${esbuild[2]!}: ${esbuild[3]!}${Number(esbuild[1]) > 1 ? ` (and ${Number(esbuild[1]) - 1} more errors)` : ""}` : (msg.split("\n", 1)[0] ?? "");
  return line.length > 300 ? line.slice(0, 300) + "…" : line;
}

function errCode(e: unknown): unknown {
  return typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined;
}

async function registerTsx(modulePath: string): Promise<void> {
  if (tsxRegistered) return;
  let api: { register: () => unknown };
  try {
    api = (await import("tsx/esm/api")) as { register: () => unknown };
  } catch {
    throw new CliError(
      "E_MODULE_TS",
      `cannot load ${modulePath}: TypeScript modules need tsx (npm install -D tsx), or compile it to .js first`,
    );
  }
  api.register();
  tsxRegistered = true;
}

async function importModule(modulePath: string, url: string): Promise<Record<string, unknown>> {
  markImporting(modulePath);
  try {
    return await importModuleOnce(modulePath, url);
  } finally {
    markImporting(undefined);
  }
}

async function importModuleOnce(modulePath: string, url: string): Promise<Record<string, unknown>> {
  const fail = (e: unknown): never => {
    if (e instanceof CliError) throw e;
    if (isToolgateConfigError(e)) {
      throw new CliError("E_MODULE_TOOL", `${modulePath}: a tool definition is invalid: ${firstLine(e)}`);
    }
    throw new CliError("E_MODULE_IMPORT", `cannot import ${modulePath}: ${firstLine(e)}`);
  };
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (e) {
    if (!(errCode(e) === "ERR_UNKNOWN_FILE_EXTENSION" && TS_EXTENSIONS.test(modulePath))) return fail(e);
  }
  // No TypeScript loader active: register tsx, then import again under a fresh URL (Node caches the failure).
  await registerTsx(modulePath);
  try {
    return (await import(`${url}?toolgate-tsx=1`)) as Record<string, unknown>;
  } catch (e) {
    return fail(e);
  }
}

/** What `toGate` adds to a gate it builds itself (a module exporting tools). */
export interface LoadOptions {
  /**
   * Observation hooks for the gate built from an array of tools (a call log's or OpenTelemetry's
   * `hooks`). A module exporting a ready gate keeps the hooks it was built with. Default: none.
   */
  readonly hooks?: HookSet;
}

/** The default export as an array of tools: not empty, each a `defineTool(...)` value. */
function toolArray(modulePath: string, exported: readonly unknown[]): readonly AnyTool[] {
  if (exported.length === 0) throw new CliError("E_MODULE_NO_TOOLS", `${modulePath}: the default export is an empty array of tools`);
  const bad = exported.findIndex((t) => !isTool(t));
  if (bad !== -1) {
    throw new CliError("E_MODULE_TOOL", `${modulePath}: default export item ${bad} is not a defineTool(...) value`);
  }
  return exported as readonly AnyTool[];
}

function buildGate(modulePath: string, tools: readonly AnyTool[], options: LoadOptions): Gate {
  try {
    return createGate({ tools, ...options.hooks });
  } catch (e) {
    if (isToolgateConfigError(e)) throw new CliError("E_MODULE_TOOL", `${modulePath}: ${firstLine(e)}`);
    throw new CliError("E_MODULE_IMPORT", `${modulePath}: cannot build a gate: ${firstLine(e)}`);
  }
}

function toGate(modulePath: string, exported: unknown, options: LoadOptions): Gate {
  if (_isGate(exported)) return exported;
  if (Array.isArray(exported)) return buildGate(modulePath, toolArray(modulePath, exported), options);
  if (exported === undefined) {
    throw new CliError("E_MODULE_NO_TOOLS", `${modulePath} has no default export; export default a gate or an array of defineTool(...) values`);
  }
  if (isTool(exported)) {
    throw new CliError("E_MODULE_NO_TOOLS", `${modulePath}: the default export is a single tool (${JSON.stringify(exported.name)}), not an array; wrap it in [ ]`);
  }
  throw new CliError(
    "E_MODULE_NO_TOOLS",
    `${modulePath}: the default export is neither a gate nor an array of defineTool(...) values`,
  );
}

const MODULE_EXTENSIONS = [".ts", ".mts", ".js", ".mjs"] as const;

async function kind(abs: string): Promise<"file" | "directory" | undefined> {
  try {
    const s = await stat(abs);
    return s.isFile() ? "file" : s.isDirectory() ? "directory" : undefined;
  } catch {
    return undefined;
  }
}

/** The first of `candidates` (paths as the user spelled them) that is a file. */
async function firstFile(candidates: readonly string[]): Promise<string | undefined> {
  for (const c of candidates) if ((await kind(resolve(process.cwd(), c))) === "file") return c;
  return undefined;
}

/** Not a file: say what is there instead (a directory, the same name with an extension). */
async function notAFile(modulePath: string, abs: string): Promise<CliError> {
  if ((await kind(abs)) === "directory") {
    const index = await firstFile(MODULE_EXTENSIONS.map((e) => join(modulePath, `index${e}`)));
    return new CliError("E_MODULE_NOT_FOUND", `${modulePath} is a directory; name the module file${index !== undefined ? `, e.g. ${index}` : ""}`);
  }
  const withExt = await firstFile(MODULE_EXTENSIONS.map((e) => modulePath + e));
  return new CliError("E_MODULE_NOT_FOUND", `module not found: ${modulePath}${withExt !== undefined ? `; did you mean ${withExt}?` : ""}`);
}

/**
 * Load a module whose default export is a gate (`createGate(...)`) or an array of `defineTool(...)`
 * values, and return a gate. Relative paths resolve against the current directory. `options.hooks`
 * go into the gate built from an array of tools; a ready gate is returned as it is.
 *
 * Throws {@link CliError} with one of these codes:
 * `E_MODULE_NOT_FOUND` (no such file; a directory or a path missing its extension says so), `E_MODULE_TS` (a `.ts` module and no tsx),
 * `E_MODULE_IMPORT` (the module threw or failed to import), `E_MODULE_NO_TOOLS` (no default export,
 * an empty array, a single tool (wrap it in `[ ]`), or something else), `E_MODULE_TOOL` (a tool fails `defineTool`/`createGate`; the
 * message is the {@link ToolgateConfigError}'s).
 * @example
 * const gate = await loadGate("examples/orders/index.ts");
 * console.log(gate.list().map((t) => t.name));
 */
export async function loadGate(modulePath: string, options: LoadOptions = {}): Promise<Gate> {
  return toGate(modulePath, await loadExport(modulePath), options);
}

/** What {@link loadTools} returns. */
export interface LoadedTools {
  /** Every tool of the module, in its order (a gate's: in `gate.list()` order). */
  readonly tools: readonly AnyTool[];
  /** The listings of the tools a gate serves: all of them but those whose input cannot be represented. */
  readonly listings: readonly ToolListing[];
}

/**
 * For `toolgate check`: load a module as {@link loadGate} does, but keep a tool whose input cannot
 * be represented as JSON Schema (`z.date()`, a plain valibot schema) among the tools instead of
 * refusing the module (`createGate` would): the check reports it per target. Its listing is left
 * out, as no gate can serve it. Throws what {@link loadGate} throws otherwise (two tools with one
 * name, an advertised schema that does not compile: `E_MODULE_TOOL`).
 * @example
 * const { tools, listings } = await loadTools("examples/orders/index.ts");
 */
export async function loadTools(modulePath: string): Promise<LoadedTools> {
  const exported = await loadExport(modulePath);
  if (!Array.isArray(exported)) {
    const gate = toGate(modulePath, exported, {});
    return { tools: gate.list().map((l) => gate.tool(l.name)).filter((t): t is AnyTool => t !== undefined), listings: gate.list() };
  }
  const tools = toolArray(modulePath, exported);
  const names = new Set<string>();
  for (const t of tools) {
    if (names.has(t.name)) throw new CliError("E_MODULE_TOOL", `${modulePath}: two tools are named ${JSON.stringify(t.name)}`);
    names.add(t.name);
  }
  const served = tools.filter((t) => advertisedInput(t).ok);
  return { tools, listings: served.length === 0 ? [] : buildGate(modulePath, served, {}).list() };
}

/** Import the module and return its default export (a CommonJS module's seen through ESM interop). */
async function loadExport(modulePath: string): Promise<unknown> {
  if (typeof modulePath !== "string" || modulePath.length === 0) {
    throw new CliError("E_USAGE", "expected a module path");
  }
  const abs = resolve(process.cwd(), modulePath);
  if ((await kind(abs)) !== "file") throw await notAFile(modulePath, abs);
  const mod = await importModule(modulePath, pathToFileURL(abs).href);
  const exported: unknown = mod.default;
  // A CommonJS-compiled module seen through ESM interop: { default: { default: … } }.
  if (!_isGate(exported) && !Array.isArray(exported) && typeof exported === "object" && exported !== null && "default" in exported) {
    return (exported as { default: unknown }).default;
  }
  return exported;
}
