/**
 * Call ids: unique without a UUID per call. A random 72-bit prefix per process (renewed every
 * 2^32 ids) plus a counter: cheaper than `randomUUID()` on the hot path, still collision-free
 * across processes in practice.
 * @module
 */
import { randomBytes } from "node:crypto";

let prefix = "";
let counter = 0x1_0000_0000;

/** A new call id, e.g. `tg_q1b9XwY2aK4e_1k`. */
export function newCallId(): string {
  if (counter >= 0x1_0000_0000) {
    prefix = `tg_${randomBytes(9).toString("base64url")}_`;
    counter = 0;
  }
  return prefix + (counter++).toString(36);
}
