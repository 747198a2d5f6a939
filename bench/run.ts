/**
 * `npm run bench`: runs every `bench/*.bench.ts` (compiled to .bench/ first) in name order (or those named on the command
 * line), each printing its own side-by-side table and target verdicts. Exit code 0 always: a
 * benchmark reports, it does not gate.
 */
import { readdirSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith(".bench.js") || f.endsWith(".bench.ts"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
process.stdout.write(`toolgate bench — node ${process.version}, ${new Date().toISOString()}\n`);
for (const f of files) {
  const mod = (await import(pathToFileURL(join(here, f)).href)) as { default: () => Promise<void> };
  process.stdout.write(`\n# ${f}\n`);
  await mod.default();
}
