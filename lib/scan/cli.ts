/**
 * The context-scan command line: the one place that parses arguments, prints (help, warnings, the
 * document) and turns a scan into an exit code. Contract:
 * `references/context-scan.md#command-line` and `references/context-scan.md#exit-codes-and-stderr`.
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import { printed, text } from "../text.ts";
import { ArgCursor } from "../_cli/args.ts";
import { writeErr, writeOutRaw } from "../_cli/output.ts";
import { renderScanDocument } from "./document.ts";
import { type ScanOptions, scanProject, type ScanResult } from "./scan.ts";
import type { ScanDocument, TierFilter } from "./schema.ts";
import { envValue } from "../paths.ts";
import { resolvePluginDirs } from "./roots.ts";

// A plain list, not the zod enum: the CLI parses no JSON, so the bundle needs no zod.
// Kept here, not imported from observe/run.ts: a plain scan must not load the observation code.
const OBSERVE_CHILD_ARG = "__observe-child";

const TIER_FILTERS: readonly string[] = ["all", "always-on", "per-spawn", "per-invocation"];

function isTierFilter(value: string): value is TierFilter {
  return TIER_FILTERS.includes(value);
}

/** The help text printed by `--help`, `-h` and `help` (17 lines). */
export const SCAN_HELP =
  `context-scan.ts - discover potential context inventory and byte-size proxies.

  context-scan.ts [--root PATH] [--global] [--tier T] [--loaded] [--format F] [--budget N] [--json] [--help]

  --root PATH   project root to scan (default: CLAUDE_PROJECT_DIR, else git toplevel, else cwd)
  --global      also scan the global root (CLAUDE_CONFIG_DIR when set, else $HOME/.claude)
  --tier T      always-on | per-spawn | per-invocation | all   (default: all)
  --loaded      also report what Claude Code loads (loaded_bytes, loaded_tokens, limits)
  --format F    json (default) | table (a report a person can read; alias: report)
  --budget N    exit 1 when the always-on tokens (loaded ones with --loaded) exceed N
  --json        emit JSON on stdout (the default; same as --format json)

Tiers are inventory buckets, not observed loading: always-on includes conditional/imported
instructions and memory; per-spawn inventories agent files; per-invocation inventories skills
and lazy references. Loading conditions are reported separately; totals are potential sizes.

Exit: 0 complete inventory | 1 over --budget | 2 usage/state/discovery error (partial JSON has scan_issues; no project writes).
`;

/** The scan a command line asks for: `global` and `tier` always set, `root` only when given. */
export type ScanArgs = ScanOptions & { global: boolean; tier: TierFilter };

/** `--format` values: `json` (the default) or the table report (`table`, alias `report`). */
export type OutputFormat = "json" | "table";

/**
 * A parsed command line: a help request, or what to scan and how to print it. `loaded`, `format`
 * and `budget` are present only when their option was given (`--format json` and `--json` leave
 * the default).
 */
export type ScanCommand =
  | { help: true }
  | { help: false; scan: ScanArgs; loaded?: true; format?: "table"; budget?: number };

const WHOLE_NUMBER = /^[0-9]+$/;

/**
 * Parse context-scan's arguments left to right; throws a {@linkcode UsageError} with the exact
 * message of `references/context-scan.md#command-line`. Value options take the next argument
 * verbatim; a bare `--` ends the options, and since context-scan takes no operands any argument
 * after it is an error.
 *
 * @example
 * ```ts
 * import { parseScanArgs } from "./cli.ts";
 * parseScanArgs(["--root", "--global"]);
 * // { help: false, scan: { global: false, tier: "all", root: "--global" } }
 * ```
 */
export function parseScanArgs(argv: readonly string[]): ScanCommand {
  const args = new ArgCursor(argv);
  const scan: ScanArgs = { global: false, tier: "all" };
  const command: ScanCommand & { help: false } = { help: false, scan };
  while (!args.done) {
    const arg = args.next();
    if (args.operand) throw new UsageError(text`unexpected argument: ${arg}`);
    switch (arg) {
      case "--root":
        scan.root = args.requireValue(arg);
        break;
      case "--global":
        scan.global = true;
        break;
      case "--tier": {
        const value = args.value() ?? "";
        if (!isTierFilter(value)) throw new UsageError(text`unknown tier: ${value}`);
        scan.tier = value;
        break;
      }
      case "--json":
        delete command.format;
        break;
      case "--format": {
        const value = args.value() ?? "";
        if (value === "table" || value === "report") command.format = "table";
        else if (value === "json") delete command.format;
        else throw new UsageError(text`unknown format: ${value}`);
        break;
      }
      case "--loaded":
        command.loaded = true;
        break;
      case "--plugin-dir":
        scan.pluginDirs = [...(scan.pluginDirs ?? []), args.requireValue(arg)];
        break;
      case "--budget": {
        const value = args.value() ?? "";
        const budget = Number(value);
        if (!WHOLE_NUMBER.test(value) || !Number.isSafeInteger(budget)) {
          throw new UsageError(text`--budget needs a whole number of tokens: ${value}`);
        }
        command.budget = budget;
        break;
      }
      case "-h":
      case "--help":
      case "help":
        return { help: true };
      default:
        throw new UsageError(text`unknown option: ${arg}`);
    }
  }
  return command;
}

