/**
 * @internal The object helpers the modules share: the JSON-object check, and a copy's key setter.
 * @module
 */

/** True when `v` is an object that is neither null nor an array. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `o[k] = v`, except that a `__proto__` key stays an own data property (as a spread keeps it), never the prototype. */
export function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === "__proto__") Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}
