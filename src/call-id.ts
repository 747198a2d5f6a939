/**
 * Call ids: unique without a UUID per call. A random 72-bit prefix per process (renewed every
 * 2^32 ids) plus a counter: cheaper than `randomUUID()` on the hot path, still collision-free
 * across processes in practice. The counter's two lowest base-36 digits come from a table, so an
 * id costs one string concatenation; the rest is rebuilt once per 1,296 ids.
 * @module
 */
import { randomBytes } from "node:crypto";

const LOW = Array.from({ length: 36 * 36 }, (_, i) => i.toString(36).padStart(2, "0"));

let prefix = "";
let high = 0x1_0000_0000 / LOW.length;
let low = LOW.length;
/** `prefix` plus the counter's high digits. */
let head = "";

/** A new call id, e.g. `tg_q1b9XwY2aK4e_1k07`. */
export function newCallId(): string {
  if (low === LOW.length) {
    low = 0;
    if (++high >= 0x1_0000_0000 / LOW.length) {
      prefix = `tg_${randomBytes(9).toString("base64url")}_`;
      high = 0;
    }
    head = prefix + high.toString(36);
  }
  return head + LOW[low++]!;
}
