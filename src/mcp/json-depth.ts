/**
 * How deep a JSON text nests, found in one linear pass before it is parsed: `JSON.parse` of a
 * 4 MiB body nested two million levels deep takes seconds of CPU (flat JSON of that size: 10 ms),
 * and a transport would parse it before the gate could refuse its depth.
 * @module
 */

/**
 * The deepest a message from a transport may nest. Far above the gate's `maxDepth` (at most 1,000),
 * so a merely too-deep argument still reaches the gate, which answers INVALID_INPUT naming the
 * field; low enough that parsing stays cheap (100,000 levels: about 20 ms; 2,000,000: 1–2 s).
 */
export const MAX_MESSAGE_DEPTH = 100_000;

/** Whether `text` (JSON or not) nests no deeper than `max` arrays and objects; strings are skipped. */
export function nestsWithin(text: string, max: number): boolean {
  if (text.length <= max) return true; // each level opens with a character of its own: no scan needed
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // an escape: the next character is not a quote
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return false;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return true;
}
