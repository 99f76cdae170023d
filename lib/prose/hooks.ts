/**
 * prose's hooks: the Claude Code hook block it documents ({@linkcode claudeHookSettings}), and
 * `prose install-hooks` (`references/prose.md#git-hooks`): a managed block in git's `post-commit`
 * and `pre-push` hooks that runs `prose block-end`. The block goes right after the shebang (an
 * earlier `exit` or `exec` could skip an appended one), never reads stdin and never fails the hook,
 * so git is never blocked and an existing hook keeps its behaviour. Unknown hook formats are
 * refused, never clobbered. Hooks are handled as bytes and never decoded, so `--remove` gives back
 * exactly the bytes that were there. Planning is pure ({@linkcode planInstall},
 * {@linkcode planRemove}); {@linkcode installHooks} applies the plans.
 *
 * @module
 */

import { text } from "../text.ts";
import { runGit } from "../git.ts";
import { shellCommand, shellQuote } from "../shell.ts";
import { basename, joinRoot, normalizeLexical } from "../paths.ts";
import { errorCode, rethrowPermission } from "../_fs/errors.ts";
import { readRegular } from "../_fs/read.ts";
import { writeFileAtomic } from "../_fs/write.ts";
import { ProseError } from "./errors.ts";

/** First line of the managed block. */
export const BLOCK_BEGIN = "# >>> ctxkit prose >>>";
/** Last line of the managed block. */
export const BLOCK_END = "# <<< ctxkit prose <<<";
/**
 * The line inside the block of a hook that `install-hooks` created: only such a hook is deleted by
 * `--remove` (and only when nothing was added to it), so a user's own hook is never deleted.
 */
export const CREATED_LINE = "# this hook was created by prose install-hooks; --remove deletes it";
const CREATED_SHEBANG = "#!/bin/sh";
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
  /** The new file bytes for `created`, `updated`, `inserted` and `removed`. */
  content?: Uint8Array;
}

// --- Claude Code hooks (references/prose.md#ready-to-copy-claude-code-hook-setup) --------------

/** A Claude Code hook event prose runs on. */
export type ClaudeHookEvent = "UserPromptSubmit" | "Stop" | "SessionEnd";

/** One command hook of Claude Code's settings, keys in the order the docs print them. */
export interface ClaudeCommandHook {
  /** Always `command`. */
  type: "command";
  /** The shell command line. */
  command: string;
  /** Seconds Claude Code gives it before it cancels it. */
  timeout: number;
}

/** The `hooks` object of a Claude Code `settings.json` (or a plugin's `hooks/hooks.json`). */
export interface ClaudeHookSettings {
  /** One matcher-less group per event, holding one command hook. */
  hooks: Record<ClaudeHookEvent, { hooks: ClaudeCommandHook[] }[]>;
}

/**
 * The hooks prose documents: the event, the `prose` arguments it runs, and its timeout in
 * seconds. Each command ends far inside its timeout whatever state it finds: `session-end` waits
 * at most 500 ms for the flag's lock, `consume` 5 s, `match --activate` its 1 s trigger budget, a
 * backend toggle's 8 s and the lock's 5 s. Naming a timeout matters most for `SessionEnd`, which
 * Claude Code otherwise cancels after 1.5 s in all, Deno's start-up included.
 */
export const CLAUDE_HOOKS: readonly {
  event: ClaudeHookEvent;
  args: readonly string[];
  timeout: number;
}[] = [
  { event: "UserPromptSubmit", args: ["match", "--hook-input", "--activate"], timeout: 30 },
  { event: "Stop", args: ["consume"], timeout: 15 },
  { event: "SessionEnd", args: ["session-end"], timeout: 10 },
];

/**
 * The command line of one Claude Code hook: `run` (the words that start prose: the runtime, the
 * permission flags, `--no-config` and the script, or a compiled binary) and `args`, every word
 * single-quoted, then `>/dev/null 2>&1 || true`: exit 2 of a `UserPromptSubmit` hook blocks the
 * prompt and of a `Stop` hook keeps the model going, and a `UserPromptSubmit` hook's stdout is
 * sent to the model, so the hook shows Claude Code neither (the flag file is what skills read).
 * stdin stays the hook's: `match --hook-input` reads the prompt there.
 */
