/**
 * The `context-guard` command line (`references/context-guard.md#context-guard`): parses
 * arguments, picks run dirs and selectors, and maps results to exit codes. The commands live in
 * `commands/`, loaded only for the subcommand that runs (start-up is latency for skills).
 *
 * @module
 */

import { type Self, selfCommand } from "../_cli/self.ts";
import { existsFollow } from "../_fs/inspect.ts";
import { text } from "../text.ts";
import {
  type ArgEvent,
  type GuardCommands,
  lastValue,
  LAYER_OPTIONS,
  type ParsedArgs,
  readGuardLine,
  TOKENS,
  VALUE,
  withReporter,
} from "./cli_shared.ts";
import { osErrorAsFailure } from "./errors.ts";
import type { Reporter } from "./report.ts";
import { shellCommand } from "../shell.ts";
import { setForceCommand } from "./force_command.ts";
import { type GuardRoots, guardRoots } from "./roots.ts";
import { looksLikeSelector, namesManifestFile } from "./selection.ts";

/**
 * `context-guard --help`, naming `program`: the name the tool runs by
 * (`references/cli.md#the-form-it-runs-as`).
 */
export function contextGuardHelp(program: string): string {
  return `context-guard - snapshot / verify / rollback / restore / state for context-slim.

usage: ${program} <command> [options] [--] [<file>...]
  (--opt V or --opt=V; -- ends the options; --help, --version)

  snapshot       [--project|--global] [--run-dir D] [--allow-dirty] [--quiet] <file>...
  verify         [--project|--global] [--run-dir D | last | <ts>] [--ledger L] [--tokens=base|ext] <file>...
  verify-deleted [--project|--global] [--run-dir D | last | <ts>] [--tokens=base|ext] --survivor S [--survivor S]... <deleted-file>
  rollback       [--run-dir D]...                        whole run, every layer, every file
  restore        [--project|--global] [--run-dir D | last | <ts>] [--dry-run] [<file>...]
  restore        --run-dir D --force <file>...            restore anyway, current bytes kept in displaced/
  state          --mode M --before A.json --after B.json [--flags S] [--ledger F] [--root R] [--out P]
  state --check  [--root R] [--out P]                    ratchet present? (virgin-surface test)
  list                                                   backups, newest first

Layers: project = $CLAUDE_PROJECT_DIR, else the git work tree's top level, else the current
directory; global = $CLAUDE_CONFIG_DIR or $HOME/.claude. Backups:
<global>/backups/<YYYYMMDD-HHMMSS>-<layer>_context-slim/ (orig/ + manifest.json).
Untracked/git-ignored targets are SNAPSHOT-ONLY; a dirty TRACKED target exits 3 unless
--allow-dirty. Restore needs original bytes or a matching draft checkpoint (a run taken with
CTXKIT_GUARD_TRUST=snapshot: no checkpoint for the file) and never deletes; what it overrides is
kept in <run dir>/displaced/. Retention keeps the newest 5 backups. Every command takes --json (one
JSON document on stdout instead of the result lines).

Exit: 0 ok | 1 gate/checksum failed or recovery refused | 2 usage/state error | 3 dirty TRACKED target (nothing written)`;
}

const RUN_DIR = { "--run-dir": VALUE } as const;
/** state's options accept an empty value. */
const STATE_VALUE = { value: true, empty: true } as const;
/** Every subcommand prints one JSON document instead of its lines with `--json`. */
const JSON_FLAG = { "--json": {} } as const;

/** The subcommands of context-guard and the options each accepts. */
export const CONTEXT_GUARD_COMMANDS: GuardCommands = {
  snapshot: {
    options: { ...LAYER_OPTIONS, "--allow-dirty": {}, "--quiet": {}, ...JSON_FLAG, ...RUN_DIR },
  },
  verify: {
    options: { ...LAYER_OPTIONS, "--tokens": TOKENS, ...JSON_FLAG, ...RUN_DIR, "--ledger": VALUE },
  },
  "verify-deleted": {
    options: {
      ...LAYER_OPTIONS,
      "--tokens": TOKENS,
      ...JSON_FLAG,
      ...RUN_DIR,
      "--survivor": VALUE,
    },
  },
  rollback: { options: { ...JSON_FLAG, ...RUN_DIR } },
  restore: {
    options: { ...LAYER_OPTIONS, "--force": {}, "--dry-run": {}, ...JSON_FLAG, ...RUN_DIR },
  },
  list: { options: JSON_FLAG, noPositionals: true },
  state: {
    options: {
      "--check": {},
      ...JSON_FLAG,
      "--mode": STATE_VALUE,
      "--before": STATE_VALUE,
      "--after": STATE_VALUE,
      "--flags": STATE_VALUE,
      "--ledger": STATE_VALUE,
      "--root": STATE_VALUE,
      "--out": STATE_VALUE,
    },
    noPositionals: true,
  },
};

/** What the bin passes in: the running tool (its script is recorded in `restore_cmd`). */
export type ContextGuardEnvironment = Self;

/**
 * The `last`/`<ts>` selector of `verify`, `restore` and `verify-deleted`, and the file operands
 * (`references/context-guard.md#selection`). An operand is a file when a `--run-dir` came before
 * it, or a selector already did, or something exists at that path, or it names a file listed in
 * one of this project's or the global root's runs (present or deleted); else it is the selector
 * when it has a selector's form (`last`, a run name, digits and dashes); else a file.
 */
