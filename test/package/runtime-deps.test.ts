/**
 * Every package the shipped code imports at run time is one an installer gets: a dependency, or
 * an optional peer the code loads only when the user has it. A devDependency import works in this
 * repository and breaks for every user (fast-check in toolgate/testing did).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

/** Bare specifiers of value imports and re-exports (type-only ones vanish at compile time), static and dynamic. */
function imported(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(?!type\s)[^;]*?\sfrom\s+"([^"]+)"/g)) out.push(m[1]!);
  for (const m of text.matchAll(/(?:^|\n)\s*import\s+"([^"]+)"/g)) out.push(m[1]!);
  for (const m of text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)) out.push(m[1]!);
  return out.filter((s) => !s.startsWith(".") && !s.startsWith("node:")).map((s) => (s.startsWith("@") ? s.split("/").slice(0, 2).join("/") : s.split("/")[0]!));
}

describe("the published package's imports", () => {
  it("are dependencies, or optional peers", () => {
    const deps = new Set(Object.keys(pkg.dependencies ?? {}));
    const peers = new Set(Object.keys(pkg.peerDependencies ?? {}));
    const used = new Map<string, string>();
    for (const file of sources(join(root, "src"))) for (const name of imported(readFileSync(file, "utf8"))) used.set(name, file.slice(root.length));
    expect(used.size).toBeGreaterThan(5); // the scan found the imports
    // tsx: loaded by the CLI only for a .ts module, with a clear error when it is missing.
    const missing = [...used].filter(([name]) => !deps.has(name) && !peers.has(name) && name !== "tsx");
    expect(missing).toEqual([]);
  });
});

describe("the package's exports map", () => {
  it("points every entry at the build of a source file that exists, for import, default and types", () => {
    const exportsMap = pkg.exports as unknown as Record<string, string | Record<string, string>>;
    const targets = Object.entries(exportsMap).filter(([k]) => k !== "./package.json");
    expect(targets.length).toBeGreaterThan(5);
    for (const [entry, t] of targets) {
      expect(typeof t, entry).toBe("object");
      const { types, import: imp, default: def } = t as Record<string, string>;
      expect(def, entry).toBe(imp); // require(esm) on Node ≥ 20.19 resolves "default"
      const source = imp!.replace(/^\.\/dist\//, "").replace(/\.js$/, ".ts");
      expect(readdirSync(join(root, source, "..")), entry).toContain(source.split("/").pop());
      expect(types, entry).toBe(imp!.replace(/\.js$/, ".d.ts"));
    }
  });
});
