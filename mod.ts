/**
 * ctxkit — the library behind the `context-scan`, `context-guard`, `text-guard` and `prose` scripts.
 *
 * The scripts in `bin/` only parse arguments and print; what they do is available here as
 * functions with typed options and results. Failures throw a {@linkcode CtxkitError} subclass
 * carrying the exit code the script would use and the data a caller needs; nothing here exits the
 * process. The surface, by job:
 *
 * - **Scan** what may enter an agent's context: {@linkcode scanContext} ({@linkcode ScanOptions} →
 *   {@linkcode ScanResult}), {@linkcode renderScanDocument} (the CLI's exact bytes),
 *   {@linkcode parseScanDocument} (validate a document read back); the document types
 *   {@linkcode ScanDocument}, {@linkcode ScanRow}, {@linkcode ScanIssue}, {@linkcode ScanTotal},
 *   and `--observe`'s {@linkcode ScanObserved} ({@linkcode ScanObservedSource},
 *   {@linkcode ScanObservedSize}; with `--observe-tiers` {@linkcode ScanObservedTiers}: each
 *   {@linkcode ScanObservedInvocation}, {@linkcode ScanObservedSpawn} and
 *   {@linkcode ScanObservedAccess}); {@linkcode invocationText}, what invoking a skill sends.
 * - **Guard** an in-place rewrite: {@linkcode guardRoots}, then {@linkcode snapshot},
 *   {@linkcode checkpoint}, {@linkcode verify} (a failed gate rolls the whole run back),
 *   {@linkcode verifyDeleted}, {@linkcode restore}, {@linkcode rollback}, each with its
 *   `…Options`/`…Result` type; where lines go: {@linkcode Reporter} ({@linkcode consoleReporter},
 *   {@linkcode silentReporter}, {@linkcode collectingReporter}), a line being a {@linkcode Text}.
 * - **Prose** override, for consumers: {@linkcode readProseFlag} → {@linkcode resolveLevel} before
 *   rendering, {@linkcode consumeTurn} after; {@linkcode writeProseFlag} and
 *   {@linkcode clearProseFlag} to set it; {@linkcode FlagRead}, {@linkcode ProseFlag} and their
 *   small types.
 * - **Failures**: {@linkcode CtxkitError} (`exitCode`, `text`), {@linkcode UsageError},
 *   {@linkcode EnvironmentError}; {@linkcode OutputError} (a lost output line, with its own
 *   `exitCode`, on purpose no `CtxkitError`); the guard's {@linkcode PathRefusedError},
 *   {@linkcode SnapshotMissingError}, {@linkcode ManifestError}, {@linkcode RestoreRefusedError},
 *   {@linkcode DirtyTreeError}.
 *
 * Inventory the context sources of a project:
 *
 * ```ts ignore
 * import { renderScanDocument, scanContext } from "./mod.ts";
 * const { document, complete } = scanContext({ root: ".", global: true, loaded: true });
 * if (!complete) throw new Error(`incomplete inventory: ${document.scan_issues.length} issues`);
 * console.log(document.totals["always-on"].loaded?.tokens);
 * Deno.stdout.writeSync(new TextEncoder().encode(renderScanDocument(document))); // byte-exact JSON
 * ```
 *
 * Guard an in-place rewrite: snapshot, let the optimizer write, record ownership, verify.
 *
 * ```ts ignore
 * import { checkpoint, guardRoots, snapshot, verify } from "./mod.ts";
 * const roots = guardRoots();
 * const run = await snapshot({ roots, files: ["CLAUDE.md"], scriptPath: "/opt/ctxkit/bin/context-guard.ts" });
 * // … the optimizer rewrites CLAUDE.md …
 * await checkpoint({ runDir: run.runDir, projectDir: run.root, files: ["CLAUDE.md"] });
 * const result = await verify({ roots, runDir: run.runDir, files: ["CLAUDE.md"] });
 * if (!result.passed) console.error(result.gate.files.filter((f) => f.gate === "fail"));
 * ```
 *
 * Honour the prose override before rendering:
 *
 * ```ts ignore
 * import { consumeTurn, readProseFlag, resolveLevel } from "./mod.ts";
 * const read = readProseFlag();
 * const level = resolveLevel(read); // "off" → default quantization, else "minimal" | "full"
 * // … render the answer at `level` …
 * if (read.state === "active" && read.flag?.ttl.unit === "turn") consumeTurn();
 * ```
 *
 * Contracts: `references/context-scan.md`, `references/context-guard.md`, `references/prose.md`,
 * `references/output.md`; JSON Schemas of every document in `references/schemas/`.
 *
 * @module
 */

export { CtxkitError, EnvironmentError, OutputError, UsageError } from "./lib/errors.ts";
export type { Text } from "./lib/text.ts";
export * from "./lib/scan/mod.ts";
export * from "./lib/guard/mod.ts";
export * from "./lib/prose/mod.ts";
