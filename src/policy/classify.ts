/**
 * Classification: what kind of failure a thrown error is. A ToolError (`reject`, `transient`,
 * `denied`) classifies itself; for any other error the tool's own `classify` runs first, then the
 * default, which knows common network error codes and HTTP statuses. Anything unrecognised is
 * permanent: retries need a reason.
 * @module
 */
import { isToolError, type FailureKind } from "../errors.js";
import type { Classification } from "../tool.js";

/** A classified failure, with the tool's own words when it threw a ToolError. */
export interface Classified {
  readonly kind: FailureKind;
  readonly retryAfterMs?: number;
  /** Only for ToolErrors: the message the tool chose to show. */
  readonly message?: string;
  /** Only for rejections: whether the effect applied. */
  readonly effect?: "none" | "applied" | "unknown";
}

const TRANSIENT_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
]);
const TRANSIENT_STATUS = new Set([408, 425, 429, 502, 503, 504]);
/**
 * Throttling, as cloud SDKs name it in `code` or `name` (AWS answers some of them with status 400):
 * transient, so a read is retried after backoff and the breaker hears an overloaded service.
 */
const THROTTLED = new Set([
  "Throttling",
  "ThrottlingException",
  "ThrottledException",
  "RequestThrottled",
  "RequestThrottledException",
  "TooManyRequestsException",
  "RequestLimitExceeded",
  "ProvisionedThroughputExceededException",
  "SlowDown",
]);

/** A field of a thrown value; undefined when it has none or its getter (or Proxy trap) throws. */
function field(e: unknown, key: string): unknown {
  if (typeof e !== "object" || e === null) return undefined;
  try {
    return (e as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** The built-in classifier. */
export function defaultClassify(error: unknown): Classified {
  if (isToolError(error)) {
    // The brand is shared across copies of the package (and can be forged from plain JavaScript):
    // a kind this copy does not know is permanent, and a field of the wrong shape is left out.
    const kind: unknown = error.kind;
    if (typeof kind !== "string" || !KINDS.has(kind)) return { kind: "permanent" };
    const c: { -readonly [K in keyof Classified]: Classified[K] } = { kind: kind as FailureKind };
    // Each field read once: a getter cannot pass the check with one value and deliver another.
    const message: unknown = error.message;
    if (typeof message === "string") c.message = message;
    const wait: unknown = error.retryAfterMs;
    if (validWait(wait)) c.retryAfterMs = Math.min(wait, MAX_WAIT_MS);
    if (kind === "rejected") {
      const effect: unknown = error.effect;
      c.effect = EFFECTS.has(effect) ? (effect as "none" | "applied" | "unknown") : "unknown";
    }
    return c;
  }
  const code = field(error, "code");
  if (typeof code === "string" && (TRANSIENT_CODES.has(code) || THROTTLED.has(code))) return { kind: "transient" };
  const status = field(error, "status") ?? field(error, "statusCode");
  if (typeof status === "number") {
    if (TRANSIENT_STATUS.has(status)) return { kind: "transient" };
    if (status === 401 || status === 403) return { kind: "denied" };
  }
  const name = field(error, "name");
  if (name === "TimeoutError" || (typeof name === "string" && THROTTLED.has(name))) return { kind: "transient" };
  return { kind: "permanent" };
}

/**
 * True when a permanent error is an HTTP client error (a numeric `status` or `statusCode` of 400–499):
 * the service answered, so the breaker hears it as up. A model that asks for unknown ids must not
 * open the circuit for every caller. Never throws.
 */
export function answeredByService(error: unknown): boolean {
  const status = field(error, "status") ?? field(error, "statusCode");
  return typeof status === "number" && status >= 400 && status < 500;
}

const KINDS = new Set<string>(["transient", "denied", "rejected", "permanent"]);
const EFFECTS = new Set<unknown>(["none", "applied", "unknown"]);

/** The longest `retryAfterMs` passed on (about 24.8 days, the longest wait a timer takes): a service's hint of years is no plan. */
const MAX_WAIT_MS = 2 ** 31 - 1;

/** A usable `retryAfterMs`: finite and not negative (NaN would disable retries and reach the envelope as null). */
function validWait(ms: unknown): ms is number {
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0;
}

/**
 * Run the tool's classifier, then the default. Never throws: a throwing classifier, or an error
 * that cannot be read (a Proxy whose traps throw, a ToolError whose getters do), means permanent.
 */
export function classifyError(error: unknown, custom: ((e: unknown) => Classification) | undefined): Classified {
  try {
    return classifyOrThrow(error, custom);
  } catch {
    return { kind: "permanent" };
  }
}

function classifyOrThrow(error: unknown, custom: ((e: unknown) => Classification) | undefined): Classified {
  if (isToolError(error) || custom === undefined) return defaultClassify(error);
  let c: Classification;
  try {
    c = custom(error);
  } catch {
    return { kind: "permanent" };
  }
  if (c === undefined) return defaultClassify(error);
  if (typeof c === "string") return KINDS.has(c) ? { kind: c } : { kind: "permanent" };
  if (typeof c === "object" && c !== null) {
    const kind: unknown = c.kind;
    if (typeof kind !== "string" || !KINDS.has(kind)) return { kind: "permanent" };
    const ra: unknown = c.retryAfterMs;
    return validWait(ra) ? { kind: kind as FailureKind, retryAfterMs: Math.min(ra, MAX_WAIT_MS) } : { kind: kind as FailureKind };
  }
  return { kind: "permanent" };
}
