/**
 * The natural-language trigger (spec §6 `match`): an opt-in multilingual regex matched on whole
 * tokens only, so "prosecutor" or "explain" never switch the override on.
 *
 * @module
 */

import { defaultConfig, type ProseConfig } from "./config.ts";
import { sanitize, TOKEN_MAX } from "./sanitize.ts";

/** Outcome of {@linkcode matchTrigger}; `token` is sanitized and at most 40 code points. */
export interface TriggerMatch {
  /** False when `trigger.enabled` is off (nothing is matched then). */
  enabled: boolean;
  /** True when a whole-token match was found. */
  matched: boolean;
  /** The matched text, sanitized and clamped, or `null`. */
  token: string | null;
}

// A token boundary fails on a Latin letter, a digit or `_` next to the match.
const WORD = /[\p{Script=Latin}0-9_]/u;

function codePointBefore(text: string, index: number): string {
  if (index === 0) return "";
  const low = text.charCodeAt(index - 1);
  if (index >= 2 && low >= 0xdc00 && low <= 0xdfff) return text.slice(index - 2, index);
  return text[index - 1];
}

function codePointAt(text: string, index: number): string {
  const cp = text.codePointAt(index);
  return cp === undefined ? "" : String.fromCodePoint(cp);
}

/**
 * Find the first whole-token match of the configured trigger in `text` (regex with the `u` flag,
 * plus `i` when `caseInsensitive`). Throws `TypeError` when the pattern does not compile (a config
 * from {@linkcode loadConfig} always compiles).
 *
 * @example
 * ```ts
 * import { defaultConfig, matchTrigger } from "./mod.ts";
 * const config = defaultConfig();
 * config.trigger.enabled = true;
 * matchTrigger("use modo normal please", config).token; // "modo normal"
 * matchTrigger("the prosecutor", config).matched; // false
 * ```
 */
export function matchTrigger(text: string, config: ProseConfig = defaultConfig()): TriggerMatch {
  if (!config.trigger.enabled) return { enabled: false, matched: false, token: null };
  let re: RegExp;
  try {
    re = new RegExp(config.trigger.pattern, config.trigger.caseInsensitive ? "gui" : "gu");
  } catch (e) {
    throw new TypeError(`trigger.pattern does not compile: ${(e as Error).message}`);
  }
  for (let start = 0; start <= text.length;) {
    re.lastIndex = start;
    const m = re.exec(text);
    if (m === null) break;
    const end = m.index + m[0].length;
    if (
      m[0].length > 0 && !WORD.test(codePointBefore(text, m.index)) &&
      !WORD.test(codePointAt(text, end))
    ) {
      return { enabled: true, matched: true, token: sanitize(m[0], TOKEN_MAX) };
    }
    // Retry from the next position: another alternative may match there on a token boundary.
    start = m.index + 1;
  }
  return { enabled: true, matched: false, token: null };
}
