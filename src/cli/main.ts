#!/usr/bin/env node
/**
 * The `toolgate` CLI entry point: dispatches to one file per command. Usage problems print the
 * command's usage and a message (exit 2); nothing else reaches the user as a stack trace.
 * @module
 */
import { readFileSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CliError, importingNow } from "./command.js";
import { commands } from "./commands.js";

/** The usage of `toolgate` itself: each command with its one-line summary. */
async function overview(): Promise<string> {
  const names = Object.keys(commands).sort();
  const summaries = await Promise.all(
    names.map((n) =>
      commands[n]!().then(
        (m) => m.default.summary,
        () => "", // a command that cannot load still gets its name listed; running it reports why
      ),
    ),
  );
  const width = Math.max(...names.map((n) => n.length));
  const rows = names.map((n, i) => (summaries[i] === "" ? `  ${n}` : `  ${n.padEnd(width)}  ${summaries[i]!}`));
  return [
    "Usage: toolgate <command> [options]",
    "",
    "Commands:",
    ...rows,
    "",
    "Options:",
    "  -h, --help     this overview; `toolgate <command> --help` for a command's options",
    "  -v, --version  the toolgate version",
  ].join("\n");
}

/** This package's version: the `package.json` named toolgate above this file (src/cli in dev, dist/src/cli built). */
export function _version(): string {
  let dir = new URL(".", import.meta.url);
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(new URL("package.json", dir), "utf8")) as { name?: unknown; version?: unknown };
      if (pkg.name === "toolgate" && typeof pkg.version === "string") return pkg.version;
    } catch {
      // no package.json here: look one level up
    }
    dir = new URL("..", dir);
  }
  return "unknown";
}

/** Run the CLI with `argv` (without node and script). Returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write((await overview()) + "\n");
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-v") {
    process.stdout.write(_version() + "\n");
    return 0;
  }
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (load === undefined) {
    process.stderr.write(`toolgate: unknown command ${JSON.stringify(name)} (E_UNKNOWN_COMMAND)\n\n${await overview()}\n`);
    return 2;
  }
  const cmd = (await load()).default;
  // Only the CLI's own arguments: after "--" they belong to someone else (proxy's upstream command).
  const sep = rest.indexOf("--");
  const own = sep === -1 ? rest : rest.slice(0, sep);
  if (own.includes("--help") || own.includes("-h")) {
    process.stdout.write(cmd.usage + "\n");
    return 0;
  }
  try {
    return await cmd.run(rest);
  } catch (e) {
    if (e instanceof CliError) {
      process.stderr.write(`toolgate ${name}: ${e.message} (${e.code})\n\n${cmd.usage}\n`);
      return 2;
    }
    const msg = e instanceof Error ? e.message : String(e);
    process.stderr.write(`toolgate ${name}: unexpected error: ${msg}\n`);
    return 1;
  }
}

function isEntry(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}
/**
 * One-shot commands that load a user's module: once done they exit (after flushing what they
 * wrote), even when the module keeps the process alive (a timer, a pool opened on import).
 * `serve` and `proxy` end as Node does, when their own work is done: their call log file may
 * still be writing its last lines.
 */
const EXIT_WHEN_DONE: ReadonlySet<string> = new Set(["check", "ledger"]);

/** The command is done: exit once what it wrote is flushed. */
function exitWhenFlushed(code: number): void {
  process.exitCode = code;
  let waiting = 2;
  const flushed = (): void => {
    if (--waiting === 0) process.exit(code);
  };
  process.stdout.write("", flushed);
  process.stderr.write("", flushed);
}

/**
 * The process ran out of work while the command had not finished: nothing will ever finish it.
 * Said, with a nonzero exit, rather than Node's silent exit 0 (a CI job would pass unchecked).
 */
function stalled(): void {
  const command = process.argv[2] ?? "";
  const module = importingNow();
  const why =
    module !== undefined
      ? `cannot load ${module}: its import never finished (a top-level await that never settles?) (E_MODULE_IMPORT)`
      : "stopped before it finished: nothing was left to wait for (E_STALLED)";
  process.stderr.write(`toolgate ${command}: ${why}\n`);
  process.exitCode = module !== undefined ? 2 : 1;
}

if (isEntry()) {
  process.once("beforeExit", stalled);
  main(process.argv.slice(2)).then(
    (code) => {
      process.off("beforeExit", stalled);
      if (EXIT_WHEN_DONE.has(process.argv[2] ?? "")) exitWhenFlushed(code);
      else process.exitCode = code;
    },
    (e: unknown) => {
      process.off("beforeExit", stalled);
      process.stderr.write(`toolgate: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
