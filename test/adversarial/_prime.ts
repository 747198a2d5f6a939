/**
 * Import before `@fast-check/poisoning`: it snapshots the globals when first imported, so every
 * global that Node defines lazily or that a dependency adds on import must exist by then.
 */
import "zod";
import "../../src/index.js";
import "./_inputs.js";

void [AbortController, AbortSignal, structuredClone, performance, queueMicrotask, setImmediate, TextEncoder, TextDecoder, URL, Event, EventTarget];
