/**
 * Text as it is safe to print on a terminal or write to a log line. Internal.
 * @module
 */

/**
 * `s` with control characters (C0, DEL, C1), the line and paragraph separators (U+2028, U+2029)
 * and the bidirectional overrides written as escapes (`\x1b`, `\u2028`, `\u202e`): stored text
 * (a key or an effect ref from a model's arguments, an ID in a row toolgate did not write) cannot
 * move the cursor, erase a line or forge a row.
 */
export function _printable(s: string): string {
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => {
    const n = c.charCodeAt(0);
    return n <= 0xff ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
  });
}
