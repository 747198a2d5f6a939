/** The redactor: custom patterns apply to strings of any length; the length shortcut holds only for the defaults. */
import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { createRedactor, DEFAULT_SECRET_PATTERNS } from "../../src/index.js";
import { _mayHoldDefaultSecret, truncate } from "../../src/redact.js";

/**
 * A pattern's source without its lookbehind and lookahead groups (balanced parentheses), except a
 * positive lookbehind before the match's first character (`Basic ` before a credential): the text
 * must hold it, so it stays, as a plain group.
 */
function withoutLookarounds(source: string): string {
  let out = "";
  for (let i = 0; i < source.length; i++) {
    const head = source.slice(i, i + 4);
    if (!/^\(\?<?[!=]/.test(head)) {
      out += source[i];
      continue;
    }
    const start = i;
    let depth = 0;
    for (; i < source.length; i++) {
      if (source[i] === "\\") i++;
      else if (source[i] === "(") depth++;
      else if (source[i] === ")" && --depth === 0) break;
    }
    if (out === "" && head === "(?<=") out += `(?:${withoutLookarounds(source.slice(start + 4, i))})`;
  }
  return out;
}

/** What a match must be followed by in the text (a URL's credentials end before its "@"). */
const followedBy = (match: string): string => (match.includes("://") ? "@" : "");

/** The shortest strings each default pattern matches (found by hand from the patterns). */
const SHORTEST = ["ab://:x", "token=abcdef", "secret:abcdef", "Bearer abcdefgh", "xoxb-abcdefghij", "sk_live_abcdefghij", "sk-abcdefghijklmnop", "eyJabcde.abcde.abcde", "AKIAABCDEFGHIJKLMNOP"];
/** What a `key=value` match keeps: its name and separator (the match's `keep` group). */
const kept = (match: string): string => /^(?:token=|secret:)/.exec(match)?.[0] ?? "";

/** What the redactor does with a default's match: its `keep` group (if any), then the replacement. */
const keepThenRedacted = (...args: unknown[]): string => {
  const groups = args[args.length - 1];
  return (typeof groups === "object" && groups !== null ? ((groups as { keep?: string }).keep ?? "") : "") + "[REDACTED]";
};

describe("createRedactor", () => {
  it("applies custom patterns to short strings (a 7-character PIN, a 4-digit code)", () => {
    expect(createRedactor({ patterns: [/\bPIN\d{4}\b/g] })("PIN1234")).toBe("[REDACTED]");
    expect(createRedactor({ patterns: [/\b\d{4}\b/] })("1234")).toBe("[REDACTED]");
    expect(createRedactor({ patterns: [/\b\d{4}\b/g], replaceDefaults: true, replacement: "#" })("pin 1234")).toBe("pin #");
    expect(createRedactor({ patterns: [/x/g] })("")).toBe("");
  });

  it("still redacts the shortest secrets the default patterns match", () => {
    const redact = createRedactor();
    for (const s of SHORTEST) expect(redact(s + followedBy(s)), s).toBe(kept(s) + "[REDACTED]" + followedBy(s));
    expect(Math.min(...SHORTEST.map((s) => s.length + followedBy(s).length))).toBe(8);
  });

  it("redacts key=value secrets in JSON and inside longer names (access_token, client_secret, DB_PASSWORD), keeping the name", () => {
    const redact = createRedactor();
    const cases: Record<string, string> = {
      '{"password":"hunter2secret"}': '{"password":"[REDACTED]"}',
      // a JWT glued to other token characters goes with them
      "session=a-eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefgh ok": "session=a-[REDACTED] ok",
      "cookie: jwt_eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefgh": "cookie: jwt_[REDACTED]",
      // a quoted value runs to its closing quote: a passphrase with spaces goes whole
      '{"password": "correct horse battery staple", "n": 1}': '{"password": "[REDACTED]", "n": 1}',
      "secret='two words here' ok": "secret='[REDACTED]' ok",
      '{"api_key": "abcd1234efgh5678"}': '{"api_key": "[REDACTED]"}',
      "access_token=ya29.a0AfH6SMBx3": "access_token=[REDACTED]",
      "client_secret=9f8e7d6c5b4a": "client_secret=[REDACTED]",
      "refresh_token: 1//0gabcdefghij": "refresh_token: [REDACTED]",
      "DB_PASSWORD=s3cr3tpass ok": "DB_PASSWORD=[REDACTED] ok",
      '{"accessToken":"ya29.a0AfH6SMBx3","clientSecret":"9f8e7d6c5b4a"}': '{"accessToken":"[REDACTED]","clientSecret":"[REDACTED]"}',
      '{"dbPassword":"hunter2hunter2","apiToken":"a1b2c3d4e5f6g7","webhookSecret":"whsec_abcdefgh"}': '{"dbPassword":"[REDACTED]","apiToken":"[REDACTED]","webhookSecret":"[REDACTED]"}',
      "adminPassword=Sup3rS3cret!": "adminPassword=[REDACTED]",
      // `is` and `sync` spare a cursor only as words of their own
      "REDIS_PASSWORD=hunter2hunter2 TRAVIS_TOKEN=abcdef123456 RSYNC_PASSWORD=hunter2hunter2 thisPassword=abcdefgh": "REDIS_PASSWORD=[REDACTED] TRAVIS_TOKEN=[REDACTED] RSYNC_PASSWORD=[REDACTED] thisPassword=[REDACTED]",
      // a cursor prefix spares a token only: any other secret name after it is a secret
      "SYNC_PASSWORD=hunter2hunter2 CURSOR_API_KEY=abcdef123456 PAGE_SECRET=abcdef123456": "SYNC_PASSWORD=[REDACTED] CURSOR_API_KEY=[REDACTED] PAGE_SECRET=[REDACTED]",
      '{"nextSyncToken":"CiAKGjBp","is_secret":"public","x.isSecret":"public"}': '{"nextSyncToken":"CiAKGjBp","is_secret":"public","x.isSecret":"public"}',
      "SECRET_KEY=django-insecure-abc aws_secret_access_key=wJalrXUtnFEMI": "SECRET_KEY=[REDACTED] aws_secret_access_key=[REDACTED]",
      "x-api-key: abcdef123456": "x-api-key: [REDACTED]",
      // a secret with & or } in it is redacted whole; a query string keeps its next parameters
      '{"password":"p&ssw0rd-long-secret"}': '{"password":"[REDACTED]"}',
      '{"password":"ab}cdefghijklmn"}': '{"password":"[REDACTED]"}',
      "?access_token=abc123xyz&page=2&sort=asc": "?access_token=[REDACTED]&page=2&sort=asc",
      // words that only contain a keyword, and cursors an agent needs, are left alone
      "tokens: 123456 secretary=abcdefgh max_tokens=4096 passwordless": "tokens: 123456 secretary=abcdefgh max_tokens=4096 passwordless",
      "resume with pageToken: CiAKGjBpNDd2Nmp": "resume with pageToken: CiAKGjBpNDd2Nmp",
      '{"nextPageToken":"CiAKGjBpNDd2","syncToken":"abcdefgh","isSecret":"public","page_token":"CiAKGjBp"}': '{"nextPageToken":"CiAKGjBpNDd2","syncToken":"abcdefgh","isSecret":"public","page_token":"CiAKGjBp"}',
    };
    for (const [text, want] of Object.entries(cases)) expect(redact(text), text).toBe(want);
    // No nested quantifier: a long run of word characters is scanned once (a 1 MB service message).
    expect(redact("a".repeat(1_000_000) + " token=abcdefgh")).toBe("a".repeat(1_000_000) + " token=[REDACTED]");
    const query = "token=x&" + "a".repeat(200_000) + "=1"; // the value's lookahead scans the run once
    expect(redact(query) === query).toBe(true);
  });

  it("replaces only the value of a key=value secret: the name, the separator and the quotes stay", () => {
    const redact = createRedactor();
    const cases: Record<string, string> = {
      '{"password":"hunter2secret"}': '{"password":"[REDACTED]"}',
      "password=hunter2secret&x=1": "password=[REDACTED]&x=1",
      "api_key: abcdef123456": "api_key: [REDACTED]",
      "{'token': 'abcdefgh'}": "{'token': '[REDACTED]'}",
      'Secret = "two words here" ok': 'Secret = "[REDACTED]" ok',
      // an unclosed quote: the value runs to a space or a quote, as an unquoted one
      'token="abcdefgh next': 'token="[REDACTED] next',
    };
    for (const [text, want] of Object.entries(cases)) expect(redact(text), text).toBe(want);
    // Passed as `patterns`, the exported defaults replace their whole match, the name too: more
    // than needed, never the secret.
    const text = '{"password":"hunter2secret","n":1}';
    expect(createRedactor({ patterns: DEFAULT_SECRET_PATTERNS, replaceDefaults: true })(text)).toBe('{"[REDACTED]","n":1}');
    expect(createRedactor({ patterns: DEFAULT_SECRET_PATTERNS })(text)).toBe('{"[REDACTED]","n":1}');
  });

  it("keeps compact JSON valid: a secret-named key keeps its name and its value becomes the replacement, escaped quotes included", () => {
    const redact = createRedactor();
    const docs = [
      { user: "ann", password: "hunter2secret", n: 1 },
      { apiKey: "abcd1234efgh5678", accessToken: "ya29.a0AfH6SMBx3", client_secret: "correct horse, battery; staple", note: "ok" },
      { a: { DB_PASSWORD: 'p"ss\\w0rd "quoted"' }, list: ["x", { token: 'it\'s "a" secret' }], passwd: "a\nb\tc\u0001d" },
    ];
    for (const doc of docs) {
      const text = JSON.stringify(doc);
      const out = redact(text);
      expect(() => JSON.parse(out) as unknown, out).not.toThrow();
      expect(out, text).not.toMatch(/hunter2|1234efgh|SMBx3|horse|battery|staple|w0rd|quoted|it.s|a\\nb/);
    }
    expect(JSON.parse(redact(JSON.stringify(docs[0])))).toEqual({ user: "ann", password: "[REDACTED]", n: 1 });
    expect(JSON.parse(redact(JSON.stringify(docs[1])))).toEqual({ apiKey: "[REDACTED]", accessToken: "[REDACTED]", client_secret: "[REDACTED]", note: "ok" });
    expect(JSON.parse(redact(JSON.stringify(docs[2])))).toEqual({ a: { DB_PASSWORD: "[REDACTED]" }, list: ["x", { token: "[REDACTED]" }], passwd: "[REDACTED]" });
    // Any string of 6+ characters under a secret name, next to other fields.
    const names = ["password", "apiKey", "api_key", "access_token", "client_secret", "DB_PASSWORD", "x-api-key", "SECRET_KEY", "passwd", "token"];
    const plain = fc.stringMatching(/^[a-z0-9 .]{0,12}$/);
    fc.assert(
      fc.property(fc.constantFrom(...names), fc.string({ unit: "binary", minLength: 6, maxLength: 40 }), plain, (name, secret, other) => {
        const out = redact(JSON.stringify({ before: other, [name]: secret, after: [other] }));
        expect(JSON.parse(out) as unknown, out).toEqual({ before: other, [name]: "[REDACTED]", after: [other] });
      }),
      { numRuns: 2_000 },
    );
  });

  it("redacts a secret inside JSON text held in a JSON string (a tool call's arguments), and both levels stay JSON", () => {
    const redact = createRedactor();
    const args = JSON.stringify({ user: "bob", password: "hunter2secret", n: 1 });
    const out = redact(JSON.stringify({ name: "login", arguments: args }));
    const outer = JSON.parse(out) as { name: string; arguments: string };
    expect(outer.name).toBe("login");
    expect(JSON.parse(outer.arguments)).toEqual({ user: "bob", password: "[REDACTED]", n: 1 });
    // Two levels down, and next to other fields at each level.
    const twice = redact(JSON.stringify({ a: JSON.stringify({ b: JSON.stringify({ apiKey: "abcd1234efgh", k: "v" }), c: 2 }) }));
    expect(JSON.parse((JSON.parse((JSON.parse(twice) as { a: string }).a) as { b: string }).b)).toEqual({ apiKey: "[REDACTED]", k: "v" });
    // Any string of 6+ characters without a quote under a secret name, one level down.
    const names = ["password", "apiKey", "access_token", "client_secret", "DB_PASSWORD", "token"];
    const plain = fc.stringMatching(/^[a-z0-9 .]{0,12}$/);
    fc.assert(
      fc.property(fc.constantFrom(...names), fc.string({ unit: "binary", minLength: 6, maxLength: 40 }).filter((v) => !v.includes('"')), plain, (name, secret, other) => {
        const out = redact(JSON.stringify({ before: other, args: JSON.stringify({ [name]: secret, after: other }) }));
        const parsed = JSON.parse(out) as { before: string; args: string };
        expect(parsed.before).toBe(other);
        expect(JSON.parse(parsed.args) as unknown, out).toEqual({ [name]: "[REDACTED]", after: other });
      }),
      { numRuns: 1_000 },
    );
  });

  it("keeps the bracket or brace that closes an unquoted value (a number), and redacts the first string of an array", () => {
    const redact = createRedactor();
    expect(redact('{"password":123456789}')).toBe('{"password":[REDACTED]}');
    expect(redact('{"a":[{"token":12345678}],"b":1}')).toBe('{"a":[{"token":[REDACTED]}],"b":1}');
    expect(redact('{"arguments":"{\\"token\\":123456789}"}')).toBe('{"arguments":"{\\"token\\":[REDACTED]}"}');
    // Brackets inside a value, and backslashes, are characters of it: each counts toward the six.
    expect(redact("password=Xy7}}pQ9-long-secret")).toBe("password=[REDACTED]");
    expect(redact("password=abcdefgh}}ijklmnop ok")).toBe("password=[REDACTED] ok");
    expect(redact("password=ab\\\\cd ok")).toBe("password=[REDACTED] ok");
    expect(redact("password=Secret1]\\tail2")).toBe("password=[REDACTED]");
    expect(redact('{"a":"password=Ab]\\\\Cdefghij"}')).toBe('{"a":"password=[REDACTED]"}');
    expect(redact('{"pin":1,"token":12345678,"n":2}')).toBe('{"pin":1,"token":[REDACTED],"n":2}');
    expect(redact('{"password":[12345678]}')).toBe('{"password":[[REDACTED]]}');
    expect(JSON.parse(redact('{"password":["hunter2secret"],"n":1}'))).toEqual({ password: ["[REDACTED]"], n: 1 });
    // A bracket that does not close the value is part of it: nothing of the secret is left.
    expect(redact("password=hun]ter2}secret ok")).toBe("password=[REDACTED] ok");
  });

  it("redacts a value of several MiB in every key=value form without throwing (V8's regexp stack)", () => {
    const redact = createRedactor();
    const big = "a".repeat(4 * 1024 * 1024);
    expect(redact(`password="${big}"`)).toBe('password="[REDACTED]"');
    expect(redact(`password='${big}'`)).toBe("password='[REDACTED]'");
    expect(redact(`password=${big} ok`)).toBe("password=[REDACTED] ok");
    expect(redact(`password="${big}`)).toBe('password="[REDACTED]');
    expect(redact(`{"a":"{\\"password\\":\\"${big}\\"}"}`)).toBe('{"a":"{\\"password\\":\\"[REDACTED]\\"}"}');
  });

  it("answers the replacement alone when a pattern throws on a text (a custom pattern over V8's regexp stack): nothing of it is kept", () => {
    const redact = createRedactor({ patterns: [/^(a|b)+$/g], replacement: "<secret>" });
    const text = `${"ab".repeat(2 * 1024 * 1024)}!`;
    expect(() => /^(a|b)+$/.test(text)).toThrow(RangeError);
    expect(redact(text)).toBe("<secret>");
    expect(redact("ab")).toBe("<secret>"); // a match, replaced as usual
    expect(redact("abc")).toBe("abc");
  });

  it("uses the replacement literally: $&, $1, $$, $<keep>, $` and $' put nothing of the match back (defaults and custom patterns)", () => {
    const text = "token=hunter2secret key sk-abcdefghijklmnop1234 ACME-12345678";
    for (const replacement of ["$&", "$1", "$$", "$<keep>", "$`", "$'"]) {
      const out = createRedactor({ replacement, patterns: [/(ACME)-(?<digits>\d{8})/g] })(text);
      expect(out, replacement).toBe(`token=${replacement} key ${replacement} ${replacement}`);
    }
    expect(createRedactor({ replacement: "$&" })('{"password":"hunter2secret"}')).toBe('{"password":"$&"}');
    expect(createRedactor({ patterns: DEFAULT_SECRET_PATTERNS, replaceDefaults: true, replacement: "$&" })("x-api-key: abcdef123456")).toBe("x-$&");
  });

  it("redacts Basic credentials given as an Authorization value and the user:password of a URL, and leaves prose, hosts and ports", () => {
    const redact = createRedactor();
    const cases: Record<string, string> = {
      // only the credential goes: the header's name and "Basic" stay
      "Authorization: Basic dXNlcjpodW50ZXIy": "Authorization: Basic [REDACTED]",
      '{"headers":{"authorization":"Basic dXNlcjpodW50ZXIy=="}}': '{"headers":{"authorization":"Basic [REDACTED]"}}',
      "Proxy-Authorization: basic YWxhZGRpbjpvcGVuc2VzYW1l next": "Proxy-Authorization: basic [REDACTED] next",
      "connect ECONNREFUSED postgres://app:hunter2@db.internal:5432/orders": "connect ECONNREFUSED [REDACTED]@db.internal:5432/orders",
      "redis://:pw@cache:6379 and mongodb+srv://admin:s3cr%40t@cluster0.example.net/db": "[REDACTED]@cache:6379 and [REDACTED]@cluster0.example.net/db",
      // prose, a URL without credentials, a port, an "@" in a path or query: all kept
      "Basic information about the order; see Basic plan": "Basic information about the order; see Basic plan",
      "https://example.com:8443/orders?owner=a@b.c and https://example.com/@team": "https://example.com:8443/orders?owner=a@b.c and https://example.com/@team",
      "authorization: required for refunds": "authorization: required for refunds",
    };
    for (const [text, want] of Object.entries(cases)) expect(redact(text), text).toBe(want);
    // Bounded scans: runs that keep almost matching stay linear (each would take seconds if quadratic).
    const long = ["a.".repeat(300_000), "ab://" + "u".repeat(300_000), "x://u:".repeat(100_000), "authorization: " + " ".repeat(500_000) + "Basic", "authorization: Basic" + " ".repeat(500_000) + "abc"];
    for (const text of long) expect(redact(text) === text, text.slice(0, 20)).toBe(true);
  });

  it("keeps compact JSON valid: a URL's user and password never run across the end of a JSON string", () => {
    const redact = createRedactor();
    const docs = [
      '{"homepage":"https://acme.com","email":"sales@acme.com"}',
      '{"url":"https://acme.com:443","contact":"ops@acme.com"}',
      '{"a":"ftp://files.example","b":"user:name@host"}',
      '["http://a.example","x:y@z.example"]',
    ];
    for (const doc of docs) {
      const out = redact(doc);
      expect(() => JSON.parse(out) as unknown, out).not.toThrow();
      expect(out, doc).toBe(doc);
    }
  });

  it("redacts the user:password of postgres, mysql, redis, amqp and https URLs, in text and in compact JSON next to other fields", () => {
    const redact = createRedactor();
    const urls: Record<string, string> = {
      "postgres://app:hunter2@db.internal:5432/orders": "[REDACTED]@db.internal:5432/orders",
      "postgresql://app:p%40ss!w0rd@db.internal/orders": "[REDACTED]@db.internal/orders",
      "mysql://root:s3cret@127.0.0.1:3306/app": "[REDACTED]@127.0.0.1:3306/app",
      "redis://default:hunter2@cache:6379/0": "[REDACTED]@cache:6379/0",
      "redis://:hunter2@cache:6379": "[REDACTED]@cache:6379",
      "amqp://guest:guest@rabbit:5672/vhost": "[REDACTED]@rabbit:5672/vhost",
      "https://deploy:ghs-tok3n@git.example.com/repo.git": "[REDACTED]@git.example.com/repo.git",
      // "=", ";" and "," may stand unencoded in a URL's userinfo (RFC 3986 sub-delims); a base64 password ends in "="
      "postgres://app:hunter2s3cret=@db:5432/x": "[REDACTED]@db:5432/x",
      "mysql://root:s3cret;pa,ss@db/app": "[REDACTED]@db/app",
    };
    for (const [url, want] of Object.entries(urls)) {
      expect(redact(`connect ECONNREFUSED ${url} (retrying)`), url).toBe(`connect ECONNREFUSED ${want} (retrying)`);
      const doc = JSON.stringify({ dsn: url, homepage: "https://acme.com", note: "a:b", email: "sales@acme.com" });
      const out = redact(doc);
      expect(out, doc).not.toMatch(/hunter2|s3cret|guest:|p%40ss|tok3n/);
      expect(JSON.parse(out), out).toEqual({ dsn: want, homepage: "https://acme.com", note: "a:b", email: "sales@acme.com" });
    }
  });

  it("redacts only the credential after Authorization: Basic, in a header line and in JSON (which stays JSON)", () => {
    const redact = createRedactor();
    const cases: Record<string, string> = {
      "GET /v1 HTTP/1.1\r\nHost: api.example\r\nAuthorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l\r\nAccept: */*": "GET /v1 HTTP/1.1\r\nHost: api.example\r\nAuthorization: Basic [REDACTED]\r\nAccept: */*",
      '{"method":"GET","headers":{"accept":"*/*","authorization":"Basic dXNlcjpodW50ZXIy==","x-trace":"abc"}}': '{"method":"GET","headers":{"accept":"*/*","authorization":"Basic [REDACTED]","x-trace":"abc"}}',
      "{'Authorization': 'Basic dXNlcjpodW50ZXIy', 'Accept': 'text/plain'}": "{'Authorization': 'Basic [REDACTED]', 'Accept': 'text/plain'}",
      "proxy-authorization=basic dXNlcjpw_YXNz-d29yZA": "proxy-authorization=basic [REDACTED]",
      // base64 of "user:pass" is letters only (no digit, "+", "/" or "="), 12 of them: an uppercase letter after the first tells it from a word
      "Authorization: Basic dXNlcjpwYXNz": "Authorization: Basic [REDACTED]",
      "AUTHORIZATION: BASIC dXNlcjpwYXNz": "AUTHORIZATION: BASIC [REDACTED]",
    };
    for (const [text, want] of Object.entries(cases)) expect(redact(text), text).toBe(want);
    const out = redact('{"headers":{"authorization":"Basic dXNlcjpodW50ZXIy=="}}');
    expect(JSON.parse(out)).toEqual({ headers: { authorization: "Basic [REDACTED]" } });
  });

  it("leaves prose after Authorization: Basic alone (a word, not a base64-like credential)", () => {
    const redact = createRedactor();
    for (const text of [
      "Authorization: Basic auth is not supported",
      "authorization=Basic credentials are missing",
      'Authorization: Basic realm="orders" required',
      "Authorization: Basic authentication failed; use Bearer",
      "Authorization: Basic Authentication failed; use Bearer",
    ]) expect(redact(text), text).toBe(text);
  });

  it("truncate never cuts a surrogate pair in half", () => {
    const cut = truncate("x".repeat(198) + "😀 tail", 200);
    expect(cut).toBe("x".repeat(198) + "…");
    expect(cut.isWellFormed()).toBe(true);
    expect(truncate("x".repeat(197) + "😀 tail", 200)).toBe("x".repeat(197) + "😀…");
    expect(truncate("short", 200)).toBe("short");
  });

  it("no default pattern matches in a string shorter than 8 characters (so the shortcut loses nothing)", () => {
    const pieces = ["ab://", "@", "sk-", "sk_live_", "ghp_", "xoxb-", "AKIA", "AIza", "Bearer ", "eyJ", ".", "token", "secret", "apikey", "passwd", "=", ":", "-----BEGIN ", "PRIVATE KEY-----", "a", "Z", "0", "_", "-", " "];
    const short = fc.array(fc.constantFrom(...pieces), { maxLength: 8 }).map((p) => p.join("")).filter((s) => s.length < 8);
    fc.assert(
      fc.property(short, (s) => DEFAULT_SECRET_PATTERNS.every((p) => new RegExp(p.source, p.flags.replace("g", "")).exec(s) === null)),
      { numRuns: 5_000 },
    );
    // And matches generated from each pattern (word boundaries dropped, case fixed) are never shorter.
    for (const p of DEFAULT_SECRET_PATTERNS) {
      const re = new RegExp(`^(?:${withoutLookarounds(p.source.replace(/\\b/g, ""))})$`); // lookarounds match no characters
      for (const m of fc.sample(fc.stringMatching(re), 200)) expect(m.length + followedBy(m).length, p.source).toBeGreaterThanOrEqual(8);
    }
  });
  it("skips the defaults only for text none of them can match (their fixed parts, in any case)", () => {
    for (const s of SHORTEST) expect(_mayHoldDefaultSecret(s), s).toBe(true);
    for (const p of DEFAULT_SECRET_PATTERNS) {
      const re = new RegExp(`^(?:${withoutLookarounds(p.source.replace(/\\b/g, ""))})$`); // lookarounds match no characters; case as written
      for (const m of fc.sample(fc.stringMatching(re), 300)) expect(_mayHoldDefaultSecret(m), `${p.source}: ${m}`).toBe(true);
    }
    // And the redactor answers exactly as running every default in order does, on text that mixes
    // their fixed parts with ordinary words.
    const reference = (text: string) => DEFAULT_SECRET_PATTERNS.reduce((out, p) => out.replace(new RegExp(p.source, p.flags), keepThenRedacted), text);
    const pieces = ["token=", "Secret: ", '{"password":"', '"', "'", "\\", "Bearer ", "Authorization: Basic ", "postgres://", "u:", "@", "Basic ", "sk-", "sk_live_", "ghp_", "xoxb-", "AKIA", "AIza", "eyJ", ".", "-----BEGIN RSA PRIVATE KEY-----", "abcdefghijklmnop0123", "Invalid input: expected string", "customerId", " ", "=", "KEY"];
    const redact = createRedactor();
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 8 }), (parts) => {
        const text = parts.join("");
        expect(redact(text)).toBe(text.length < 8 ? text : reference(text));
      }),
      { numRuns: 3_000 },
    );
  });

  it("reads custom patterns at each call (a pattern changed after creation applies), and its own copies of the defaults", () => {
    const pattern = /\bACME-\d{8}\b/g;
    const redact = createRedactor({ patterns: [pattern] });
    expect(redact("customer key ACME2-12345678")).toBe("customer key ACME2-12345678");
    pattern.compile("\\bACME2-\\d{8}\\b", "g");
    expect(redact("customer key ACME2-12345678")).toBe("customer key [REDACTED]");
    expect(createRedactor()("sk-abcdefghijklmnop1234")).toBe("[REDACTED]");
  });
});
