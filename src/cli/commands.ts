/**
 * The command table. Each command lives in its own file and is loaded only when run.
 * Add one line per command.
 * @module
 */
import type { Command } from "./command.js";

export const commands: Record<string, () => Promise<{ default: Command }>> = {
  serve: () => import("./serve.js"),
  proxy: () => import("./proxy.js"),
  ledger: () => import("./ledger.js"),
  check: () => import("./check.js"),
  demo: () => import("./demo.js"),
};
