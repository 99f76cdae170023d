/**
 * Fixtures shared by the text-guard and context-guard CLI tests: the worked-example project,
 * tree listings for "nothing written" assertions, and stream helpers.
 *
 * @module
 */

import { deepStrictEqual as assertDeepEqual, strictEqual } from "node:assert/strict";
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import {
  lstatSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { shellCommand, shellQuote } from "../lib/shell.ts";
import {
  git,
  lines,
  makeTempDir,
  type RunResult,
  runTool,
  selfCommandWords,
  selfCommandWordsAsUser,
  writeTree,
} from "./_helpers.ts";

/**
 * The `RESTORE_REFUSED:` line of `rel` and the two lines under it
 * (`references/context-guard.md#may-restore`): where the current bytes (`file`, absolute) and the
 * original are, and the forced restore of the tool under test — context-guard's names `file`
 * (logical); text-guard's (`root` given, its physical root) sets `CLAUDE_PROJECT_DIR` first.
 * `asUser`: the run was {@linkcode runToolAsUser}'s, whose program may be a copy that user reaches.
 */
export function refusedLines(
  tool: "context-guard" | "text-guard",
  runDir: string,
  rel: string,
  file: string,
  root?: string,
  asUser = false,
): string[] {
  const words = [
    ...(asUser ? selfCommandWordsAsUser : selfCommandWords)(tool, ["--allow-all"]),
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

/**
 * Hand the runs under `home/.claude` to the unprivileged test user (uid 65534): a run is trusted
 * only by its owner (`references/context-guard.md#whose-runs-are-trusted`), so a test that lets
 * that user act on a run made as root gives the run to it first.
 */
export function giveRunsTo(uid: number, home: string): void {
  const r = spawnSync("chown", ["-R", `${uid}:${uid}`, `${home}/.claude`], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`chown failed: ${r.stderr}`);
}

/** A fresh home and project, snapshotted by {@linkcode snapshottedProject}. */
export interface SnapshottedProject {
  /** Temp base dir. */
  base: string;
  /** `$HOME`. */
  home: string;
  /** The project root (cwd and `CLAUDE_PROJECT_DIR`). */
  proj: string;
  /** Environment for runTool. */
  env: Record<string, string>;
  /** The run dir the snapshot printed. */
  runDir: string;
}

/**
 * A fresh home and project holding `files` (rel → content), all of them snapshotted with
 * `context-guard snapshot --allow-dirty` (no git).
 */
export function snapshottedProject(
  files: Record<string, string | Uint8Array>,
  prefix = "ctxkit-snap-",
): SnapshottedProject {
  const base = makeTempDir(prefix);
  const home = `${base}/home`;
  const proj = `${home}/proj`;
  writeTree(proj, files);
  const env = { HOME: home, CLAUDE_PROJECT_DIR: proj };
  const snap = runTool("context-guard", ["snapshot", "--allow-dirty", ...Object.keys(files)], {
    cwd: proj,
    env,
  });
  strictEqual(snap.code, 0, snap.stderr);
  return { base, home, proj, env, runDir: runDirOf(snap.stdout) };
}

/** The `RUN_DIR:` a snapshot printed. */
export function runDirOf(stdout: string): string {
  return lines(stdout).find((l) => l.startsWith("RUN_DIR: "))!.slice("RUN_DIR: ".length);
}

/** A Deno child running `source` (a helper process of a concurrency test) with `args`. */
export function spawnScript(dir: string, source: string, args: string[]): Deno.ChildProcess {
  const script = `${dir}/helper-${crypto.randomUUID()}.ts`;
  writeFileSync(script, source);
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", script, ...args],
    stdout: "null",
    stderr: "inherit",
  }).spawn();
}

/** Wait, without a clock, until `ready()` holds (polling the file system). */
export async function until(
  ready: () => boolean,
  what: string,
  child?: Deno.ChildProcess,
): Promise<void> {
  let exited = false;
  child?.status.then(() => (exited = true));
  while (!ready()) {
    if (exited) throw new Error(`helper exited before ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/**
 * A `verify` of CLAUDE.md (every version of it keeps its tokens) that a rename-save raced: a gate
 * result, or one line naming the file, exit 2 — never an internal error (issue 29 item 8,
 * `references/context-guard.md#the-token-gate`).
 */
export function assertGatedOrChangedWhileReading(r: RunResult): void {
  if (r.code === 0) {
    assertDeepEqual(outLines(r), [
      "FILE: CLAUDE.md",
      "MISSING: 0",
      "GATE: PASS",
      "ACTION: kept",
      "FILES_FAILED: 0",
    ]);
  } else {
    strictEqual(r.code, 2, r.stderr);
    assertDeepEqual(errLines(r), ["❌ cannot read CLAUDE.md: changed while reading"]);
    strictEqual(r.stdout, "");
  }
}

/** Why strace cannot trace a child here, or `undefined`. */
export function straceUnavailable(): string | undefined {
  const r = spawnSync("strace", ["-f", "-qq", "-e", "trace=none", "true"], { encoding: "utf8" });
  if (r.error !== undefined) return `strace is not installed (${r.error.message})`;
  return r.status === 0 ? undefined : `strace cannot trace here: ${r.stderr.trim()}`;
}
