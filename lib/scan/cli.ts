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
import { scanContext, type ScanOptions, type ScanResult, type ScanWarning } from "./scan.ts";
import type { TierFilter } from "./schema.ts";

// A plain list, not the zod enum: the CLI parses no JSON, so the bundle needs no zod.
const TIER_FILTERS: readonly string[] = ["all", "always-on", "per-spawn", "per-invocation"];

function isTierFilter(value: string): value is TierFilter {
  return TIER_FILTERS.includes(value);
}

/** The help text printed by `--help`, `-h` and `help` (14 lines). */
export const SCAN_HELP =
  `context-scan.ts - discover potential context inventory and byte-size proxies.

  context-scan.ts [--root PATH] [--global] [--tier T] [--json] [--help]

  --root PATH   project root to scan (default: CLAUDE_PROJECT_DIR, else git toplevel, else cwd)
  --global      also scan the global root (CLAUDE_CONFIG_DIR when set, else $HOME/.claude)
  --tier T      always-on | per-spawn | per-invocation | all   (default: all)
  --json        emit JSON on stdout (default, and the only output format)

Tiers are inventory buckets, not observed loading: always-on includes conditional/imported
instructions and memory; per-spawn inventories agent files; per-invocation inventories skills
and lazy references. Loading conditions are reported separately; totals are potential sizes.

Exit: 0 complete inventory | 2 usage/state/discovery error (partial JSON has scan_issues; no project writes).
`;

/** The scan a command line asks for: `global` and `tier` always set, `root` only when given. */
export type ScanArgs = ScanOptions & { global: boolean; tier: TierFilter };

/** A parsed command line: a help request, or what to scan. */
export type ScanCommand = { help: true } | { help: false; scan: ScanArgs };

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
        break;
      case "-h":
      case "--help":
      case "help":
        return { help: true };
      default:
        throw new UsageError(text`unknown option: ${arg}`);
    }
  }
  return { help: false, scan };
}

/** The stderr line of a warning: `⚠️ skipped unreadable directory: <path>`. */
export function warningLine(warning: ScanWarning): string {
  return printed(text`⚠️ skipped unreadable directory: ${warning.path}`);
}

/** The exit code of a finished scan: 0 for a complete inventory, else 2. */
export function scanExitCode(result: ScanResult): 0 | 2 {
  return result.complete ? 0 : 2;
}

/**
 * Run context-scan with `args` and return its exit code: help on stdout, or the warnings on stderr
 * followed by the document on stdout. Errors are thrown for `runMain` to print.
 *
 * @example
 * ```ts ignore
 * import { runMain } from "../_cli/run.ts";
 * Deno.exit(await runMain(() => scanMain(Deno.args)));
 * ```
 */
export function scanMain(args: readonly string[]): number {
  const command = parseScanArgs(args);
  if (command.help) {
    writeOutRaw(SCAN_HELP);
    return 0;
  }
  const result = scanContext(command.scan);
  writeErr(...result.warnings.map(warningLine));
  writeOutRaw(renderScanDocument(result.document));
  return scanExitCode(result);
}
