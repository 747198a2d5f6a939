/**
 * A ledger's database driver, loaded on first use. better-sqlite3 and pg are optional peer
 * dependencies: importing `toolgate`, `toolgate/ledger` or starting the CLI must work without
 * them (better-sqlite3 is a native build many users never need), so only the factory of a store
 * that needs one loads it. Both are CommonJS, so `require` loads them synchronously and the
 * factories stay synchronous.
 * @module
 */
import { createRequire } from "node:module";
import { ToolgateConfigError } from "../errors.js";

// Resolved from toolgate's own files, as a static import would be: a peer is found in the
// application's node_modules.
const requireHere = createRequire(import.meta.url);

/** Drivers loaded (and probed) already, by package name. */
const loaded = new Map<string, unknown>();

/** Whether `name` resolves: false only when no such package is there (any other resolve failure means it is, but broken). */
function installed(name: string): boolean {
  try {
    requireHere.resolve(name);
    return true;
  } catch (e) {
    return (e as { code?: unknown } | null)?.code !== "MODULE_NOT_FOUND";
  }
}

/**
 * @internal Load the CommonJS driver `name` for the store `user` (the error names both), once.
 * `probe` runs on the first load, for what `require` alone does not show (better-sqlite3 loads its
 * native addon on the first open). Throws {@link ToolgateConfigError} `E_LEDGER_DRIVER`: "not
 * installed" with the install command when the package is absent; "could not be loaded", with the
 * error as `cause`, when it is there but fails (a native build for another Node, a broken install).
 */
export function _loadDriver<T>(name: string, user: string, probe?: (driver: T) => void): T {
  if (loaded.has(name)) return loaded.get(name) as T;
  let driver: T;
  try {
    driver = requireHere(name) as T;
    probe?.(driver);
  } catch (e) {
    if (!installed(name)) {
      throw new ToolgateConfigError(
        "E_LEDGER_DRIVER",
        `${user} needs the package ${name} (an optional peer dependency of toolgate), which is not installed: npm install ${name}`,
        { cause: e },
      );
    }
    const why = e instanceof Error ? (e.message.split("\n")[0] ?? "") : String(e);
    throw new ToolgateConfigError("E_LEDGER_DRIVER", `${user}: the package ${name} is installed but could not be loaded: ${why}`, { cause: e });
  }
  loaded.set(name, driver);
  return driver;
}
