/**
 * @internal Options objects refuse keys they do not know: a misspelt option (`timeout` for
 * `timeoutMs`, `retries` for `retry`) would otherwise be ignored without a word, and the default
 * would apply where the user meant something else. Checked once, at definition time.
 * @module
 */

/**
 * Throw (through `fail`) on the first own key of `o` that is not in `known`, naming the nearest
 * known key when one is close. `where` prefixes nested options (`"retry."`).
 */
export function checkKnownKeys(o: object, known: readonly string[], where: string, fail: (message: string) => never): void {
  for (const k of Object.keys(o)) {
    if (known.includes(k)) continue;
    const near = nearest(k, known);
    const hint = near === undefined ? "" : ` (did you mean ${where}${near}?)`;
    fail(`unknown option ${where}${k}${hint}; known: ${known.map((n) => where + n).join(", ")}`);
  }
}

/** The known key a typo most likely meant: a prefix either way, the same stem, or at most two edits away. */
function nearest(key: string, known: readonly string[]): string | undefined {
  const k = key.toLowerCase();
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const n = name.toLowerCase();
    const d = n.startsWith(k) || k.startsWith(n) ? 1 : Math.min(distance(k, n), sharedStem(k, n) ? 2 : 3);
    if (d <= 2 && (best === undefined || d < best.d)) best = { name, d };
  }
  return best?.name;
}

/** The same word with another ending (`retries` for `retry`): a shared start of 4 characters or more, all but the last two of the shorter. */
function sharedStem(a: string, b: string): boolean {
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  return p >= 4 && p >= Math.min(a.length, b.length) - 2;
}

/** Levenshtein distance, stopping early past 2 (only small distances matter here). */
function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    if (Math.min(...row) > 2) return 3;
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The option names of `T`, all of them: a list that leaves one out does not compile, so the
 * check and the type cannot drift apart.
 * @example const HTTP_KEYS = optionNames<HttpOptions>()(["host", "port"]);
 */
export function optionNames<T>(): <const K extends readonly (keyof T & string)[]>(keys: K & ([Exclude<keyof T & string, K[number]>] extends [never] ? unknown : never)) => K {
  return (keys) => keys;
}
