/**
 * `npm run bench`: runs every `bench/*.bench.ts` (compiled to .bench/ first) in name order (or those
 * named on the command line), each printing its own side-by-side tables and target verdicts.
 * Each file runs in a process of its own: in a shared one, a file's heap and JIT state (the
 * adversarial file's 10^6-element payloads, the contract file's hundreds of schemas) slowed the
 * files after it — the gate's bare baseline measured 2.9 µs after them against 0.6-1.1 µs alone —
 * so a ratio depended on which files ran before it. Exit code 0 always: a benchmark reports, it
 * does not gate.
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const ONE = "--bench-file";
const at = process.argv.indexOf(ONE);
if (at !== -1) {
  // The child: run one file.
  const f = process.argv[at + 1]!;
  const mod = (await import(pathToFileURL(join(here, f)).href)) as { default: () => Promise<void> };
  await mod.default();
} else {
  const only = process.argv.slice(2);
  const files = readdirSync(here)
    .filter((f) => f.endsWith(".bench.js") || f.endsWith(".bench.ts"))
    .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
    .sort();
  process.stdout.write(`toolgate bench — node ${process.version}, ${new Date().toISOString()}\n`);
  for (const f of files) {
    process.stdout.write(`\n# ${f}\n`);
    const r = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ONE, f], { stdio: "inherit" });
    if (r.status !== 0) process.stdout.write(`(${f} ended with ${r.status === null ? `signal ${r.signal}` : `exit code ${r.status}`})\n`);
  }
}
