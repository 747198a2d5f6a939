/**
 * The published declarations name no optional peer: a user who never installs better-sqlite3 or pg
 * (nor their types) must still type-check against toolgate without `skipLibCheck`. The check walks
 * the declaration files reachable from the exports map, as a consumer's compiler would.
 */
import { readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, { types?: string } | string>; peerDependencies?: Record<string, string> };

/** Every declaration file the build would write, by path relative to the package root (`dist/...`). */
function emitDeclarations(): Map<string, string> {
  const configPath = join(root, "tsconfig.build.json");
  const config = ts.getParsedCommandLineOfConfigFile(configPath, { declaration: true, emitDeclarationOnly: true, noEmit: false }, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    },
  });
  if (config === undefined) throw new Error("tsconfig.build.json did not parse");
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
  const out = new Map<string, string>();
  const result = program.emit(undefined, (file, text) => {
    if (file.endsWith(".d.ts")) out.set(posix.relative(root.replaceAll("\\", "/"), file.replaceAll("\\", "/")), text);
  });
  expect(result.emitSkipped).toBe(false);
  return out;
}

/** Module specifiers a declaration file imports or re-exports, type-only and `import("…")` types included (comments are not read). */
function specifiers(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/**
 * The optional peers an entry point's declarations may name: the framework a subpath exists for
 * (its user has it installed). The main entry, the ledger and the rest name none.
 */
const allowed: Record<string, readonly string[]> = {
  // The barrel re-exports every adapter; README says to import one SDK's own entry when only it is installed.
  "./adapters": ["ai", "@openai/agents", "openai", "@anthropic-ai/sdk"],
  "./otel": ["@opentelemetry/api"],
  "./adapters/ai-sdk": ["ai"],
  "./adapters/openai-agents": ["@openai/agents"],
  "./adapters/openai": ["openai"],
  "./adapters/anthropic": ["@anthropic-ai/sdk"],
};

describe("the published declarations", () => {
  it("name only the optional peer an entry point is for, and no lib type newer than the code needs", { timeout: 60_000 }, () => {
    const files = emitDeclarations();
    const peers = Object.keys(pkg.peerDependencies ?? {});
    expect(peers).toEqual(expect.arrayContaining(["better-sqlite3", "pg"]));
    const entries = Object.entries(pkg.exports).filter(([k]) => k !== "./package.json");
    expect(entries.length).toBeGreaterThan(5);
    const offending: string[] = [];
    let walked = 0;
    for (const [entry, target] of entries) {
      const ok = allowed[entry] ?? [];
      const seen = new Set<string>();
      const todo = [(typeof target === "string" ? target : target.types!).replace(/^\.\//, "")];
      while (todo.length > 0) {
        const file = todo.pop()!;
        if (seen.has(file)) continue;
        seen.add(file);
        const text = files.get(file);
        expect(text, `${file} is emitted`).toBeDefined();
        for (const spec of specifiers(text!)) {
          if (spec.startsWith(".")) todo.push(posix.join(posix.dirname(file), spec).replace(/\.js$/, ".d.ts"));
          else {
            const peer = peers.find((p) => spec === p || spec.startsWith(`${p}/`));
            if (peer !== undefined && !ok.includes(peer)) offending.push(`${entry}: ${file} imports ${spec}`);
          }
        }
        // ErrorOptions needs lib es2022: a consumer on an older lib would fail to read the file.
        if (/\bErrorOptions\b/.test(text!)) offending.push(`${entry}: ${file} names ErrorOptions`);
      }
      walked += seen.size;
    }
    expect(walked).toBeGreaterThan(40); // the walk followed the re-exports
    expect(offending).toEqual([]);
  });
});
