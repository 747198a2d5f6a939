/**
 * `UpstreamError`: why a proxy's call to its upstream failed, and whether a retry may help.
 * @module
 */

/** Why a call to the upstream failed. */
export class UpstreamError extends Error {
  override readonly name = "UpstreamError";
  constructor(
    /** `unavailable` (not connected), `closed` (the connection dropped mid-call), `timeout`, `protocol` (a JSON-RPC error answer). */
    readonly reason: "unavailable" | "closed" | "timeout" | "protocol",
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
  /** Transient reasons: the call may succeed later. */
  get transient(): boolean {
    return this.reason !== "protocol";
  }
}
