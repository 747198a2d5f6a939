/**
 * Secret scrubbing for anything that leaves the gate as text: issue messages, rejection
 * messages, records. Patterns match common API-key and bearer-token shapes by default.
 * @module
 */
import { checkKnownKeys } from "./known-keys.js";

/** Options for {@link createRedactor}. */
export interface RedactOptions {
  /** Extra patterns to scrub (each should use the `g` flag; one is added if missing). Each match is replaced whole. */
  readonly patterns?: readonly RegExp[];
  /** Replace the default patterns instead of adding to them. Default `false`. */
  readonly replaceDefaults?: boolean;
  /** Replacement text, used as is (`$&`, `$1` or `$$` in it are not special). Default `"[REDACTED]"`. */
  readonly replacement?: string;
}

/**
 * @internal Check a {@link RedactOptions} object's shape and keys (a misspelt key would be
 * ignored); `fail` throws with the caller's error code. Shared by createGate and createLoopPolicy.
 */
export function _checkRedactOptions(o: unknown, fail: (message: string) => never): void {
  if (typeof o !== "object" || o === null) fail("redact must be an object");
  checkKnownKeys(o, ["patterns", "replaceDefaults", "replacement"], "redact.", fail);
  const { patterns, replaceDefaults, replacement } = o as Record<string, unknown>;
  if (patterns !== undefined && (!Array.isArray(patterns) || !patterns.every((p) => p instanceof RegExp))) fail("redact.patterns must be an array of RegExp");
  if (replaceDefaults !== undefined && typeof replaceDefaults !== "boolean") fail("redact.replaceDefaults must be a boolean");
  if (replacement !== undefined && typeof replacement !== "string") fail("redact.replacement must be a string");
}

/**
 * What follows a secret's name: the spared names, then an optional `_key` suffix. The name may end
 * a longer one (access_token, dbPassword, x-api-key, REDIS_PASSWORD) or carry a _key suffix
 * (SECRET_KEY). Spared: a cursor an agent needs (a cursor prefix before a token: pageToken,
 * nextPageToken, sync_token) and `is` as a word before a name (isSecret); SYNC_PASSWORD and
 * CURSOR_API_KEY stay secrets. The lookbehinds follow the name, so the engine looks for a name
 * first (cheaper). One definition for the `key=value` default pattern and {@link _isSecretKeyName}.
 */
const SPARED_THEN_SUFFIX = String.raw`(?<!(?:page|next|next[_-]?sync|continuation|cursor|resume|(?<![a-z0-9])sync)[_-]?token)(?<!(?<![a-z0-9])is[_-]?(?:api[_-]?key|secret|password|passwd|token))(?:[_-]?(?:access[_-]?)?key)?`;
/** A secret's name in text (`password=…`, `"apiKey":"…"`). */
const SECRET_NAME = `(?:api[_-]?key|secret|password|passwd|token)${SPARED_THEN_SUFFIX}`;

/*
 * A `key=value` secret's value. Only the value is replaced: the name, the separator, an opening
 * bracket and an opening quote are the `keep` group, which the redactor puts back
 * (`{"password":"[REDACTED]"}` is still JSON). Four forms, each at least 6 characters:
 * - inside a JSON string that holds JSON (`"{\"password\":\"…\"}"`, as a provider's tool-call
 *   `arguments` are): the value ends at the first quote with a backslash before it, so the outer
 *   string stays intact (a quote inside such a value ends it early, and what follows is kept);
 * - double- or single-quoted: the value runs to its closing quote on the line (spaces included:
 *   "correct horse battery staple"), past escaped quotes (`\"` in JSON);
 * - unquoted: to a space, a quote, a comma or a semicolon, the next `&name=` of a query string, the
 *   backslashes before a quote (an escaped JSON string's end), or a `}` or `]` that closes: one
 *   that only more closing brackets (at most 16) separate from a space, `,`, `;`, a quote, the
 *   backslashes before a quote, or the end (`{"password":123456789}` keeps its brace, and so
 *   does `{\"token\":123456789}`); a bracket inside a value (`Xy7}}pQ9`) is part of it. Each
 *   character counts toward the six.
 * A value never starts at a quote: the quoted forms need the quote in `keep` just before them, the
 * unquoted form takes no quote; so backing off `keep`'s quote finds nothing.
 * Linear in time, and in stack: the first six characters are one bounded group, the rest an
 * unrolled loop (`a*(?:b a*)*`) whose group repeats only at an escape, an `&` or a bracket, never
 * per character (a group per character overflowed V8's regexp stack on a 4 MiB value and threw).
 */
