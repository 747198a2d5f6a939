/**
 * Tiny benchmark harness: time a function over many iterations after a warm-up, interleaving
 * the rows of one comparison so machine noise hits them alike. Ratios, not absolute numbers,
 * are what the targets speak of. Each row reports its lower-quartile round: on a shared machine
 * noise only ever adds time, and bursts land on one row's round but not the next row's, which
 * makes a median ratio swing by ±30% from run to run; the lower quartile still keeps the rounds'
 * share of garbage collection, which a minimum would hide.
 */

/** One measured row. */
export interface Row {
  readonly name: string;
  /** Lower-quartile nanoseconds per operation over the rounds. */
  readonly nsPerOp: number;
  readonly opsPerSec: number;
}

/** Measure async or sync functions side by side: `rounds` rounds of `iterations` calls each, interleaved. */
export async function compare(
  fns: Record<string, () => unknown>,
  { iterations = 5_000, rounds = 28, warmup = 5_000 }: { iterations?: number; rounds?: number; warmup?: number } = {},
): Promise<Row[]> {
  const names = Object.keys(fns);
  const samples = new Map<string, number[]>(names.map((n) => [n, []]));
  for (const n of names) {
    const fn = fns[n]!;
    for (let i = 0; i < warmup; i++) await fn();
  }
  for (let r = 0; r < rounds; r++) {
    for (const n of names) {
      const fn = fns[n]!;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < iterations; i++) await fn();
      const ns = Number(process.hrtime.bigint() - t0) / iterations;
      samples.get(n)!.push(ns);
    }
  }
  return names.map((name) => {
    const s = samples.get(name)!.sort((a, b) => a - b);
    const nsPerOp = s[Math.floor((s.length - 1) / 4)]!;
    return { name, nsPerOp, opsPerSec: 1e9 / nsPerOp };
  });
}

/** Print a titled table of rows, with each row's ratio against `baseline`. */
export function printTable(title: string, rows: readonly Row[], baseline?: string): void {
  const base = rows.find((r) => r.name === baseline);
  process.stdout.write(`\n## ${title}\n`);
  for (const r of rows) {
    const ratio = base === undefined ? "" : `  ${(r.nsPerOp / base.nsPerOp).toFixed(2)}× ${base.name}`;
    process.stdout.write(`${r.name.padEnd(48)} ${r.nsPerOp.toFixed(0).padStart(9)} ns/op ${Math.round(r.opsPerSec).toString().padStart(10)} ops/s${ratio}\n`);
  }
}

/** Print a verdict line for a target, e.g. `target gate/bare ≤ 1.5×: 1.31× PASS`. */
export function verdict(label: string, value: number, limit: number, unit = "×", higherIsBetter = false): boolean {
  const pass = higherIsBetter ? value >= limit : value <= limit;
  process.stdout.write(`target ${label} ${higherIsBetter ? "≥" : "≤"} ${limit}${unit}: ${value.toFixed(2)}${unit} ${pass ? "PASS" : "MISS"}\n`);
  return pass;
}
