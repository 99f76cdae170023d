/**
 * The context-scan command line (§1): left-to-right parsing with the exact error lines, and the
 * 14-line help text.
 *
 * @module
 */

import { ArgCursor } from "../args.ts";
import { die } from "../exit.ts";
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

/** Parsed command line: either a help request or scan options. */
export type ScanCommand =
  | { help: true }
  | {
    help: false;
    /** `--root` value as given, when present. */
    root?: string;
    /** `--global`. */
    global: boolean;
    /** `--tier` value (default `all`). */
    tier: TierFilter;
  };

/**
 * Parse context-scan's arguments; throws a `CtxkitError` (exit 2) with the exact §1 line.
 *
 * @example
 * ```ts
 * import { parseScanArgs } from "./cli.ts";
 * parseScanArgs(["--root", "--global"]); // { help: false, root: "--global", global: false, tier: "all" }
 * ```
 */
export function parseScanArgs(argv: readonly string[]): ScanCommand {
  const args = new ArgCursor(argv);
  let root: string | undefined;
  let global = false;
  let tier: TierFilter = "all";
  while (!args.done) {
    const arg = args.next();
    switch (arg) {
      case "--root": {
        root = args.requireValue(arg);
        break;
      }
      case "--global":
        global = true;
        break;
      case "--tier": {
        const value = args.value() ?? "";
        if (!isTierFilter(value)) die(`❌ unknown tier: ${value}`);
        tier = value;
        break;
      }
      case "--json":
        break;
      case "-h":
      case "--help":
      case "help":
        return { help: true };
      default:
        die(`❌ unknown option: ${arg}`);
    }
  }
  return root === undefined ? { help: false, global, tier } : { help: false, root, global, tier };
}
