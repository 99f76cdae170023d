/**
 * The natural-language trigger of `prose match` (`references/prose.md#trigger`): the whole-token
 * search of `trigger.pattern` in a prompt, and what keeps it from holding a prompt. A pattern that
 * nests a repetition inside a repeated group — the shape a backtracking engine can spend minutes
 * on — is refused at config load ({@linkcode nestedRepetition}); a plain list of words (the
 * built-in pattern, and most users') is searched here, in linear time; any other pattern is
 * searched in a worker that is given {@linkcode TRIGGER_BUDGET_MS}, after which the prompt is no
 * match and the caller warns. So `match` ends on every prompt, whatever the pattern.
 *
 * @module
 */

import type { ProseConfig } from "./config.ts";

/** How long a pattern that is not a list of words may search one prompt (ms), once its worker runs. */
export const TRIGGER_BUDGET_MS = 1000;

/**
 * A token boundary fails on a Latin letter, a combining mark, a digit or `_` next to the match:
 * a mark belongs to the letter before it, so a word written in NFD (`prose` + U+0301 + `lytisme`)
 * is one token, as it is in NFC.
 */
const WORD = "[\\p{Script=Latin}\\p{M}0-9_]";

/**
 * `pattern` as a whole-token search: a match must not have a word character (a Latin letter, a
 * combining mark, a digit or `_`) right before or right after it. The boundaries are part of the
 * regular expression, so the engine itself tries the next alternative, or a shorter repetition,
 * where the preferred match is not on a boundary, and skips a start right after a word character
 * at once: one search over the text, never one per rejected match.
 */
export function tokenPattern(pattern: string): string {
  return `(?<!${WORD})(?:${pattern})(?!${WORD})`;
}

/**
 * The first non-empty match of the global regular expression `source` (with `flags`) in `text`,
 * or `null`. An empty match never counts: the search goes on from the next code point — never
 * from inside a surrogate pair, where the `u` flag would back up to the pair and find the same
 * match again — and `m.index` is at or after `start`, so every turn makes progress.
 *
 * Self-contained (it refers to nothing outside itself): the bounded worker runs its source text.
 */
function searchWholeToken(text: string, source: string, flags: string): string | null {
  const re = new RegExp(source, flags);
  for (let start = 0; start <= text.length;) {
    re.lastIndex = start;
    const m = re.exec(text);
    if (m === null) return null;
    if (m[0] !== "") return m[0];
    const cp = m.index < text.length ? (text.codePointAt(m.index) ?? 0) : 0;
    const step = cp > 0xffff ? 2 : 1;
    start = Math.max(start + 1, m.index + step);
  }
  return null;
}

/**
 * True when `pattern` is a plain list of words: alternatives of literal characters (a syntax
 * character only escaped), with no group, class, repetition, wildcard or assertion. A
 * backtracking engine searches such a pattern in time linear in the text (each start tries each
 * word once), so it needs no worker. The check itself is linear: its alternatives start apart.
 */
export function isWordList(pattern: string): boolean {
  return /^(?:[^\\^$.*+?()[\]{}]|\\[\\^$.*+?()[\]{}|/tnrvf-]|\\u[0-9A-Fa-f]{4}|\\u\{[0-9A-Fa-f]{1,6}\}|\\x[0-9A-Fa-f]{2})*$/
    .test(pattern);
}

/** The quantifier at `at` (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, each maybe lazy), or null. */
function quantifierAt(pattern: string, at: number): { max: number; length: number } | null {
  const c = pattern[at];
  let max: number;
  let length: number;
  if (c === "*" || c === "+") [max, length] = [Infinity, 1];
  else if (c === "?") [max, length] = [1, 1];
  else if (c === "{") {
    const m = /^\{([0-9]+)(,([0-9]*))?\}/.exec(pattern.slice(at, at + 24));
    if (m === null) return null;
    max = m[2] === undefined ? Number(m[1]) : m[3] === "" ? Infinity : Number(m[3]);
    length = m[0].length;
  } else return null;
  return { max, length: pattern[at + length] === "?" ? length + 1 : length };
}

/** The index just past the escape that starts at `at` (a backslash). */
function escapeEnd(pattern: string, at: number): number {
  const next = pattern[at + 1];
  if ((next === "u" || next === "p" || next === "P") && pattern[at + 2] === "{") {
    const close = pattern.indexOf("}", at + 3);
    return close === -1 ? pattern.length : close + 1;
  }
  if (next === "k" && pattern[at + 2] === "<") {
    const close = pattern.indexOf(">", at + 3);
    return close === -1 ? pattern.length : close + 1;
  }
  return at + 2; // the rest of \u0000 or \x00 is plain characters to this scan
}

/**
 * The first group that is repeated (`*`, `+`, `{n,}`, `{n,m}` with m > 1) and holds a repetition
 * itself — `(\w+\s?)+`, `(a*)*`, `(?:x{2,}y)+` — as written in `pattern`, or `null`. A
 * backtracking engine can try every way of splitting a long run among the two repetitions, which
 * takes exponential time: with `(\w+\s?)+mode`, 30 letters without "mode" take 39 s. One pass,
 * with a stack of open groups; escapes and classes are skipped whole.
 */
