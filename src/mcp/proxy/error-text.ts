/**
 * Errors as one short, readable line for the proxy's log: a ZodError (the SDK's message and
 * tool-list checks) becomes its first issues with their paths instead of the JSON dump whose first
 * line is `[`; an HTTP error is its kind and status; anything else is its first line. Never a
 * payload: zod issue messages name the expectation, not the received value.
 * @module
 */
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ZodError } from "zod";
import { createRedactor } from "../../redact.js";

interface IssueLike {
  readonly path?: readonly PropertyKey[];
  readonly message?: unknown;
}

/** Duck-typed: the SDK may bundle its own zod instance, so `instanceof` alone is not enough. */
export function isZodError(e: unknown): e is { issues: readonly IssueLike[] } {
  return e instanceof ZodError || (e instanceof Error && e.name === "ZodError" && Array.isArray((e as { issues?: unknown }).issues));
}

/** `path: message` for the first `max` issues of a ZodError. */
export function zodSummary(issues: readonly IssueLike[], max = 3): string {
  const parts = issues.slice(0, max).map((i) => {
    const path = (i.path ?? []).map(String).join(".");
    const msg = typeof i.message === "string" ? i.message : "invalid";
    return path === "" ? msg : `${path}: ${msg}`;
  });
  const more = issues.length > max ? ` (+${issues.length - max} more)` : "";
  return (parts.join("; ") || "invalid") + more;
}

/**
 * One line, at most `max` characters. An HTTP upstream's error is its kind and status only: the
 * SDK puts the response body (which can echo the request, arguments included) or a redirect URL
 * after the first colon of its message.
 */
export function errorText(e: unknown, max = 300): string {
  if (isZodError(e)) return zodSummary(e.issues).slice(0, max);
  if (e instanceof StreamableHTTPError) {
    const kind = e.message.replace(/^Streamable HTTP error: /, "").split(":", 1)[0] ?? "HTTP error";
    return `${kind}${typeof e.code === "number" && e.code > 0 ? ` (HTTP ${e.code})` : ""}`.slice(0, max);
  }
  const text = e instanceof Error ? e.message : String(e);
  return scrubLine((text.split("\n", 1)[0] ?? "").slice(0, 4 * max)).slice(0, max);
}

const defaultRedact = createRedactor();
/** Log lines longer than this are cut before they are scrubbed (and so are bounded). */
const LINE_WINDOW = 8 * 1024;

/**
 * A log line as it is safe to write: URL credentials and query strings out, and the shapes of the
 * default secret patterns scrubbed (an upstream's stderr, a thrown message naming a connection
 * string or a `password=`). Bounded: a longer line is cut first.
 */
export function scrubLine(line: string): string {
  return defaultRedact(withoutUrlSecrets(line.length > LINE_WINDOW ? line.slice(0, LINE_WINDOW) : line));
}

/**
 * URLs in an error's text without what may be a secret: the user and password, and the query
 * string (an API key is often passed there), which fetch and Node put in their messages.
 */
export function withoutUrlSecrets(text: string): string {
  // The scheme starts where no scheme character precedes it: with `\b` every "a." restarted a scan
  // (quadratic: 160k characters took 18 s).
  return text.replace(/(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/)(?:[^\s/?#@]*@)?([^\s/?#]*)([^\s?#]*)(\?[^\s#]*)?(#\S*)?/gi, (_m, scheme: string, host: string, path: string, query: string | undefined) => `${scheme}${host}${path}${query === undefined ? "" : "?…"}`);
}