export function splitSelector(
  events: readonly ArgEvent[],
  namesManifestFile: (arg: string) => boolean,
): { selector?: string; files: string[] } {
  let runDirSeen = false;
  let selector: string | undefined;
  const files: string[] = [];
  for (const e of events) {
    if (e.kind === "value" && e.option === "--run-dir") runDirSeen = true;
    else if (e.kind === "operand") {
      if (
        !runDirSeen && selector === undefined && looksLikeSelector(e.value) &&
        !existsFollow(e.value) && !namesManifestFile(e.value)
      ) {
        selector = e.value;
      } else files.push(e.value);
    }
  }
  return selector === undefined ? { files } : { selector, files };
}

/**
 * Run `context-guard <args>` and return its exit code; failures are thrown as typed errors (the
 * bin's `runMain` prints them with {@linkcode GUARD_ERROR_FORMAT}).
 *
 * @example
 * ```ts ignore
 * import { contextGuardMain } from "./context_guard_cli.ts";
 * const rc = await contextGuardMain(["list"], {
 *   tool: "context-guard",
 *   scriptPath: "/opt/ctxkit/bin/context-guard.ts",
 * });
 * ```
 */
export async function contextGuardMain(
  args: readonly string[],
  env: ContextGuardEnvironment,
): Promise<number> {
  try {
    return await contextGuard(args, env);
  } catch (e) {
    throw osErrorAsFailure(e); // never an internal error for a full disk or a denied path
  }
}

async function contextGuard(
  args: readonly string[],
  env: ContextGuardEnvironment,
): Promise<number> {
  const line = await readGuardLine(args, CONTEXT_GUARD_COMMANDS, env, contextGuardHelp);
  if ("rc" in line) return line.rc;
  const { command, parsed: p } = line;
  const roots = guardRoots();
  setForceCommand((runDir, target) =>
    shellCommand([
      ...selfCommand(env.scriptPath, ["--allow-all"]),
      "restore",
      "--run-dir",
      runDir,
      "--force",
      target.arg,
    ])
  );
  return await withReporter(
    "context-guard",
    command,
    p,
    (reporter) => run(command, p, roots, reporter, env),
  );
}

/** Run the parsed subcommand `command`, its lines going to `reporter`. */
async function run(
  command: string,
  p: ParsedArgs,
  roots: GuardRoots,
  reporter: Reporter,
  env: ContextGuardEnvironment,
): Promise<number> {
  if (command === "list") {
    const { list } = await import("./commands/list.ts");
    list(roots, reporter);
    return 0;
  }
  const runDir = lastValue(p, "--run-dir");
  const inManifest = (arg: string) => namesManifestFile(arg, roots);
  switch (command) {
    case "snapshot": {
      const { snapshot } = await import("./commands/snapshot.ts");
      const { trustFromEnv } = await import("./trust.ts");
      const files = p.events.flatMap((e) => (e.kind === "operand" ? [e.value] : []));
      await snapshot({
        roots,
        layer: p.layer,
        files,
        runDir,
        allowDirty: p.flags.has("--allow-dirty"),
        scriptPath: env.scriptPath,
        trust: trustFromEnv(),
      }, reporter);
      return 0;
    }
    case "verify": {
      const { verify } = await import("./commands/verify.ts");
      const { selector, files } = splitSelector(p.events, inManifest);
      const result = await verify({
        roots,
        layer: p.layer,
        runDir,
        selector,
        ledger: lastValue(p, "--ledger"),
        alphabet: p.alphabet,
        files,
      }, reporter);
      return result.passed ? 0 : result.rollback?.exitCode === 2 ? 2 : 1;
    }
    case "verify-deleted": {
      const { verifyDeleted } = await import("./commands/verify_deleted.ts");
      const { selector, files } = splitSelector(p.events, inManifest);
      const result = await verifyDeleted({
        roots,
        layer: p.layer,
        runDir,
        selector,
        alphabet: p.alphabet,
        survivors: p.values.get("--survivor") ?? [],
        targets: files,
      }, reporter);
      if (result.outcome === "merged") return 0;
      return result.rollback?.exitCode === 2 ? 2 : 1;
    }
    case "restore": {
      const { restore } = await import("./commands/restore.ts");
      const { selector, files } = splitSelector(p.events, inManifest);
      const options = {
        roots,
        layer: p.layer,
        runDir,
        selector,
        files,
        force: p.flags.has("--force"),
      };
      if (p.flags.has("--dry-run")) {
        const { planRestore } = await import("./commands/restore_plan.ts");
        return planRestore(options, reporter).exitCode;
      }
      return (await restore(options, reporter)).exitCode;
    }
    case "rollback": {
      const { rollback } = await import("./commands/restore.ts");
      const runDirs = p.events.flatMap((e) => (e.kind === "layer" ? [] : [e.value]));
      return (await rollback({ roots, runDirs }, reporter)).exitCode;
    }
    default: {
      const { stateExists, statePath, writeState } = await import("./commands/state.ts");
      const value = (key: string) => lastValue(p, `--${key}`);
      const path = statePath({ root: value("root"), out: value("out") }, roots.project);
      if (p.flags.has("--check")) {
        reporter.out(text`STATE: ${stateExists(path) ? "present" : "absent"} ${path}`);
        return 0;
      }
      // "" is never a file: writeState names the first missing input, in the documented order.
      await writeState(
        {
          mode: value("mode") ?? "",
          before: value("before") ?? "",
          after: value("after") ?? "",
          flags: value("flags"),
          ledger: value("ledger"),
        },
        path,
        { root: value("root") || roots.project, backups: roots.backups },
        reporter,
      );
      reporter.out(text`STATE: written ${path}`);
      return 0;
    }
  }
}
