/**
 * The `text-guard` command line (`references/context-guard.md#text-guard`): parses arguments,
 * prints, and maps results to exit codes; the operations live in `stage/`.
 *
 * @module
 */

import { type Self, selfCommand } from "../_cli/self.ts";
import { UsageError } from "../errors.ts";
import { envValue } from "../paths.ts";
import { shellCommand, shellQuote } from "../shell.ts";
import { text } from "../text.ts";
import {
  type GuardCommands,
  lastValue,
  operands,
  type ParsedArgs,
  readGuardLine,
  TOKENS,
  VALUE,
  withReporter,
} from "./cli_shared.ts";
import { osErrorAsFailure } from "./errors.ts";
import { setForceCommand } from "./force_command.ts";
import type { Reporter } from "./report.ts";

/**
 * `text-guard --help`, naming `program`: the name the tool runs by
 * (`references/cli.md#the-form-it-runs-as`).
 */
export function textGuardHelp(program: string): string {
  return `text-guard - preservation guard for in-place text optimization.

The optimizer rewrites files IN PLACE. This tool puts both sides of the
quality gate on DISK so the gate survives a context compaction, and it undoes
a rewrite that loses a critical fact.

usage: ${program} <command> [options] [--] [<file>...]
  (--opt V or --opt=V; -- ends the options; --help, --version)

  snapshot [--allow-dirty] [--quiet] [--run-dir D] <file>...   copy originals, print RUN_DIR
  verify   [--no-restore] [--tokens=base|ext] --run-dir D <file>...   token gate; restore unless disabled
  restore  [--force] --run-dir D <file>...           put the snapshot back
  checkpoint --run-dir D <file>...                  record owned draft hashes
  status   --run-dir D                               list what is snapshotted

Every command takes --json (one JSON document on stdout instead of the result lines).

Exit: 0 ok | 1 gate failed (restored unless --no-restore) | 2 usage/state error | 3 precondition
(dirty tree, or no git recovery path) - nothing was written.`;
}

const RUN_DIR = { "--run-dir": VALUE } as const;
/** Every subcommand prints one JSON document instead of its lines with `--json`. */
const JSON_FLAG = { "--json": {} } as const;

/** The subcommands of text-guard and the options each accepts. */
export const TEXT_GUARD_COMMANDS: GuardCommands = {
  snapshot: { options: { "--allow-dirty": {}, "--quiet": {}, ...JSON_FLAG, ...RUN_DIR } },
  checkpoint: { options: { ...JSON_FLAG, ...RUN_DIR } },
  verify: { options: { "--no-restore": {}, ...JSON_FLAG, ...RUN_DIR, "--tokens": TOKENS } },
  restore: { options: { "--force": {}, ...JSON_FLAG, ...RUN_DIR } },
  status: { options: { ...JSON_FLAG, ...RUN_DIR }, noPositionals: true },
};

/**
 * Run `text-guard <args>` and return its exit code; failures are thrown as typed errors (the bin's
 * `runMain` prints them).
 *
 * @example
 * ```ts ignore
 * import { textGuardMain } from "./text_guard_cli.ts";
 * const rc = await textGuardMain(["status", "--run-dir", "/tmp/run"], {
 *   tool: "text-guard",
 *   scriptPath: "/opt/ctxkit/bin/text-guard.ts",
 * });
 * ```
 */
export async function textGuardMain(args: readonly string[], self: Self): Promise<number> {
  try {
    return await textGuard(args, self);
  } catch (e) {
    throw osErrorAsFailure(e); // never an internal error for a full disk or a denied path
  }
}

async function textGuard(args: readonly string[], self: Self): Promise<number> {
  const line = await readGuardLine(args, TEXT_GUARD_COMMANDS, self, textGuardHelp);
  if ("rc" in line) return line.rc;
  const { command, parsed: p } = line;
  const projectDir = envValue("CLAUDE_PROJECT_DIR");
  // The root is named: text-guard resolves its files against CLAUDE_PROJECT_DIR (else the cwd).
  setForceCommand((runDir, target, root) =>
    `CLAUDE_PROJECT_DIR=${shellQuote(root, { always: true })} ${
      shellCommand([
        ...selfCommand(self.scriptPath, ["--allow-all"]),
        "restore",
        "--run-dir",
        runDir,
        "--force",
        target.abs,
      ])
    }`
  );
  return await withReporter(
    "text-guard",
    command,
    p,
    (reporter) => run(command, p, projectDir, reporter),
  );
}

/** Run the parsed subcommand `command`, its lines going to `reporter`. */
async function run(
  command: string,
  p: ParsedArgs,
  projectDir: string | undefined,
  reporter: Reporter,
): Promise<number> {
  const runDir = lastValue(p, "--run-dir");
  const files = operands(p);
  switch (command) {
    case "snapshot": {
      const { stageSnapshot } = await import("./stage/snapshot.ts");
      const { trustFromEnv } = await import("./trust.ts");
      await stageSnapshot(
        {
          projectDir,
          files,
          allowDirty: p.flags.has("--allow-dirty"),
          runDir,
          trust: trustFromEnv(),
        },
        reporter,
      );
      return 0;
    }
    case "checkpoint": {
      if (runDir === undefined || files.length === 0) {
        throw new UsageError(text`checkpoint needs --run-dir and files`);
      }
      const { checkpoint } = await import("./stage/checkpoint.ts");
      await checkpoint({ projectDir, runDir, files }, reporter);
      return 0;
    }
    case "verify": {
      if (runDir === undefined) throw new UsageError(text`verify needs --run-dir`);
      if (files.length === 0) throw new UsageError(text`verify needs at least one file`);
      const { stageVerify } = await import("./stage/verify.ts");
      const result = stageVerify({
        projectDir,
        runDir,
        files,
        noRestore: p.flags.has("--no-restore"),
        alphabet: p.alphabet,
      }, reporter);
      return result.filesFailed > 0 ? 1 : 0;
    }
    case "restore": {
      if (runDir === undefined) throw new UsageError(text`restore needs --run-dir`);
      if (files.length === 0) throw new UsageError(text`restore needs at least one file`);
      const { stageRestore } = await import("./stage/restore.ts");
      await stageRestore({ projectDir, runDir, files, force: p.flags.has("--force") }, reporter);
      return 0;
    }
    default: {
      if (runDir === undefined) throw new UsageError(text`status needs --run-dir`);
      const { stageStatus } = await import("./stage/status.ts");
      stageStatus(runDir, reporter);
      return 0;
    }
  }
}