/** The stderr line of a warning: `⚠️ skipped unreadable directory: <path>`. */
export function warningLine(warning: ScanResult["warnings"][number]): string {
  return printed(text`⚠️ skipped unreadable directory: ${warning.path}`);
}

/** The exit code of a finished scan: 0 for a complete inventory, else 2. */
export function scanExitCode(result: ScanResult): 0 | 2 {
  return result.complete ? 0 : 2;
}

/**
 * The `--budget` check: the always-on total (loaded, with `--loaded`) against `budget` tokens, and
 * its one stderr line (`references/context-scan.md#budget`).
 *
 * @example
 * ```ts ignore
 * budgetCheck(document, 1000);
 * // { exceeded: true, line: "BUDGET: exceeded always-on loaded 1234 > 1000 tokens" }
 * ```
 */
export function budgetCheck(
  document: ScanDocument,
  budget: number,
): { exceeded: boolean; line: string } {
  const total = document.totals["always-on"];
  const loaded = total.loaded;
  const tokens = loaded?.tokens ?? total.tokens;
  const what = loaded === undefined ? "always-on" : "always-on loaded";
  return tokens > budget
    ? { exceeded: true, line: `BUDGET: exceeded ${what} ${tokens} > ${budget} tokens` }
    : { exceeded: false, line: `BUDGET: ok ${what} ${tokens} <= ${budget} tokens` };
}

/**
 * The report's width: `COLUMNS` when it is a whole number, else the terminal's width when stdout
 * is a terminal, else 80.
 */
export function reportWidth(): number {
  const columns = envValue("COLUMNS");
  if (columns !== undefined && WHOLE_NUMBER.test(columns)) return Number(columns);
  try {
    if (Deno.stdout.isTerminal()) return Deno.consoleSize().columns;
  } catch { /* no console size: fall through */ }
  return 80;
}

/** Colour only on a terminal, and never when `NO_COLOR` is set (non-empty). */
export function reportColor(): boolean {
  if (envValue("NO_COLOR") !== undefined) return false;
  try {
    return Deno.stdout.isTerminal();
  } catch {
    return false;
  }
}

/**
 * Run context-scan with `args` and return its exit code: help on stdout, or the warnings on stderr
 * followed by the document (or the table report) on stdout, then the `--budget` line on stderr.
 * The loading rules and the report renderer are loaded only when asked for. Errors are thrown for
 * `runMain` to print.
 *
 * @example
 * ```ts ignore
 * import { runMain } from "../_cli/run.ts";
 * Deno.exit(await runMain(() => scanMain(Deno.args)));
 * ```
 */
export async function scanMain(args: readonly string[]): Promise<number> {
  if (args[0] === OBSERVE_CHILD_ARG && args.length === 1) {
    // The observation child inside its namespace (references/context-scan.md#observe).
    const { observeChild } = await import("./observe/run.ts");
    writeOutRaw(`${await observeChild(Deno.env.toObject())}\n`);
    return 0;
  }
  const command = parseScanArgs(args);
  if (command.help) {
    writeOutRaw(SCAN_HELP);
    return 0;
  }
  const options: ScanOptions = { ...command.scan, loaded: command.loaded === true };
  const pluginDirs = resolvePluginDirs(command.scan.pluginDirs ?? []);
  const loading = command.loaded
    ? (await import("./loading.ts")).createLoadingStep({ pluginDirs })
    : undefined;
  const result = scanProject(options, loading);
  writeErr(...result.warnings.map(warningLine));
  if (command.format === "table") {
    const { renderReport } = await import("./report.ts");
    const report = renderReport(result.document, {
      width: reportWidth(),
      color: reportColor(),
      home: envValue("HOME"),
    });
    writeOutRaw(report);
  } else {
    writeOutRaw(renderScanDocument(result.document));
  }
  let rc: number = scanExitCode(result);
  if (command.budget !== undefined) {
    const check = budgetCheck(result.document, command.budget);
    writeErr(check.line);
    if (check.exceeded && rc === 0) rc = 1;
  }
  return rc;
}