export function claudeHookCommand(run: readonly string[], args: readonly string[]): string {
  return `${shellCommand([...run, ...args], { always: true })} >/dev/null 2>&1 || true`;
}

/**
 * The Claude Code hook settings that run prose with `run`: the one source of the documented
 * block (`tests/prose_hooks_observe_test.ts` holds the docs equal to it and runs them in the real
 * client) and of anything that installs it.
 *
 * @example
 * ```ts ignore
 * import { claudeHookSettings } from "./hooks.ts";
 * const settings = claudeHookSettings(["/opt/deno", "run", "-A", "--no-config", "/opt/bin/prose.ts"]);
 * // settings.hooks.SessionEnd[0].hooks[0].timeout === 10
 * ```
 */
export function claudeHookSettings(run: readonly string[]): ClaudeHookSettings {
  const hooks = {} as ClaudeHookSettings["hooks"];
  for (const { event, args, timeout } of CLAUDE_HOOKS) {
    hooks[event] = [{
      hooks: [{ type: "command", command: claudeHookCommand(run, args), timeout }],
    }];
  }
  return { hooks };
}

// --- git hooks (references/prose.md#git-hooks) ------------------------------------------------

/** What follows the command's `||`: a failure is said on stderr, loudly, and never fails git. */
const LOUD_FAILURE = " </dev/null >/dev/null 2>&1 || echo '❌ ctxkit prose: block-end did not run";

/**
 * The command line inside the block: every word single-quoted, no stdin, never failing git — but
 * never silent either: when `block-end` cannot run (the plugin holding prose moved or was removed,
 * the runtime is gone) the hook prints one `❌` line naming the program and what to do, so a
 * `block` flag is never left on unnoticed (`references/prose.md#git-hooks`).
 */
export function blockCommandLine(command: readonly string[]): string {
  const program = command.length > 1 ? command[command.length - 2] : command[0];
  const warning = `block-end did not run (${program} missing or failing; moved plugin?) - ` +
    "a block flag may still be on: run prose install-hooks again, or prose off";
  return `${shellCommand(command, { always: true })} </dev/null >/dev/null 2>&1 || echo ${
    shellQuote(`❌ ctxkit prose: ${warning}`, { always: true })
  } >&2`;
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

const encoder = new TextEncoder();

/** The lines of `bytes` split at `\n` (the last one is empty when the file ends with `\n`). */
function byteLines(bytes: Uint8Array): Uint8Array[] {
  const lines: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i === bytes.length || bytes[i] === 0x0a) {
      lines.push(bytes.subarray(start, i));
      start = i + 1;
    }
  }
  return lines;
}

