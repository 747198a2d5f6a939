/** Canaries: 100 distinct secret-looking values (every default pattern family), deterministic. */

/** A deterministic generator, so a failure names the same canary every run. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(7);
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const pick = (n: number, from = ALNUM) => Array.from({ length: n }, () => from[Math.floor(rand() * from.length)]).join("");

export interface Canary {
  /** The secret-looking text planted. */
  readonly planted: string;
  /** Its unique random part: what must never appear in any output. */
  readonly needle: string;
}

const FAMILIES: ((r: string) => Canary)[] = [
  (r) => ({ planted: `sk-proj-${r}`, needle: r }),
  (r) => ({ planted: `sk_live_${r}`, needle: r }),
  (r) => ({ planted: `ghp_${r}${pick(16)}`, needle: r }),
  (r) => ({ planted: `github_pat_${r}_${pick(8)}`, needle: r }),
  (r) => ({ planted: `xoxb-${r}`, needle: r }),
  () => {
    const k = pick(16, UPPER);
    return { planted: `AKIA${k}`, needle: k };
  },
  (r) => ({ planted: `AIza${r}${pick(15)}`, needle: r }),
  (r) => ({ planted: `Bearer ${r}`, needle: r }),
  (r) => ({ planted: `eyJ${r}.eyJ${pick(12)}.${pick(20)}`, needle: r }),
  (r) => ({ planted: `api_key=${r}`, needle: r }),
];
/** 100 distinct secret-looking values, ten of each default secret shape. */
export const CANARIES: readonly Canary[] = Array.from({ length: 100 }, (_, i) => FAMILIES[i % FAMILIES.length]!(pick(20)));

/** The planted values whose unique part appears in any of the texts. */
export function leaks(texts: readonly string[]): string[] {
  const found: string[] = [];
  for (const c of CANARIES) if (texts.some((t) => t.includes(c.needle))) found.push(c.planted);
  return found;
}
