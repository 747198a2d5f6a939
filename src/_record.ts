/**
 * @internal The object check the modules share: a JSON object (not null, not an array).
 * @module
 */

/** True when `v` is an object that is neither null nor an array. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
