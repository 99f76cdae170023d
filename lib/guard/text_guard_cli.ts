/**
 * The `text-guard` command line (`references/context-guard.md#text-guard`): parses arguments,
 * prints, and maps results to exit codes; the operations live in `stage/`.
 *
 * @module
 */

import { writeOut } from "../_cli/output.ts";
import { UsageError } from "../errors.ts";
import { envValue } from "../paths.ts";
import { text } from "../text.ts";
import {
  lastValue,
  operands,
  type OptionSpec,
  type ParsedArgs,
  parseGuardArgs,
} from "./cli_shared.ts";
import { osErrorAsFailure } from "./errors.ts";
import { consoleReporter, type Reporter } from "./report.ts";
import { selfCommand } from "../_cli/self.ts";
import { shellCommand, shellQuote } from "../shell.ts";
import { setForceCommand } from "./force_command.ts";

/** `text-guard --help`. */
export const TEXT_GUARD_HELP = `text-guard - preservation guard for in-place text optimization.

The optimizer rewrites files IN PLACE. This tool puts both sides of the
quality gate on DISK so the gate survives a context compaction, and it undoes
a rewrite that loses a critical fact.

  snapshot [--allow-dirty] [--quiet] [--run-dir D] <file>...   copy originals, print RUN_DIR
  verify   [--no-restore] [--tokens=base|ext] --run-dir D <file>...   token gate; restore unless disabled
  restore  [--force] --run-dir D <file>...           put the snapshot back
  checkpoint --run-dir D <file>...                  record owned draft hashes
  status   --run-dir D                               list what is snapshotted

Every command takes --json (one JSON document on stdout instead of the result lines).

Exit: 0 ok | 1 gate failed (restored unless --no-restore) | 2 usage/state error | 3 precondition
(dirty tree, or no git recovery path) - nothing was written.`;

const RUN_DIR = { "--run-dir": { key: "runDir" } } as const;
/** Every subcommand prints one JSON document instead of its lines with `--json`. */
const JSON_FLAG = { "--json": "json" } as const;

/** The options each text-guard subcommand accepts. */
export const TEXT_GUARD_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  snapshot: {
    flags: { "--allow-dirty": "allowDirty", "--quiet": "quiet", ...JSON_FLAG },
    values: RUN_DIR,
  },
  checkpoint: { flags: JSON_FLAG, values: RUN_DIR },
  verify: { flags: { "--no-restore": "noRestore", ...JSON_FLAG }, values: RUN_DIR, tokens: true },
  restore: { flags: { "--force": "force", ...JSON_FLAG }, values: RUN_DIR },
  status: { flags: JSON_FLAG, values: RUN_DIR, noOperands: true, unknownWord: "argument" },
};

/**
 * Run `text-guard <args>` and return its exit code; failures are thrown as typed errors (the bin's
 * `runMain` prints them).
 *
 * @example
 * ```ts ignore
 * import { textGuardMain } from "./text_guard_cli.ts";
 * const rc = await textGuardMain(["status", "--run-dir", "/tmp/run"]);
 * ```
 */
export async function textGuardMain(
  args: readonly string[],
  env: TextGuardEnvironment = {},
): Promise<number> {
  try {
    return await textGuard(args, env);
  } catch (e) {
    throw osErrorAsFailure(e); // never an internal error for a full disk or a denied path
  }
}

/** What the bin passes in. */
export interface TextGuardEnvironment {
  /** Absolute path of the running script or bundle (the forced-restore command it prints). */
  scriptPath?: string;
}

async function textGuard(args: readonly string[], env: TextGuardEnvironment): Promise<number> {
  const projectDir = envValue("CLAUDE_PROJECT_DIR");
  const scriptPath = env.scriptPath;
  if (scriptPath !== undefined) {
    // The root is named: text-guard resolves its files against CLAUDE_PROJECT_DIR (else the cwd).
    setForceCommand((runDir, target, root) =>
      `CLAUDE_PROJECT_DIR=${shellQuote(root, { always: true })} ${
        shellCommand([
          ...selfCommand(scriptPath, ["--allow-all"]),
          "restore",
          "--run-dir",
          runDir,
          "--force",
          target.abs,
        ])
      }`
    );
  }
  if (args.length === 0) {
    writeOut(TEXT_GUARD_HELP);
    return 2;
  }
  const [command, ...rest] = args;
  if (command === "help" || command === "-h" || command === "--help") {
    writeOut(TEXT_GUARD_HELP);
    return 0;
  }
  const spec = TEXT_GUARD_OPTIONS[command];
  if (spec === undefined) throw new UsageError(text`unknown command: ${command}`);
  const p = parseGuardArgs(rest, spec);
  if (!p.flags.has("json")) {
    const reporter = p.flags.has("quiet")
      ? (await import("./quiet.ts")).quietSnapshot(consoleReporter)
      : consoleReporter;
    return await run(command, p, projectDir, reporter);
  }
  const { jsonReporter } = await import("./json_report.ts");
  const json = jsonReporter("text-guard", command, consoleReporter);
  const runDir = lastValue(p, "runDir");
  if (runDir !== undefined && command !== "snapshot") json.runDir(runDir);
  return await json.print(() =>
    run(command, p, projectDir, json).catch((e) => Promise.reject(osErrorAsFailure(e)))
  );
}

/** Run the parsed subcommand `command`, its lines going to `reporter`. */
async function run(
  command: string,
  p: ParsedArgs,
  projectDir: string | undefined,
  reporter: Reporter,
): Promise<number> {
  const runDir = lastValue(p, "runDir");
  const files = operands(p);
  switch (command) {
    case "snapshot": {
      const { stageSnapshot } = await import("./stage/snapshot.ts");
      const { trustFromEnv } = await import("./trust.ts");
      await stageSnapshot(
        { projectDir, files, allowDirty: p.flags.has("allowDirty"), runDir, trust: trustFromEnv() },
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
        noRestore: p.flags.has("noRestore"),
        alphabet: p.alphabet,
      }, reporter);
      return result.filesFailed > 0 ? 1 : 0;
    }
    case "restore": {
      if (runDir === undefined) throw new UsageError(text`restore needs --run-dir`);
      if (files.length === 0) throw new UsageError(text`restore needs at least one file`);
      const { stageRestore } = await import("./stage/restore.ts");
      await stageRestore({ projectDir, runDir, files, force: p.flags.has("force") }, reporter);
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
