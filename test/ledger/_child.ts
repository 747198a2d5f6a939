/** Spawn the ledger fixture process and read its stdout line by line. */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const FIXTURE = fileURLToPath(new URL("../fixtures/ledger/child.ts", import.meta.url));

export interface Child {
  readonly proc: ChildProcess;
  readonly lines: string[];
  /** Resolves with the first line matching, or rejects on exit / timeout. */
  waitFor(pred: (line: string) => boolean, ms?: number): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

export function spawnChild(args: readonly string[]): Child {
  const proc = spawn(process.execPath, ["--import", "tsx", FIXTURE, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  const lines: string[] = [];
  let err = "";
  let buf = "";
  const waiters: { pred: (l: string) => boolean; resolve: (l: string) => void }[] = [];
  proc.stdout!.setEncoding("utf8").on("data", (d: string) => {
    buf += d;
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      for (const w of waiters.splice(0)) {
        if (w.pred(line)) w.resolve(line);
        else waiters.push(w);
      }
    }
  });
  proc.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => proc.once("exit", (code, signal) => r({ code, signal })));
  return {
    proc,
    lines,
    exited,
    stderr: () => err,
    waitFor(pred, ms = 20_000) {
      const seen = lines.find(pred);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`child: no matching line in ${ms} ms; stderr: ${err.slice(-2000)}`)), ms);
        waiters.push({ pred, resolve: (l) => (clearTimeout(timer), resolve(l)) });
        void exited.then(() => setTimeout(() => reject(new Error(`child exited before a matching line; stderr: ${err.slice(-2000)}`)), 50));
      });
    },
  };
}
