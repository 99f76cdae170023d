/**
 * `prose install-hooks` (spec §6): a managed block in git's `post-commit` and `pre-push` hooks that
 * runs `prose block-end`. The block goes right after the shebang (an earlier `exit` or `exec` could
 * skip an appended one), never reads stdin and never fails the hook, so git is never blocked and an
 * existing hook keeps its behaviour. Unknown hook formats are refused, never clobbered.
 *
 * @module
 */

import { lstatSync, mkdirSync, readFileSync, type Stats, unlinkSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { CtxkitError, isPermissionError } from "../exit.ts";
import { runGit } from "../git.ts";
import { writeExclusive } from "./flag_io.ts";
import { renderValue, sanitize } from "./sanitize.ts";

/** First line of the managed block. */
export const BLOCK_BEGIN = "# >>> ctxkit prose >>>";
/** Last line of the managed block. */
export const BLOCK_END = "# <<< ctxkit prose <<<";
/** The hooks that get the block. */
export const HOOK_NAMES = ["post-commit", "pre-push"] as const;
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh"]);
const WOULD: Partial<Record<string, string>> = {
  created: "would-create",
  updated: "would-update",
  inserted: "would-insert",
  removed: "would-remove",
  deleted: "would-delete",
};

/** What happens (or would happen) to one hook. */
export type HookResult =
  | "created"
  | "updated"
  | "unchanged"
  | "inserted"
  | "removed"
  | "deleted"
  | "not-installed"
  | "refused";

/** A planned change: the new content (absent for no-ops, refusals and deletions). */
export interface HookPlan {
  /** The result word. */
  result: HookResult;
  /** Why it is refused: `symlink`, `not-regular-file`, `not-shell` or `corrupt-block`. */
  reason?: string;
  /** The new file content for `created`, `updated`, `inserted` and `removed`. */
  content?: string;
}

/** Quote one word for `sh`: `'…'` with embedded quotes as `'\''`. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/** The command line inside the block: every word single-quoted, no stdin, never failing. */
export function blockCommandLine(command: readonly string[]): string {
  return `${command.map(shellQuote).join(" ")} </dev/null >/dev/null 2>&1 || true`;
}

/** The block's lines (without newlines). */
export function blockLines(command: readonly string[]): string[] {
  return [BLOCK_BEGIN, blockCommandLine(command), BLOCK_END];
}

/** True when the first line is a shebang of sh, bash, dash, zsh or ksh (directly or via env). */
export function isShellShebang(firstLine: string): boolean {
  const m = /^#!\s*(\S+)(.*)$/.exec(firstLine);
  if (m === null) return false;
  let program = basename(m[1]);
  if (program === "env") {
    const args = m[2].trim().split(/\s+/).filter((a) => a !== "" && !a.startsWith("-"));
    if (args.length === 0) return false;
    program = basename(args[0]);
  }
  return SHELLS.has(program);
}

function markers(lines: string[]): { begin: number[]; end: number[] } {
  const begin: number[] = [];
  const end: number[] = [];
  lines.forEach((line, i) => {
    if (line === BLOCK_BEGIN) begin.push(i);
    else if (line === BLOCK_END) end.push(i);
  });
  return { begin, end };
}

/**
 * Plan the install for a hook whose current content is `existing` (`null` when there is none).
 *
 * @example
 * ```ts
 * import { planInstall } from "./hooks.ts";
 * planInstall("#!/usr/bin/python3\nprint(1)\n", ["prose", "block-end"]).reason; // "not-shell"
 * ```
 */
export function planInstall(existing: string | null, command: readonly string[]): HookPlan {
  const block = blockLines(command);
  if (existing === null) return { result: "created", content: `#!/bin/sh\n${block.join("\n")}\n` };
  const lines = existing.split("\n");
  const { begin, end } = markers(lines);
  if (begin.length === 1 && end.length === 1 && begin[0] < end[0]) {
    const next = [...lines.slice(0, begin[0]), ...block, ...lines.slice(end[0] + 1)].join("\n");
    return next === existing ? { result: "unchanged" } : { result: "updated", content: next };
  }
  if (begin.length > 0 || end.length > 0) return { result: "refused", reason: "corrupt-block" };
  if (existing.includes("\0") || !isShellShebang(lines[0])) {
    return { result: "refused", reason: "not-shell" };
  }
  return { result: "inserted", content: [lines[0], ...block, ...lines.slice(1)].join("\n") };
}

/** Plan the removal of the block: the exact bytes before the install, or deletion of a bare shebang. */
export function planRemove(existing: string | null): HookPlan {
  if (existing === null) return { result: "not-installed" };
  const lines = existing.split("\n");
  const { begin, end } = markers(lines);
  if (begin.length === 0 && end.length === 0) return { result: "not-installed" };
  if (begin.length !== 1 || end.length !== 1 || begin[0] > end[0]) {
    return { result: "refused", reason: "corrupt-block" };
  }
  const rest = [...lines.slice(0, begin[0]), ...lines.slice(end[0] + 1)];
  const content = rest.join("\n");
  if (/^#![^\n]*\n?$/.test(content)) return { result: "deleted" };
  return { result: "removed", content };
}

/** Options of {@linkcode installHooks}. */
export interface InstallHooksOptions {
  /** The repository (default: the current directory). */
  repo: string;
  /** Print `would-*` results and change nothing. */
  dryRun: boolean;
  /** Remove the block instead of installing it. */
  remove: boolean;
  /** The `block-end` command: absolute deno, permission flags, absolute script, `block-end`. */
  command: readonly string[];
}

/** One output line per hook and the exit code (1 when any hook was refused). */
export interface InstallHooksReport {
  /** `PROSE: hook=<name> result=<r> [reason=<code>] path=<p>` lines. */
  lines: string[];
  /** `PROSE-ERROR`/`PROSE-WARN` lines for stderr. */
  errors: string[];
  /** 0, or 1 when a hook was refused or could not be written. */
  code: number;
}

function hooksDirectory(repo: string): string {
  const r = runGit(["rev-parse", "--git-path", "hooks"], repo);
  if (r.status !== 0) {
    throw new CtxkitError(
      2,
      `PROSE-ERROR: code=usage ${sanitize(repo)}: not inside a git repository (install-hooks)`,
    );
  }
  return resolve(repo, r.stdout.replace(/\n$/, ""));
}

type Existing =
  | { kind: "none" }
  | { kind: "file"; content: string; mode: number }
  | { kind: "bad"; reason: string };

function readHook(path: string): Existing {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (e) {
    if (isPermissionError(e)) throw e;
    return (e as { code?: string }).code === "ENOENT"
      ? { kind: "none" }
      : { kind: "bad", reason: "io-error" };
  }
  if (st.isSymbolicLink()) return { kind: "bad", reason: "symlink" };
  if (!st.isFile()) return { kind: "bad", reason: "not-regular-file" };
  try {
    return { kind: "file", content: readFileSync(path, "utf8"), mode: st.mode & 0o7777 };
  } catch (e) {
    if (isPermissionError(e)) throw e;
    return { kind: "bad", reason: "io-error" };
  }
}

/**
 * Install (or with `remove`, uninstall) the managed block in `post-commit` and `pre-push` of the
 * hooks directory git uses (`git rev-parse --git-path hooks`, honouring `core.hooksPath`). Throws
 * a `CtxkitError` (exit 2) outside a repository.
 */
export function installHooks(options: InstallHooksOptions): InstallHooksReport {
  const dir = hooksDirectory(options.repo);
  const report: InstallHooksReport = { lines: [], errors: [], code: 0 };
  for (const name of HOOK_NAMES) {
    const path = join(dir, name);
    const existing = readHook(path);
    let plan: HookPlan;
    if (existing.kind === "bad") plan = { result: "refused", reason: existing.reason };
    else {
      const content = existing.kind === "file" ? existing.content : null;
      plan = options.remove ? planRemove(content) : planInstall(content, options.command);
    }
    let word: string = plan.result;
    const shown = renderValue(path);
    if (plan.result === "refused") {
      report.code = 1;
      const hint = plan.reason === "not-shell"
        ? `not a sh/bash/dash/zsh/ksh script; add this line after its first line by hand: ${
          blockCommandLine(options.command)
        }`
        : plan.reason === "corrupt-block"
        ? "the ctxkit prose markers are unbalanced or duplicated; fix them by hand"
        : "refusing to touch it";
      report.errors.push(`PROSE-ERROR: code=${plan.reason} ${sanitize(path)}: ${hint}`);
    } else if (options.dryRun) {
      word = WOULD[plan.result] ?? plan.result;
    } else if (plan.result === "deleted") {
      try {
        unlinkSync(path);
      } catch (e) {
        if (isPermissionError(e)) throw e;
        word = "refused";
        plan.reason = "io-error";
        report.code = 1;
      }
    } else if (plan.content !== undefined) {
      const mode = existing.kind === "file" ? existing.mode : 0o755;
      let ok = true;
      try {
        mkdirSync(dir, { recursive: true, mode: 0o755 });
      } catch (e) {
        if (isPermissionError(e)) throw e;
        ok = false;
      }
      if (ok) {
        const bytes = new TextEncoder().encode(plan.content);
        ok = writeExclusive(dir, name, `.${name}.ctxkit-tmp-`, bytes, mode).ok;
      }
      if (!ok) {
        word = "refused";
        plan.reason = "io-error";
        report.code = 1;
        report.errors.push(`PROSE-ERROR: code=io-error ${sanitize(path)}: cannot write the hook`);
      }
    }
    const reason = word === "refused" ? ` reason=${plan.reason}` : "";
    report.lines.push(`PROSE: hook=${name} result=${word}${reason} path=${shown}`);
  }
  return report;
}
