import { parseArgs, type ParseArgsConfig } from "node:util";

/**
 * What every CLI command module provides, and the one error class commands throw for usage
 * problems (the entry point prints usage plus the message, exit code 2).
 * @module
 */

/** A CLI command. `run` returns the process exit code. */
export interface Command {
  /** One line for `toolgate --help`. */
  readonly summary: string;
  /** Full usage text for `toolgate <command> --help`. */
  readonly usage: string;
  run(argv: readonly string[]): Promise<number>;
}

/** A usage error: bad flags, missing arguments, a module that cannot be loaded. Exit code 2. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    /** Stable code, e.g. `E_USAGE`, `E_MODULE_NOT_FOUND`. */
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * `node:util` `parseArgs`, with its errors (unknown flag, missing value) turned into `CliError`
 * `E_USAGE`, so every command reports them the same way.
 * @example const { values, positionals } = parseFlags({ args: [...argv], allowPositionals: true, options: { json: { type: "boolean" } } });
 */
export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (e) {
    throw new CliError("E_USAGE", e instanceof Error ? e.message : String(e));
  }
}

let importing: string | undefined;

/**
 * The user module being imported right now, if any: the entry point names it when the process
 * runs out of work before the command finished (a top-level `await` that never settles).
 */
export function importingNow(): string | undefined {
  return importing;
}

/** Mark the import of `modulePath` as under way (`undefined`: finished). */
export function markImporting(modulePath: string | undefined): void {
  importing = modulePath;
}
