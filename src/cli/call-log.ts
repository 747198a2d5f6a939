/**
 * `--log <where>` of `toolgate serve` and `toolgate proxy`: one JSON line per call (the call log,
 * `createCallLog`), to stdout, stderr or a file.
 * @module
 */
import { createWriteStream, openSync } from "node:fs";
import type { Writable } from "node:stream";
import { CliError } from "./command.js";
import { createCallLog, jsonLineSink, type GateObserver } from "../log/index.js";

/**
 * Where `--log` writes: stdout, stderr or a file opened now (synchronously, so a bad path is a
 * usage error before anything is served), or `undefined` for off. Never stdout on stdio.
 */
export function openCallLog(where: string | undefined, stdio: boolean): Writable | undefined {
  const target = where ?? (stdio ? "stderr" : "stdout");
  if (target === "off") return undefined;
  if (target === "") throw new CliError("E_USAGE", "--log expects stdout, stderr, off or a file path");
  if (target === "stdout" && stdio) throw new CliError("E_USAGE", "--log stdout would corrupt the stdio protocol; use stderr, off or a file");
  if (target === "stdout") return process.stdout;
  if (target === "stderr") return process.stderr;
  let fd: number;
  try {
    fd = openSync(target, "a");
  } catch (e) {
    const code = typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined;
    throw new CliError("E_USAGE", `--log: cannot open ${target}: ${typeof code === "string" ? code : e instanceof Error ? e.message : String(e)}`);
  }
  return createWriteStream(target, { fd });
}

/**
 * The call log on `stream` (`undefined` when off): its `hooks` go into the gate the CLI builds, its
 * `instrument` wraps the gate that is served (and hears the attempts of a ready gate's calls). A
 * write error later (disk full, a closed pipe) is reported once on stderr and stops the call log;
 * it never ends the server.
 */
export function cliCallLog(command: string, stream: Writable | undefined, label: string): GateObserver | undefined {
  if (stream === undefined) return undefined;
  let failed = false;
  stream.on("error", (e: Error & { code?: unknown }) => {
    if (failed) return;
    failed = true;
    if (stream !== process.stderr) process.stderr.write(`${command}: --log ${label}: write failed (${typeof e.code === "string" ? e.code : e.message}); call logging stopped\n`);
  });
  const write = jsonLineSink(stream);
  return createCallLog({ sink: (line, event) => void (failed || write(line, event)) });
}