export function nestedRepetition(pattern: string): string | null {
  const open: { start: number; repeats: boolean }[] = [];
  const markRepeat = () => {
    if (open.length > 0) open[open.length - 1].repeats = true;
  };
  for (let i = 0; i < pattern.length;) {
    const c = pattern[i];
    if (c === "\\") {
      i = escapeEnd(pattern, i);
    } else if (c === "[") {
      let j = i + 1;
      while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1;
      i = j + 1;
    } else if (c === "(") {
      open.push({ start: i, repeats: false });
      i++;
    } else if (c === ")") {
      const group = open.pop();
      const q = quantifierAt(pattern, i + 1);
      const end = i + 1 + (q?.length ?? 0);
      if (group !== undefined) {
        if (q !== null && q.max > 1 && group.repeats) return pattern.slice(group.start, end);
        if (group.repeats || (q !== null && q.max > 1)) markRepeat();
      }
      i = end;
    } else {
      const q = quantifierAt(pattern, i);
      if (q !== null && q.max > 1) markRepeat();
      i += q?.length ?? 1;
    }
  }
  return null;
}

/** Outcome of {@linkcode matchTrigger}; `token` is the matched text (print it sanitized). */
export interface TriggerMatch {
  /** False when `trigger.enabled` is off (nothing is matched then). */
  enabled: boolean;
  /** True when a whole-token match was found. */
  matched: boolean;
  /** The matched text, or `null`. */
  token: string | null;
  /** True when the pattern ran out of its {@linkcode TRIGGER_BUDGET_MS} (then no match). */
  timedOut?: boolean;
}

/** The worker that searches with any other pattern, kept for the next prompt once started. */
let bounded: { worker: Worker; ready: Promise<void> } | undefined;

function startWorker(): { worker: Worker; ready: Promise<void> } {
  const source = `const search = ${searchWholeToken.toString()};
self.onmessage = (e) => self.postMessage(search(e.data.text, e.data.source, e.data.flags));
self.postMessage("ready");`;
  const worker = new Worker(`data:text/javascript,${encodeURIComponent(source)}`, {
    type: "module",
  });
  const ready = new Promise<void>((resolve, reject) => {
    worker.onmessage = () => resolve();
    worker.onerror = (e) => {
      e.preventDefault();
      reject(new Error(`the trigger worker failed: ${e.message}`));
    };
  });
  return { worker, ready };
}

/** Stop the trigger's worker (it keeps a process alive while it exists). Safe to call twice. */
export function stopTriggerWorker(): void {
  bounded?.worker.terminate();
  bounded = undefined;
}

/**
 * Search in the worker for at most `budgetMs` once it runs; `undefined` when it ran out (the worker
 * is then terminated: a regular expression cannot be interrupted in the thread that runs it).
 */
async function searchBounded(
  text: string,
  source: string,
  flags: string,
  budgetMs: number,
): Promise<{ token: string | null } | undefined> {
  bounded ??= startWorker();
  const { worker, ready } = bounded;
  await ready;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const answer = await Promise.race([
    new Promise<{ token: string | null }>((resolve) => {
      worker.onmessage = (e: MessageEvent<string | null>) => resolve({ token: e.data });
      worker.postMessage({ text, source, flags });
    }),
    new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), budgetMs))),
  ]);
  clearTimeout(timer);
  if (answer === undefined) stopTriggerWorker();
  return answer;
}

/**
 * Find the first whole-token match of the configured trigger in `text` (regex with the `u` flag,
 * plus `i` when `caseInsensitive`), so "prosecutor", "explain" or an NFD "prosélytisme" never
 * switch the override on (`references/prose.md#trigger`). A list of words is searched here; any
 * other pattern in the worker, within `budgetMs` ({@linkcode TRIGGER_BUDGET_MS}): past it the
 * answer is no match with `timedOut`. Throws `TypeError` when the pattern does not compile (a
 * config from `loadConfig` always compiles). Call {@linkcode stopTriggerWorker} when done, in a
 * process that must end by itself.
 */
export async function matchTrigger(
  text: string,
  config: Pick<ProseConfig, "trigger">,
  budgetMs: number = TRIGGER_BUDGET_MS,
): Promise<TriggerMatch> {
  if (!config.trigger.enabled) return { enabled: false, matched: false, token: null };
  const source = tokenPattern(config.trigger.pattern);
  const flags = config.trigger.caseInsensitive ? "gui" : "gu";
  try {
    new RegExp(source, flags);
  } catch (e) {
    throw new TypeError(`trigger.pattern does not compile: ${(e as Error).message}`);
  }
  if (isWordList(config.trigger.pattern)) {
    const token = searchWholeToken(text, source, flags);
    return { enabled: true, matched: token !== null, token };
  }
  const found = await searchBounded(text, source, flags, budgetMs);
  if (found === undefined) return { enabled: true, matched: false, token: null, timedOut: true };
  return { enabled: true, matched: found.token !== null, token: found.token };
}
