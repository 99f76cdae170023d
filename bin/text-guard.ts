#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-write --allow-env --allow-run=git
/**
 * `text-guard` — preservation guard for in-place text optimization (spec: context-guard.md §5).
 * Parses arguments and prints; the operations live in `lib/guard/stage.ts`.
 */
import { ArgCursor } from "../lib/args.ts";
import { die, runMain } from "../lib/exit.ts";
import { writeOut } from "../lib/io.ts";
import { envValue } from "../lib/paths.ts";
import { consoleReporter } from "../lib/guard/report.ts";
import {
  stageCheckpoint,
  stageRestore,
  stageSnapshot,
  stageStatus,
  stageVerify,
} from "../lib/guard/stage.ts";
import { parseAlphabet, type TokenAlphabet } from "../lib/guard/tokens.ts";

const HELP = `text-guard - preservation guard for in-place text optimization.

The optimizer rewrites files IN PLACE. This tool puts both sides of the
quality gate on DISK so the gate survives a context compaction, and it undoes
a rewrite that loses a critical fact.

  snapshot [--allow-dirty] [--run-dir D] <file>...   copy originals, print RUN_DIR
  verify   [--no-restore] [--tokens=base|ext] --run-dir D <file>...   token gate; restore unless disabled
  restore  --run-dir D <file>...                     put the snapshot back
  checkpoint --run-dir D <file>...                  record owned draft hashes
  status   --run-dir D                               list what is snapshotted

Exit: 0 ok | 1 gate failed (restored unless --no-restore) | 2 usage/state error | 3 precondition
(dirty tree, or no git recovery path) - nothing was written.`;

interface Parsed {
  runDir?: string;
  allowDirty: boolean;
  noRestore: boolean;
  alphabet: TokenAlphabet;
  files: string[];
}

/** Parse one command's arguments; `flags` are the boolean options the command accepts. */
function parse(args: readonly string[], flags: readonly string[], tokens: boolean): Parsed {
  const cursor = new ArgCursor(args);
  const parsed: Parsed = { allowDirty: false, noRestore: false, alphabet: "base", files: [] };
  while (!cursor.done) {
    const arg = cursor.next();
    if (arg === "--run-dir") {
      parsed.runDir = cursor.requireValue(arg);
    } else if (flags.includes(arg)) {
      if (arg === "--allow-dirty") parsed.allowDirty = true;
      if (arg === "--no-restore") parsed.noRestore = true;
    } else if (tokens && arg.startsWith("--tokens=")) {
      parsed.alphabet = parseAlphabet(arg.slice("--tokens=".length));
    } else if (arg.startsWith("-")) {
      die(`❌ unknown option: ${arg}`);
    } else parsed.files.push(arg);
  }
  return parsed;
}

function main(args: readonly string[]): number {
  const reporter = consoleReporter;
  const projectDir = envValue("CLAUDE_PROJECT_DIR");
  if (args.length === 0) {
    writeOut(HELP);
    return 2;
  }
  const [command, ...rest] = args;
  switch (command) {
    case "help":
    case "-h":
    case "--help":
      writeOut(HELP);
      return 0;
    case "snapshot": {
      const p = parse(rest, ["--allow-dirty"], false);
      stageSnapshot({
        projectDir,
        files: p.files,
        allowDirty: p.allowDirty,
        runDir: p.runDir,
        reporter,
      });
      return 0;
    }
    case "checkpoint": {
      const p = parse(rest, [], false);
      if (p.runDir === undefined || p.files.length === 0) {
        die("❌ checkpoint needs --run-dir and files");
      }
      stageCheckpoint({ projectDir, runDir: p.runDir, files: p.files, reporter });
      return 0;
    }
    case "verify": {
      const p = parse(rest, ["--no-restore"], true);
      if (p.runDir === undefined) die("❌ verify needs --run-dir");
      if (p.files.length === 0) die("❌ verify needs at least one file");
      const result = stageVerify({
        projectDir,
        runDir: p.runDir,
        files: p.files,
        noRestore: p.noRestore,
        alphabet: p.alphabet,
        reporter,
      });
      return result.filesFailed > 0 ? 1 : 0;
    }
    case "restore": {
      const p = parse(rest, [], false);
      if (p.runDir === undefined) die("❌ restore needs --run-dir");
      if (p.files.length === 0) die("❌ restore needs at least one file");
      stageRestore({ projectDir, runDir: p.runDir, files: p.files, reporter });
      return 0;
    }
    case "status": {
      const cursor = new ArgCursor(rest);
      let runDir: string | undefined;
      while (!cursor.done) {
        const arg = cursor.next();
        if (arg !== "--run-dir") die(`❌ unknown argument: ${arg}`);
        runDir = cursor.requireValue(arg);
      }
      if (runDir === undefined) die("❌ status needs --run-dir");
      stageStatus(runDir, reporter);
      return 0;
    }
    default:
      die(`❌ unknown command: ${command}`);
  }
}

Deno.exit(await runMain(() => main(Deno.args)));
