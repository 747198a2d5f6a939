/** Run `toolgate ledger` in-process through the CLI entry's `main` (fast), capturing its output. */
export async function ledgerCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main } = await import("../../src/cli/main.js");
  const out: string[] = [];
  const err: string[] = [];
  const o = process.stdout.write.bind(process.stdout);
  const e = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((c: string | Uint8Array) => (out.push(String(c)), true)) as typeof process.stdout.write;
  process.stderr.write = ((c: string | Uint8Array) => (err.push(String(c)), true)) as typeof process.stderr.write;
  try {
    const code = await main(["ledger", ...args]);
    return { code, stdout: out.join(""), stderr: err.join("") };
  } finally {
    process.stdout.write = o;
    process.stderr.write = e;
  }
}
