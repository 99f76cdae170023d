/**
 * Fixtures shared by the text-guard and context-guard CLI tests: the worked-example project,
 * tree listings for "nothing written" assertions, and stream helpers.
 *
 * @module
 */

import { strictEqual } from "node:assert/strict";
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync } from "node:fs";
import { shellCommand, shellQuote } from "../lib/shell.ts";
import {
  git,
  lines,
  makeTempDir,
  type RunResult,
  selfCommandWords,
  writeTree,
} from "./_helpers.ts";

/**
 * The `RESTORE_REFUSED:` line of `rel` and the two lines under it
 * (`references/context-guard.md#may-restore`): where the current bytes (`file`, absolute) and the
 * original are, and the forced restore of the tool under test — context-guard's names `file`
 * (logical); text-guard's (`root` given, its physical root) sets `CLAUDE_PROJECT_DIR` first.
 * `self` is how the tool names itself (`selfCommandWordsAsUser` for a run by `runToolAsUser`).
 */
export function refusedLines(
  tool: "context-guard" | "text-guard",
  runDir: string,
  rel: string,
  file: string,
  root?: string,
  self: string[] = selfCommandWords(tool, ["--allow-all"]),
): string[] {
  const words = [
    ...self,
    "restore",
    "--run-dir",
    runDir,
    "--force",
    file,
  ];
  const command = root === undefined
    ? shellCommand(words)
    : `CLAUDE_PROJECT_DIR=${shellQuote(root, { always: true })} ${shellCommand(words)}`;
  return [
    `RESTORE_REFUSED: ${rel} (current bytes lack matching draft ownership)`,
    `  current: ${file} (kept) · original: ${runDir}/orig/${rel}`,
    `  to restore it anyway, keeping the current bytes in ${runDir}/displaced/: ${command}`,
  ];
}

/** CLAUDE.md of the worked examples (196 bytes). */
export const CLAUDE_MD =
  "# Project rules\n\nUse Node 20.11 and run scripts/build.sh before every release.\n" +
  "You MUST NOT push to main directly; NEVER skip review.\n" +
  "Set env!=prod when testing. Timeout is 30 seconds, retries 3.\n";

/** `.claude/rules/style.md` of the worked examples (84 bytes). */
export const STYLE_MD =
  "# Style\n\nIndent with 2 spaces. Max line length 120.\nALWAYS run lint/check.sh first.\n";

/** Hex SHA-256 of a file's bytes, or `MISSING`. */
export function fileHash(path: string): string {
  try {
    return createHash("sha256").update(readFileSync(path)).digest("hex");
  } catch {
    return "MISSING";
  }
}

/** A file's text. */
export function read(path: string): string {
  return readFileSync(path, "utf8");
}

/** Permission bits of `path`. */
export function modeOf(path: string): number {
  return statSync(path).mode & 0o7777;
}

/** Every path under `dir` with its type and content hash: compare before/after for "nothing written". */
export function treeState(dir: string): string[] {
  const out: string[] = [];
  const walk = (abs: string, rel: string) => {
    let names: string[];
    try {
      names = readdirSync(abs).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const p = `${abs}/${name}`;
      const r = rel === "" ? name : `${rel}/${name}`;
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out.push(`${r} -> link`);
      else if (st.isDirectory()) {
        out.push(`${r}/`);
        if (name !== ".git") walk(p, r);
      } else out.push(`${r} ${fileHash(p)} ${(st.mode & 0o777).toString(8)}`);
    }
  };
  walk(dir, "");
  return out;
}

/** stderr lines without the final exit-contract line, after checking that line matches `code`. */
export function errLines(r: RunResult): string[] {
  const all = lines(r.stderr);
  const last = all.pop();
  strictEqual(last, r.code === 0 ? "✅ EXIT:0" : `❌ FAILED EXIT:${r.code}`, r.stderr);
  return all;
}

/** stdout lines. */
export function outLines(r: RunResult): string[] {
  return lines(r.stdout);
}

/** The worked-example setup: a home, a git project with CLAUDE.md tracked + committed and style.md loose. */
export interface ExampleProject {
  /** Temp base dir. */
  base: string;
  /** `$HOME`. */
  home: string;
  /** Project root (cwd and `CLAUDE_PROJECT_DIR`). */
  proj: string;
  /** Backup root `$HOME/.claude/backups`. */
  backups: string;
  /** Environment for runTool. */
  env: Record<string, string>;
}

/** Build the worked-example project in a fresh temp dir. */
export function exampleProject(options: { git?: boolean } = {}): ExampleProject {
  const base = makeTempDir("ctxkit-guard-");
  const home = `${base}/home/ana`;
  const proj = `${home}/proj`;
  writeTree(proj, { "CLAUDE.md": CLAUDE_MD, ".claude/rules/style.md": STYLE_MD });
  if (options.git ?? true) {
    git(proj, "init", "-q");
    git(proj, "add", "CLAUDE.md");
    git(proj, "commit", "-qm", "init");
  }
  return {
    base,
    home,
    proj,
    backups: `${home}/.claude/backups`,
    env: { HOME: home, CLAUDE_PROJECT_DIR: proj },
  };
}

/** Local `YYYYMMDD-HHMMSS` of `date`. */
export function stampOf(date: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}${p(date.getMonth() + 1)}${p(date.getDate())}-` +
    `${p(date.getHours())}${p(date.getMinutes())}${p(date.getSeconds())}`;
}

/** A PATH with `env` (the test runner needs it) but no `git`. */
export function pathWithoutGit(): string {
  const dir = makeTempDir("ctxkit-nogit-");
  symlinkSync(realpathSync("/usr/bin/env"), `${dir}/env`);
  return dir;
}

/** Write files relative to a root (re-export for brevity). */
export { writeTree };
