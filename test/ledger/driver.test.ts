/**
 * The ledger drivers are optional peers, loaded by the factory that needs one: a package that is
 * not there is E_LEDGER_DRIVER with the install command; one that is there but fails to load is
 * E_LEDGER_DRIVER "could not be loaded", its error kept as the cause, never "not installed".
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isToolgateConfigError } from "../../src/errors.js";
import { _loadDriver } from "../../src/ledger/_driver.js";

const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/ledger/${name}`, import.meta.url));

function thrown(fn: () => unknown): { code?: unknown; message: string; cause?: unknown } {
  try {
    fn();
  } catch (e) {
    expect(isToolgateConfigError(e)).toBe(true);
    return e as { code?: unknown; message: string; cause?: unknown };
  }
  throw new Error("expected a throw");
}

describe("_loadDriver", () => {
  it("a package that is not installed: E_LEDGER_DRIVER naming it and the install command", () => {
    const e = thrown(() => _loadDriver("toolgate-fixture-no-such-driver", "sqliteLedger"));
    expect(e.code).toBe("E_LEDGER_DRIVER");
    expect(e.message).toBe(
      "sqliteLedger needs the package toolgate-fixture-no-such-driver (an optional peer dependency of toolgate), which is not installed: npm install toolgate-fixture-no-such-driver",
    );
  });

  it("a package that throws as it loads: 'could not be loaded', the error kept as the cause", () => {
    const path = fixture("throws-on-load.cjs");
    const e = thrown(() => _loadDriver(path, "sqliteLedger"));
    expect(e.code).toBe("E_LEDGER_DRIVER");
    expect(e.message).toBe(`sqliteLedger: the package ${path} is installed but could not be loaded: fixture: compiled against a different Node.js version`);
    expect(e.message).not.toMatch(/not installed|npm install/);
    expect(e.cause).toBeInstanceOf(Error);
    expect((e.cause as Error).message).toBe("fixture: compiled against a different Node.js version");
  });

  it("a package whose own dependency is missing is broken, not 'not installed'", () => {
    const path = fixture("needs-missing.cjs");
    const e = thrown(() => _loadDriver(path, "postgresLedger"));
    expect(e.message).toMatch(/^postgresLedger: the package .* is installed but could not be loaded: Cannot find module 'toolgate-fixture-no-such-dependency'$/);
    expect((e.cause as { code?: unknown }).code).toBe("MODULE_NOT_FOUND");
  });

  it("a probe that fails (better-sqlite3's addon loads on first open) is 'could not be loaded' too, and is tried again next time", () => {
    const path = fixture("loads.cjs");
    const broken = new Error("The module 'better_sqlite3.node' was compiled against a different Node.js version");
    const e = thrown(() =>
      _loadDriver(path, "sqliteLedger", () => {
        throw broken;
      }),
    );
    expect(e.message).toBe(`sqliteLedger: the package ${path} is installed but could not be loaded: ${broken.message}`);
    expect(e.cause).toBe(broken);
    let probes = 0;
    const probe = (): void => void probes++;
    expect(_loadDriver(path, "sqliteLedger", probe)).toEqual({ loaded: true });
    expect(_loadDriver(path, "sqliteLedger", probe)).toEqual({ loaded: true });
    expect(probes).toBe(1); // probed once, when first loaded
  });
});
