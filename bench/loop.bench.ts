/**
 * What the loop policy and the adapters add to a call: canonical arguments and their hash on
 * admission, the decision, the model view. Measured against gate.call alone on the valid and the
 * invalid path of get_order (fake service). Target: session.run + gate.call ≤ 1.5× gate.call.
 * On the invalid path the session refuses every repeat after the first (no new evidence), so
 * that row measures the refusal, which never reaches the gate (informational, no target).
 */
import { createGate } from "../src/index.js";
import { createLoopPolicy } from "../src/loop/index.js";
import { answerAnthropicToolUse, answerOpenAIChatToolCall } from "../src/adapters/index.js";
import { createFakeOrders, makeOrderTools } from "../examples/orders/index.js";
import { compare, printTable, verdict } from "./harness.js";

export default async function run(): Promise<void> {
  const gate = createGate({ tools: makeOrderTools(createFakeOrders()) });
  // Sessions as in real conversations: a fresh one every 25 calls (the default call cap), so the
  // row includes creating sessions and never holds more history than a run would.
  const policy = createLoopPolicy();
  const exec = (c: { tool: string; args: unknown; callId: string }) => gate.call(c.tool, c.args, { callId: c.callId });
  const rows = async (title: string, args: Record<string, unknown>, loopRow: string) => {
    const text = JSON.stringify(args);
    let n = 0;
    let session = policy.start();
    const r = await compare({
      "gate.call": () => gate.call("get_order", args, { callId: "b1" }),
      [loopRow]: () => {
        if (session.calls >= policy.options.maxCalls) session = policy.start();
        return session.run({ tool: "get_order", args, callId: "b1" }, exec);
      },
      "answerOpenAIChatToolCall (strict map, JSON text)": () =>
        answerOpenAIChatToolCall(gate, { id: `t${++n}`, type: "function", function: { name: "get_order", arguments: text } }),
      "answerAnthropicToolUse": () => answerAnthropicToolUse(gate, { id: `t${++n}`, name: "get_order", input: args }),
    });
    printTable(title, r, "gate.call");
    return r[1]!.nsPerOp / r[0]!.nsPerOp;
  };
  const valid = await rows("valid path (get_order c_1)", { customerId: "c_1" }, "session.run + gate.call (25 calls per session)");
  await rows("invalid path (customerId: 42)", { customerId: 42 }, "session.run: refused repeat (never reaches the gate)");
  verdict("loop/valid session.run + gate.call vs gate.call", valid, 1.5);
}
