/**
 * `prose install-hooks` (`references/prose.md#git-hooks`): a managed block in git's `post-commit`
 * and `pre-push` hooks that runs `prose block-end`. The block goes right after the shebang (an
 * earlier `exit` or `exec` could skip an appended one), never reads stdin and never fails the hook,
 * so git is never blocked and an existing hook keeps its behaviour. Unknown hook formats are
 * refused, never clobbered. Planning is pure ({@linkcode planInstall}, {@linkcode planRemove});
 * {@linkcode installHooks} applies the plans.
 *
 * @module
 */

import { text } from "../text.ts";
import { runGit } from "../git.ts";
import { basename, joinRoot, normalizeLexical } from "../paths.ts";
import { errorCode, rethrowPermission } from "../_fs/errors.ts";
import { readRegular } from "../_fs/read.ts";
import { writeFileAtomic } from "../_fs/write.ts";
import { ProseError } from "./errors.ts";

/** First line of the managed block. */
export const BLOCK_BEGIN = "# >>> ctxkit prose >>>";
/** Last line of the managed block. */
export const BLOCK_END = "# <<< ctxkit prose <<<";
/** The hooks that get the block. */
const HOOK_NAMES = ["post-commit", "pre-push"] as const;
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
 */
export function planInstall(existing: string | null, command: readonly string[]): HookPlan {
  const block = [BLOCK_BEGIN, blockCommandLine(command), BLOCK_END];
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
  /** The repository. */
  repo: string;
  /** Report `would-*` results and change nothing. */
  dryRun: boolean;
  /** Remove the block instead of installing it. */
  remove: boolean;
  /** The `block-end` command: absolute deno, permission flags, absolute script, `block-end`. */
  command: readonly string[];
}

/** What happened (or would happen) to one hook. */
export interface HookOutcome {
  /** `post-commit` or `pre-push`. */
  name: string;
  /** The hook's path. */
  path: string;
  /** The result word (`would-create`… with `dryRun`). */
  result: string;
  /** Why it was refused. */
  reason?: string;
  /** What to check, for the error line of a refusal (none for a failed deletion). */
  hint?: string;
}

function hooksDirectory(repo: string): string {
  const r = runGit(["rev-parse", "--git-path", "hooks"], repo);
  if (r.status !== 0) {
    throw new ProseError("usage", text`${repo}: not inside a git repository (install-hooks)`);
  }
  return normalizeLexical(r.stdout.replace(/\n$/, ""), normalizeLexical(repo, Deno.cwd()));
}

type Existing =
  | { kind: "none" }
  | { kind: "file"; content: string; mode: number }
  | { kind: "bad"; reason: string };

function readHook(path: string): Existing {
  let st: Deno.FileInfo;
  try {
    st = Deno.lstatSync(path);
  } catch (e) {
    rethrowPermission(e);
    return errorCode(e) === "ENOENT" ? { kind: "none" } : { kind: "bad", reason: "io-error" };
  }
  if (st.isSymlink) return { kind: "bad", reason: "symlink" };
  if (!st.isFile) return { kind: "bad", reason: "not-regular-file" };
  try {
    // ignoreBOM keeps a BOM as text, so removing the block gives back the exact bytes.
    const bytes = readRegular(path, { follow: false });
    const content = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
    return { kind: "file", content, mode: (st.mode ?? 0o755) & 0o7777 };
  } catch (e) {
    rethrowPermission(e);
    return { kind: "bad", reason: "io-error" };
  }
}

function refusalHint(reason: string | undefined, command: readonly string[]): string {
  if (reason === "not-shell") {
    return `not a sh/bash/dash/zsh/ksh script; add this line after its first line by hand: ${
      blockCommandLine(command)
    }`;
  }
  return reason === "corrupt-block"
    ? "the ctxkit prose markers are unbalanced or duplicated; fix them by hand"
    : "refusing to touch it";
}

/** Apply one hook's plan; the outcome says what was done. */
function applyPlan(dir: string, path: string, plan: HookPlan, existing: Existing): HookPlan & {
  hint?: string;
} {
  try {
    if (plan.result === "deleted") {
      Deno.removeSync(path);
    } else if (plan.content !== undefined) {
      Deno.mkdirSync(dir, { recursive: true, mode: 0o755 });
      const mode = existing.kind === "file" ? existing.mode : 0o755;
      writeFileAtomic(path, plan.content, { mode, exactMode: true });
    }
    return plan;
  } catch (e) {
    rethrowPermission(e);
    const failed = { result: "refused" as const, reason: "io-error" };
    return plan.result === "deleted" ? failed : { ...failed, hint: "cannot write the hook" };
  }
}

/**
 * Install (or with `remove`, uninstall) the managed block in `post-commit` and `pre-push` of the
 * hooks directory git uses (`git rev-parse --git-path hooks`, honouring `core.hooksPath`). Throws
 * a usage {@linkcode ProseError} outside a repository.
 */
export function installHooks(options: InstallHooksOptions): HookOutcome[] {
  const dir = hooksDirectory(options.repo);
  return HOOK_NAMES.map((name) => {
    const path = joinRoot(dir, name);
    const existing = readHook(path);
    let plan: HookPlan & { hint?: string };
    if (existing.kind === "bad") plan = { result: "refused", reason: existing.reason };
    else {
      const content = existing.kind === "file" ? existing.content : null;
      plan = options.remove ? planRemove(content) : planInstall(content, options.command);
    }
    if (plan.result === "refused") {
      plan = { ...plan, hint: refusalHint(plan.reason, options.command) };
    } else if (!options.dryRun) plan = applyPlan(dir, path, plan, existing);
    const result = options.dryRun ? WOULD[plan.result] ?? plan.result : plan.result;
    const outcome: HookOutcome = { name, path, result };
    if (plan.reason !== undefined) outcome.reason = plan.reason;
    if (plan.hint !== undefined) outcome.hint = plan.hint;
    return outcome;
  });
}
