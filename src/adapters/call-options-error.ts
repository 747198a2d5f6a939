/**
 * What an adapter throws when the host's `callOptions` hook threw: the call did not run.
 * @module
 */

/**
 * The host's `callOptions` hook threw, so the call did not run. Its message is fixed — the hook's
 * error is its `cause`, never its text — because a framework may show a thrown message to the
 * model (the AI SDK sends it as the tool's error text). With a loop session attached, the session
 * stops (a host failure, like a throwing `execute` in `session.run`).
 * @example
 * try { await answerOpenAIChatToolCall(gate, call, { callOptions }); }
 * catch (e) { if (e instanceof CallOptionsError) log.error("callOptions failed", { tool: e.tool, cause: e.cause }); }
 */
export class CallOptionsError extends Error {
  override readonly name = "CallOptionsError";
  constructor(
    /** The tool the call was for, as the framework named it. */
    readonly tool: string,
    cause: unknown,
  ) {
    super("The call could not be prepared (the host's callOptions hook failed); it did not run", { cause });
  }
}