/** A quote after a name or a separator, escaped up to seven times (JSON in JSON in JSON…). */
const QUOTE = String.raw`(?:\\{0,7}["'])?`;
const IN_ESCAPED = String.raw`(?<=\\")(?:[^"\\\n]|\\+[^"\\\n]){6}[^"\\\n]*(?:\\+[^"\\\n][^"\\\n]*)*(?=\\+")`;
const DOUBLE_QUOTED = String.raw`(?<=(?<!\\)")(?:[^"\\\n]|\\[^\n]){6}[^"\\\n]*(?:\\[^\n][^"\\\n]*)*(?=")`;
const SINGLE_QUOTED = String.raw`(?<=(?<!\\)')(?:[^'\\\n]|\\[^\n]){6}[^'\\\n]*(?:\\[^\n][^'\\\n]*)*(?=')`;
const PLAIN = String.raw`[^\s"',;&}\]\\]`;
const PLAIN_OTHER = String.raw`&(?![\w.-]*=)|[}\]](?![}\]]{0,16}(?:[\s,;"']|\\{1,16}"|$))|\\(?!\\{0,16}")`;
const UNQUOTED = `(?:${PLAIN}|${PLAIN_OTHER}){6}${PLAIN}*(?:(?:${PLAIN_OTHER})${PLAIN}*)*`;
const KEY_VALUE = `${IN_ESCAPED}|${DOUBLE_QUOTED}|${SINGLE_QUOTED}|${UNQUOTED}`;

/** `word` matching either case letter by letter (`[Bb][Aa]…`), for a pattern that is otherwise case-sensitive. */
function anyCase(word: string): string {
  return word.replace(/[a-z]/g, (c) => `[${c.toUpperCase()}${c}]`);
}

