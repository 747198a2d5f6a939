/** `sqliteLedger({ readonly: true })` on a path with no file: E_LEDGER_MISSING, and nothing is created. */
import { describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqliteLedger } from "../../src/ledger/index.js";

describe("sqliteLedger readonly on a missing file", () => {
  it("throws E_LEDGER_MISSING 'no ledger database at <path>' and creates nothing", () => {
    const dir = mkdtempSync(join(tmpdir(), "toolgate-ro-missing-"));
    try {
      const path = join(dir, "nothing.db");
      expect(() => sqliteLedger({ path, readonly: true })).toThrow(expect.objectContaining({ code: "E_LEDGER_MISSING", message: `sqliteLedger: no ledger database at ${JSON.stringify(path)}` }));
      expect(existsSync(path)).toBe(false);
      // A directory that does not exist either: the same answer.
      const deeper = join(dir, "no-such-dir", "x.db");
      expect(() => sqliteLedger({ path: deeper, readonly: true })).toThrow(expect.objectContaining({ code: "E_LEDGER_MISSING" }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a file that exists but cannot be opened as a database stays E_LEDGER_OPEN", () => {
    const dir = mkdtempSync(join(tmpdir(), "toolgate-ro-missing-"));
    try {
      const path = join(dir, "adir.db");
      // A directory at the path: it exists, so it is not "missing".
      mkdirSync(path);
      expect(() => sqliteLedger({ path, readonly: true })).toThrow(expect.objectContaining({ code: "E_LEDGER_OPEN" }));
      // The driver's own error stays reachable for a diagnosis: as `cause`, with SQLite's code.
      for (const readonly of [true, false]) {
        let thrown: unknown;
        try {
          sqliteLedger({ path, readonly });
        } catch (e) {
          thrown = e;
        }
        expect(thrown, `readonly: ${readonly}`).toMatchObject({ code: "E_LEDGER_OPEN", cause: expect.objectContaining({ code: expect.stringMatching(/^SQLITE_/) }) });
      }
      const junk = join(dir, "junk.db");
      writeFileSync(junk, "not a database at all, just text that is long enough to have a header");
      let code: unknown;
      try {
        const l = sqliteLedger({ path: junk, readonly: true });
        void l.close();
      } catch (e) {
        code = (e as { code?: unknown }).code;
        expect((e as { cause?: unknown }).cause).toBeInstanceOf(Error);
      }
      expect(code).toBe("E_LEDGER_OPEN");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