/** `lines` joined with `\n`: the inverse of {@linkcode byteLines}. */
function joinLines(lines: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(lines.reduce((n, l) => n + l.length, 0) + lines.length - 1);
  let at = 0;
  lines.forEach((line, i) => {
    if (i > 0) out[at++] = 0x0a;
    out.set(line, at);
    at += line.length;
  });
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function isLine(line: Uint8Array, value: string): boolean {
  return sameBytes(line, encoder.encode(value));
}

function markers(lines: Uint8Array[]): { begin: number[]; end: number[] } {
  const begin: number[] = [];
  const end: number[] = [];
  lines.forEach((line, i) => {
    if (isLine(line, BLOCK_BEGIN)) begin.push(i);
    else if (isLine(line, BLOCK_END)) end.push(i);
  });
  return { begin, end };
}

/**
 * The tail of the block's command line, in this release (every word quoted) and in earlier ones
 * (words quoted only where needed): a line inside the block that ends so is ours.
 */
const COMMAND_TAILS = [" 'block-end'", " block-end"].map((w) =>
  encoder.encode(`${w} </dev/null >/dev/null 2>&1 || true`)
);

const LOUD_MARK = encoder.encode(` 'block-end'${LOUD_FAILURE}`);

function includes(line: Uint8Array, part: Uint8Array): boolean {
  outer: for (let i = 0; i + part.length <= line.length; i++) {
    for (let j = 0; j < part.length; j++) if (line[i + j] !== part[j]) continue outer;
    return true;
  }
  return false;
}

function endsWith(line: Uint8Array, tail: Uint8Array): boolean {
  const at = line.length - tail.length;
  return at > 0 && tail.every((b, i) => line[at + i] === b);
}

/**
 * Whether a line inside the block is one `install-hooks` wrote: the created line or a command
 * line. Every other line there is the user's, and is never dropped (`references/prose.md#git-hooks`).
 */
function isOwnLine(line: Uint8Array): boolean {
  return isLine(line, CREATED_LINE) || COMMAND_TAILS.some((tail) => endsWith(line, tail)) ||
    includes(line, LOUD_MARK);
}

function blockLines(command: readonly string[], created: boolean): Uint8Array[] {
  const words = [BLOCK_BEGIN, ...(created ? [CREATED_LINE] : []), blockCommandLine(command)];
  return [...words, BLOCK_END].map((l) => encoder.encode(l));
}

/**
 * The block for the lines `inside` an installed one: each command line becomes the current one
 * and every other line (the created line, a user's lines) stays where it was; a block that lost
 * its command line gets it back after the marker and the created line.
 */
function rewrittenBlock(inside: Uint8Array[], command: readonly string[]): Uint8Array[] {
  const line = encoder.encode(blockCommandLine(command));
  const own = (l: Uint8Array) => isOwnLine(l) && !isLine(l, CREATED_LINE);
  let kept = inside.map((l) => own(l) ? line : l);
  if (!inside.some(own)) {
    const at = isLine(inside[0] ?? new Uint8Array(), CREATED_LINE) ? 1 : 0;
    kept = [...inside.slice(0, at), line, ...inside.slice(at)];
  }
  return [encoder.encode(BLOCK_BEGIN), ...kept, encoder.encode(BLOCK_END)];
}

/**
 * Plan the install for a hook whose current bytes are `existing` (`null` when there is none). A
 * user's line inside an installed block is kept where it is.
 */
export function planInstall(existing: Uint8Array | null, command: readonly string[]): HookPlan {
  if (existing === null) {
    const lines = [encoder.encode(CREATED_SHEBANG), ...blockLines(command, true), new Uint8Array()];
    return { result: "created", content: joinLines(lines) };
  }
  const lines = byteLines(existing);
  const { begin, end } = markers(lines);
  if (begin.length === 1 && end.length === 1 && begin[0] < end[0]) {
    const next = joinLines([
      ...lines.slice(0, begin[0]),
      ...rewrittenBlock(lines.slice(begin[0] + 1, end[0]), command),
      ...lines.slice(end[0] + 1),
    ]);
    return sameBytes(next, existing)
      ? { result: "unchanged" }
      : { result: "updated", content: next };
  }
  if (begin.length > 0 || end.length > 0) return { result: "refused", reason: "corrupt-block" };
  // The first line is decoded only to classify it; the bytes written back are the bytes read.
  const first = new TextDecoder("utf-8", { ignoreBOM: true }).decode(lines[0]);
  if (existing.includes(0) || !isShellShebang(first)) {
    return { result: "refused", reason: "not-shell" };
  }
  return {
    result: "inserted",
    content: joinLines([lines[0], ...blockLines(command, false), ...lines.slice(1)]),
  };
}

/**
 * Plan the removal of the block: the markers and the lines `install-hooks` wrote go, a user's lines
 * inside the block stay where they were — so the exact bytes from before the install come back
 * when nothing was added. A hook `install-hooks` created (its block holds
 * {@linkcode CREATED_LINE}) is deleted only when nothing else remains.
 */
export function planRemove(existing: Uint8Array | null): HookPlan {
  if (existing === null) return { result: "not-installed" };
  const lines = byteLines(existing);
  const { begin, end } = markers(lines);
  if (begin.length === 0 && end.length === 0) return { result: "not-installed" };
  if (begin.length !== 1 || end.length !== 1 || begin[0] > end[0]) {
    return { result: "refused", reason: "corrupt-block" };
  }
  const inside = lines.slice(begin[0] + 1, end[0]);
  const created = inside.some((l) => isLine(l, CREATED_LINE));
  const content = joinLines([
    ...lines.slice(0, begin[0]),
    ...inside.filter((l) => !isOwnLine(l)),
    ...lines.slice(end[0] + 1),
  ]);
  if (created && sameBytes(content, encoder.encode(`${CREATED_SHEBANG}\n`))) {
    return { result: "deleted" };
  }
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
  | { kind: "file"; content: Uint8Array; mode: number }
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
    const content = readRegular(path, { follow: false });
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
