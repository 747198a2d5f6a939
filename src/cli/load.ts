/**
 * The shared module loader of the CLI (`serve`, `check`, …): import a user's module and turn its
 * default export into a gate. `.js`/`.mjs` load natively; `.ts`/`.mts`/`.tsx` load through tsx's
 * ESM API (`tsx/esm/api` `register`) when no TypeScript loader is active already.
 * Every way it can go wrong is a {@link CliError} with a stable code.
 * @module
 */
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { createGate, type Gate } from "../gate.js";
import { isTool, type AnyTool } from "../tool.js";
import { isToolgateConfigError } from "../errors.js";
import { CliError } from "./command.js";

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

function toGate(modulePath: string, exported: unknown): Gate {
  if (_isGate(exported)) return exported;
  if (Array.isArray(exported)) {
    if (exported.length === 0) throw new CliError("E_MODULE_NO_TOOLS", `${modulePath}: the default export is an empty array of tools`);
    const bad = exported.findIndex((t) => !isTool(t));
    if (bad !== -1) {
      throw new CliError("E_MODULE_TOOL", `${modulePath}: default export item ${bad} is not a defineTool(...) value`);
    }
    try {
      return createGate({ tools: exported as readonly AnyTool[] });
    } catch (e) {
      if (isToolgateConfigError(e)) throw new CliError("E_MODULE_TOOL", `${modulePath}: ${firstLine(e)}`);
      throw new CliError("E_MODULE_IMPORT", `${modulePath}: cannot build a gate: ${firstLine(e)}`);
    }
  }
  if (exported === undefined) {
    throw new CliError("E_MODULE_NO_TOOLS", `${modulePath} has no default export; export default a gate or an array of defineTool(...) values`);
  }
  throw new CliError(
    "E_MODULE_NO_TOOLS",
    `${modulePath}: the default export is neither a gate nor an array of defineTool(...) values`,
  );
}

/**
 * Load a module whose default export is a gate (`createGate(...)`) or an array of `defineTool(...)`
 * values, and return a gate. Relative paths resolve against the current directory.
 *
 * Throws {@link CliError} with one of these codes:
 * `E_MODULE_NOT_FOUND` (no such file), `E_MODULE_TS` (a `.ts` module and no tsx),
 * `E_MODULE_IMPORT` (the module threw or failed to import), `E_MODULE_NO_TOOLS` (no default export,
 * an empty array, or something else), `E_MODULE_TOOL` (a tool fails `defineTool`/`createGate`; the
 * message is the {@link ToolgateConfigError}'s).
 * @example
 * const gate = await loadGate("examples/orders/index.ts");
 * console.log(gate.list().map((t) => t.name));
 */
export async function loadGate(modulePath: string): Promise<Gate> {
  if (typeof modulePath !== "string" || modulePath.length === 0) {
    throw new CliError("E_USAGE", "expected a module path");
  }
  const abs = resolve(process.cwd(), modulePath);
  let isFile = false;
  try {
    isFile = (await stat(abs)).isFile();
  } catch {
    isFile = false;
  }
  if (!isFile) throw new CliError("E_MODULE_NOT_FOUND", `module not found: ${modulePath}`);
  const mod = await importModule(modulePath, pathToFileURL(abs).href);
  let exported: unknown = mod.default;
  // A CommonJS-compiled module seen through ESM interop: { default: { default: … } }.
  if (!_isGate(exported) && !Array.isArray(exported) && typeof exported === "object" && exported !== null && "default" in exported) {
    exported = (exported as { default: unknown }).default;
  }
  return toGate(modulePath, exported);
}
