/**
 * The proxy's observation options, checked before the upstream starts: `instrument` (wraps the
 * served gate) and `hooks` (given to the gate the proxy builds). Misuse is `E_PROXY_CONFIG`.
 * @module
 */
import { ToolgateConfigError } from "../../errors.js";
import type { Gate } from "../../gate.js";
import type { HookSet } from "../../log/compose.js";

/** `instrument`: absent, or a function. */
export function checkInstrument(instrument: unknown): void {
  if (instrument !== undefined && typeof instrument !== "function") {
    throw new ToolgateConfigError("E_PROXY_CONFIG", "createProxy: instrument must be a function that wraps a gate");
  }
}

const HOOKS = ["onCall", "onAttempt", "onBreakerChange"] as const;

/** `hooks`, checked: an object whose keys are hook names and whose values are functions. */
export function checkHooks(hooks: unknown): HookSet {
  if (hooks === undefined) return {};
  const bad = (m: string): never => {
    throw new ToolgateConfigError("E_PROXY_CONFIG", `createProxy: ${m}`);
  };
  if (typeof hooks !== "object" || hooks === null || Array.isArray(hooks)) return bad(`hooks must be an object with ${HOOKS.join(", ")}`);
  const h = hooks as Record<string, unknown>;
  for (const k of Object.keys(h)) if (!(HOOKS as readonly string[]).includes(k)) bad(`hooks.${k} is not a hook (${HOOKS.join(", ")})`);
  const out: Record<string, unknown> = {};
  for (const k of HOOKS) {
    const fn = h[k];
    if (fn === undefined) continue;
    if (typeof fn !== "function") bad(`hooks.${k} must be a function`);
    out[k] = (fn as (a: unknown) => unknown).bind(hooks);
  }
  return out as HookSet;
}

/** What `instrument` returned, if it is a gate (call, list and tool functions). */
export function instrumented(g: unknown): Gate {
  const ok = typeof g === "object" && g !== null && ["call", "list", "tool"].every((k) => typeof (g as Record<string, unknown>)[k] === "function");
  if (!ok) throw new ToolgateConfigError("E_PROXY_CONFIG", "createProxy: instrument must return a gate (an object with call, list and tool)");
  return g as Gate;
}
