#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-write --allow-env --allow-run=git
/**
 * `context-guard` — snapshot / verify / rollback / restore / state for context-slim
 * (spec: context-guard.md §6–§7). Parses arguments and prints; the commands live in `lib/guard/`.
 */
import { existsFollow } from "../lib/guard/fsx.ts";
import { ArgCursor } from "../lib/args.ts";
import { die, runMain } from "../lib/exit.ts";
import { writeOut } from "../lib/io.ts";
import { consoleReporter } from "../lib/guard/report.ts";
import { guardRoots, type Layer } from "../lib/guard/roots.ts";
import { parseAlphabet, type TokenAlphabet } from "../lib/guard/tokens.ts";
import { snapshot } from "../lib/guard/commands/snapshot.ts";
import { verify } from "../lib/guard/commands/verify.ts";
import { list, restore, rollback } from "../lib/guard/commands/restore.ts";
import { stateMain } from "../lib/guard/state.ts";
import { verifyDeletedMain } from "../lib/guard/verify_deleted.ts";

const HELP = `context-guard - snapshot / verify / rollback / restore / state for context-slim.

  snapshot       [--project|--global] [--run-dir D] [--allow-dirty] <file>...
  verify         [--project|--global] [--run-dir D | last | <ts>] [--ledger L] [--tokens=base|ext] <file>...
  verify-deleted [--project|--global] [--run-dir D | last | <ts>] [--tokens=base|ext] --survivor S [--survivor S]... <deleted-file>
  rollback       [--run-dir D]...                        whole run, every layer, every file
  restore        [--project|--global] [--run-dir D | last | <ts>] [<file>...]
  state          --mode M --before A.json --after B.json [--flags S] [--ledger F] [--root R] [--out P]
  state --check  [--root R] [--out P]                    ratchet present? (virgin-surface test)
  list                                                   backups, newest first

Layers: project = $CLAUDE_PROJECT_DIR or the current directory; global = $CLAUDE_CONFIG_DIR or
$HOME/.claude. Backups: <global>/backups/<YYYYMMDD-HHMMSS>-<layer>_context-slim/ (orig/ +
manifest.json). Untracked/git-ignored targets are SNAPSHOT-ONLY; a dirty TRACKED target exits 3
unless --allow-dirty. Restore needs original bytes or a matching draft checkpoint and never deletes.
Retention keeps the newest 5 backups.

Exit: 0 ok | 1 gate/checksum failed or recovery refused | 2 usage/state error | 3 dirty TRACKED target (nothing written)`;

/** The options one subcommand accepts. */
interface Accepts {
  layer?: boolean;
  allowDirty?: boolean;
  ledger?: boolean;
  tokens?: boolean;
  /** Positionals may be a `last`/`<ts>` selector (verify, restore). */
  selector?: boolean;
}

interface Parsed {
  layer?: Layer;
  runDirs: string[];
  allowDirty: boolean;
  ledger?: string;
  alphabet: TokenAlphabet;
  selector?: string;
  positionals: string[];
  /** `--run-dir` values and positionals in the order given (rollback's run dirs). */
  ordered: string[];
}

/** Left-to-right parse (§1): value options take the next argument verbatim. */
function parse(args: readonly string[], accepts: Accepts): Parsed {
  const cursor = new ArgCursor(args);
  const p: Parsed = {
    runDirs: [],
    allowDirty: false,
    alphabet: "base",
    positionals: [],
    ordered: [],
  };
  while (!cursor.done) {
    const arg = cursor.next();
    if (arg === "--run-dir") {
      p.runDirs.push(cursor.requireValue(arg));
      p.ordered.push(p.runDirs[p.runDirs.length - 1]);
    } else if (accepts.layer && (arg === "--project" || arg === "--global")) {
      p.layer = arg === "--project" ? "project" : "global";
    } else if (accepts.allowDirty && arg === "--allow-dirty") p.allowDirty = true;
    else if (accepts.ledger && arg === "--ledger") p.ledger = cursor.requireValue(arg);
    else if (accepts.tokens && arg.startsWith("--tokens=")) {
      p.alphabet = parseAlphabet(arg.slice("--tokens=".length));
    } else if (arg.startsWith("-")) die(`❌ unknown option: ${arg}`);
    else if (
      accepts.selector && p.runDirs.length === 0 && p.selector === undefined && !existsFollow(arg)
    ) {
      p.selector = arg; // §6.1 selector heuristic
    } else {
      p.positionals.push(arg);
      p.ordered.push(arg);
    }
  }
  return p;
}

function main(args: readonly string[]): number {
  if (args.length === 0) {
    writeOut(HELP);
    return 2;
  }
  const [command, ...rest] = args;
  if (command === "help" || command === "-h" || command === "--help") {
    writeOut(HELP);
    return 0;
  }
  const known = ["snapshot", "verify", "verify-deleted", "rollback", "restore", "state", "list"];
  if (!known.includes(command)) die(`❌ unknown command: ${command}`);
  const roots = guardRoots();
  const reporter = consoleReporter;
  switch (command) {
    case "snapshot": {
      const p = parse(rest, { layer: true, allowDirty: true });
      snapshot({
        roots,
        layer: p.layer,
        files: p.positionals,
        runDir: p.runDirs.at(-1),
        allowDirty: p.allowDirty,
        scriptPath: import.meta.filename ?? new URL(import.meta.url).pathname,
        reporter,
      });
      return 0;
    }
    case "verify": {
      const p = parse(rest, { layer: true, ledger: true, tokens: true, selector: true });
      return verify({
        roots,
        layer: p.layer,
        runDir: p.runDirs.at(-1),
        selector: p.selector,
        ledger: p.ledger,
        alphabet: p.alphabet,
        files: p.positionals,
        reporter,
      }).exitCode;
    }
    case "restore": {
      const p = parse(rest, { layer: true, selector: true });
      return restore({
        roots,
        layer: p.layer,
        runDir: p.runDirs.at(-1),
        selector: p.selector,
        files: p.positionals,
        reporter,
      }).exitCode;
    }
    case "rollback": {
      const p = parse(rest, {});
      return rollback({ roots, runDirs: p.ordered, reporter }).exitCode;
    }
    case "list":
      list(roots, reporter);
      return 0;
    case "state":
      return stateMain(rest);
    case "verify-deleted":
      return verifyDeletedMain(rest, roots, reporter);
    default:
      die(`❌ unknown command: ${command}`);
  }
}

Deno.exit(await runMain(() => main(Deno.args)));
