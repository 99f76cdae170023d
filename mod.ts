/**
 * ctxkit — the library behind the `context-scan`, `context-guard`, `text-guard` and `prose` scripts.
 *
 * The scripts in `bin/` only parse arguments and print; everything they do is available here as
 * functions with typed results. Failures throw {@linkcode CtxkitError}, which carries the exit code
 * the script would use; nothing here exits the process.
 *
 * Inventory the context sources of a project (`context-scan`):
 *
 * ```ts ignore
 * import { renderScanDocument, scanContext } from "./mod.ts";
 * const { document, exitCode } = scanContext({ root: ".", global: true });
 * if (exitCode !== 0) throw new Error(`incomplete inventory: ${document.scan_issues.length} issues`);
 * console.log(document.totals.grand.tokens);
 * Deno.stdout.writeSync(new TextEncoder().encode(renderScanDocument(document))); // byte-exact JSON
 * ```
 *
 * Guard an in-place rewrite (`context-guard`): snapshot, let the optimizer write, record ownership,
 * verify — a failed gate rolls the whole run back.
 *
 * ```ts ignore
 * import { checkpoint, guardRoots, silentReporter, snapshot, verify } from "./mod.ts";
 * const roots = guardRoots();
 * const reporter = silentReporter;
 * const run = snapshot({ roots, files: ["CLAUDE.md"], scriptPath: "/opt/ctxkit/bin/context-guard.ts", reporter });
 * // … the optimizer rewrites CLAUDE.md …
 * checkpoint({ runDir: run.runDir, projectDir: run.root, files: ["CLAUDE.md"], reporter });
 * const result = verify({ roots, runDir: run.runDir, files: ["CLAUDE.md"], reporter });
 * ```
 *
 * Honour the prose override before rendering (`prose`):
 *
 * ```ts ignore
 * import { consumeTurn, readProseFlag, resolveLevel } from "./mod.ts";
 * const read = readProseFlag();
 * const level = resolveLevel(read); // "off" → default quantization, else "minimal" | "full"
 * // … render the answer at `level` …
 * if (read.state === "active" && read.flag?.ttl.unit === "turn") consumeTurn();
 * ```
 *
 * Contracts: `references/context-scan.md`, `references/context-guard.md`, `references/prose.md`;
 * JSON Schemas of every document in `references/schemas/`.
 *
 * @module
 */

export { CtxkitError, EnvironmentError, OutputError, UsageError } from "./lib/errors.ts";
export type { Text } from "./lib/text.ts";
export * from "./lib/scan/mod.ts";
export * from "./lib/guard/mod.ts";
export * from "./lib/prose/mod.ts";