/** The shapes scrubbed by default: provider API keys, cloud keys, bearer tokens, Basic credentials, passwords in URLs, JWTs, private keys. */
export const DEFAULT_SECRET_PATTERNS: readonly RegExp[] = Object.freeze([
  /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}/g, // OpenAI / Anthropic style
  /\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}/g, // Stripe style
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack
  /\bAKIA[0-9A-Z]{16}\b/g, // AWS access key id
  /\bAIza[0-9A-Za-z_-]{35}\b/g, // Google API key
  /\bBearer\s+[A-Za-z0-9._~+/-]{8,}=*/gi, // bearer tokens
  // Basic credentials only as an Authorization value, and only the credential: the header's name
  // and "Basic" stay (`"authorization":"Basic [REDACTED]"` is still JSON). The credential looks
  // like base64: 8+ of [A-Za-z0-9+/=_-] with a digit, "+", "/" or "=", or an uppercase letter after
  // its first character (base64 of "user:pass" is all letters: dXNlcjpwYXNz), or 16+ of them; so
  // prose ("Authorization: Basic auth is not supported", "… Basic Authentication failed") is kept.
  // Case-sensitive for that uppercase test: the names are spelled in both cases instead of /i.
  // The lookahead comes first: only a position before a credential character reads back through
  // the lookbehind, once per run of spaces (tried at every position, "Basic" + 64 KiB of spaces
  // read the run back each time: 3 s).
  new RegExp(
    String.raw`(?=[A-Za-z0-9+/=_-])(?<=\b(?:${anyCase("proxy-")})?${anyCase("authorization")}["']?\s*[:=]\s*["']?${anyCase("basic")}\s+)` +
      String.raw`(?:(?=[A-Za-z0-9+/=_-]*[0-9+/=])[A-Za-z0-9+/=_-]{8,}|(?=[A-Za-z0-9+/=_-]+[A-Z])[A-Za-z0-9+/=_-]{8,}|[A-Za-z0-9+/=_-]{16,})`,
    "g",
  ),
  // A URL's user and password (postgres://app:hunter2@db): the host after "@" stays. A scheme
  // starts where no scheme character precedes it (not mid-word: "a.a.a…" is one start, not one per
  // letter) and has at most 16 characters; user and password are bounded and exclude whitespace,
  // quotes and what a URL's userinfo cannot hold unencoded (" ' < > { } [ ] \ `), so a match never
  // crosses a JSON string's end ({"homepage":"https://acme.com","email":"sales@acme.com"} is kept);
  // "=", ";" and "," are allowed there (a base64 password ends in "=").
  /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,15}:\/\/[^\s:/@?#"'<>{}[\]`\\]{0,256}:[^\s/@?#"'<>{}[\]`\\]{1,256}(?=@)/g,
  // JWT: from the first "eyJ" of a run of token characters ("session=a-eyJ…" keeps "a-"). With `\b`,
  // "-eyJ" repeated started a scan to the end at every "eyJ", each failing there (quadratic: 64 KB
  // took 2 s, 1 MiB minutes). Now an "eyJ" goes on only when no other stands between it and the
  // start of its run (the lookbehind reads back to the previous "eyJ" at most): one scan per run.
  /eyJ(?<=(?<![A-Za-z0-9_-])(?:(?!eyJ)[A-Za-z0-9_-])*eyJ)[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  // key=value, key: value, "key":"value": a secret's name (SECRET_NAME), then the value (KEY_VALUE).
  new RegExp(`(?<keep>${SECRET_NAME}${String.raw`${QUOTE}\s*[:=]\s*\[?${QUOTE}`})(?:${KEY_VALUE})`, "gi"),
]);

/**
 * @internal A key whose value is a secret by its name alone (`password`, `apiKey`, `access_token`,
 * `SECRET_KEY`, `authorization`), with the same spared names as the `key=value` default pattern
 * (a cursor's `pageToken`, a flag's `isSecret`): for redacting parsed values by key, where the
 * text patterns stop at a space or a comma inside the value.
 */
export function _isSecretKeyName(key: string): boolean {
  return SECRET_KEY_NAME.test(key);
}
/** A whole key naming a secret: the names of SECRET_NAME, and those a key alone can name (`authorization`, `credentials`, `private_key`). */
const SECRET_KEY_NAME = new RegExp(`(?:api[_-]?key|secret|password|passwd|token|authorization|credentials?|private[_-]?key)${SPARED_THEN_SUFFIX}$`, "i");

/**
 * No default pattern matches in a text shorter than this: the shortest is a URL's credentials
 * (`ab://:x`, then the `@` it must be followed by); a Basic credential is 8+ characters after the
 * `authorization: Basic ` it must follow. Below it only custom patterns could match.
 */
const DEFAULT_MIN_MATCH = 8;

/**
 * The redactor's own copies of the defaults (changing an exported RegExp object changes nothing
 * here), and a test every string they can match in passes: each default has one of these fixed
 * parts (Basic's `authorization` in the lookbehind before its match), and the test ignores case,
 * so it is looser than the patterns. Most text a gate redacts (validator messages, issue paths,
 * names) has none of them, and one test spares the thirteen.
 */
const DEFAULTS: readonly RegExp[] = DEFAULT_SECRET_PATTERNS.map((p) => new RegExp(p.source, p.flags));
const DEFAULT_ANCHORS = /sk-|_live_|_test_|gh[pousr]_|github_pat_|xox|akia|aiza|bearer|authorization|:\/\/|eyj|-----begin|key|secret|passw|token/i;

/** @internal Whether `text` has a fixed part of a default pattern (a default can only match then). */
export function _mayHoldDefaultSecret(text: string): boolean {
  return DEFAULT_ANCHORS.test(text);
}

/** A function that scrubs secrets out of a string. */
export type Redactor = (text: string) => string;

/**
 * Build a redactor from the default patterns plus yours.
 * @example
 * const redact = createRedactor({ patterns: [/\bACME-[0-9]{8}\b/g] });
 * redact("key ACME-12345678") // "key [REDACTED]"
 */
export function createRedactor(options: RedactOptions = {}): Redactor {
  // The replacement is literal: each "$" doubled ("$$" inserts one), so "$&", "$1" or "$<name>" in
  // it never put the match back. A replacement string, not a function: V8 replaces a match with a
  // string several times faster. A default's `keep` group (the name before a `key=value` secret's
  // value) is put back before it; a custom pattern's match is replaced whole, whatever its groups
  // (the exported defaults passed as `patterns` too: the name goes with the value).
  const whole = options.replacement ?? "[REDACTED]";
  const literal = whole.replaceAll("$", "$$$$");
  const extra: Scrub[] = (options.patterns ?? []).map((p) => [p.flags.includes("g") ? p : new RegExp(p.source, p.flags + "g"), literal]);
  const defaults: Scrub[] = options.replaceDefaults === true ? [] : DEFAULTS.map((p) => [p, p.source.includes("(?<keep>") ? `$<keep>${literal}` : literal]);
  // A string too short for any pattern is returned as is: only knowable for the defaults, never
  // for custom patterns (a PIN or a short code may be a secret).
  const minLength = extra.length === 0 ? DEFAULT_MIN_MATCH : 0;
  return (text: string): string => {
    if (text.length < minLength) return text;
    // The defaults run first, in order, as before: when the text has none of their fixed parts,
    // none of them would have changed it.
    // A pattern that throws (a custom one that overflows V8's regexp stack on a long text) cannot
    // say where a secret is: nothing of the text is kept, the replacement stands for all of it.
    try {
      const out = defaults.length > 0 && _mayHoldDefaultSecret(text) ? scrub(text, defaults) : text;
      return extra.length > 0 ? scrub(out, extra) : out;
    } catch {
      return whole;
    }
  };
}

/** A pattern and the replacement string for its matches (decided once per redactor). */
type Scrub = readonly [pattern: RegExp, replacement: string];

function scrub(text: string, patterns: readonly Scrub[]): string {
  let out = text;
  for (const [p, replacement] of patterns) {
    p.lastIndex = 0;
    if (p.test(out)) {
      p.lastIndex = 0;
      out = out.replace(p, replacement);
    }
  }
  return out;
}

/**
 * @internal Redact, then cut to `max` characters (never the other way round: a secret cut in half
 * would no longer match). `read`: redact only the text's first `read` characters (the call log's
 * capture, an issue's path, the loop's arguments bound their work so); by default the whole text,
 * which every default pattern scans in linear time.
 */
export function _redactThenCut(redact: Redactor, text: string, max: number, read?: number): string {
  return truncate(redact(read !== undefined && text.length > read ? text.slice(0, read) : text), max);
}

/** Cut a string to at most `max` characters, marking the cut; never between the two halves of a surrogate pair. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // a high surrogate whose low half would be cut off
  return text.slice(0, end) + "…";
}
