/**
 * `claudeMdExcludes` (`references/context-scan.md#settings`): glob patterns or absolute paths,
 * matched against an instruction file's absolute path as picomatch matches them with `dot: true` —
 * `**` any number of whole path segments, `*` any run of characters within a segment, `?` one
 * character, `[…]` a class, `{a,b}` alternatives. User, project and local instruction files (and
 * their imports) are excluded; the managed policy's and auto-memory are not.
 *
 * The matcher works segment by segment with a table over (pattern, path) positions, so its work is
 * bounded by the product of the two lengths whatever the input — no backtracking regex.
 *
 * @module
 */

/** The alternatives a pattern's `{a,b}` groups expand to (at most 64; beyond that, as written). */
export function expandBraces(pattern: string, limit = 64): string[] {
  const open = pattern.indexOf("{");
  if (open === -1) return [pattern];
  let depth = 0;
  let close = -1;
  const commas: number[] = [];
  for (let i = open; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "{") depth++;
    else if (c === "}") {
      depth--;
      if (depth === 0) {
        close = i;
        break;
      }
    } else if (c === "," && depth === 1) commas.push(i);
  }
  if (close === -1) return [pattern];
  const head = pattern.slice(0, open);
  const tail = pattern.slice(close + 1);
  const bounds = [open, ...commas, close];
  const out: string[] = [];
  for (let k = 0; k + 1 < bounds.length; k++) {
    const middle = pattern.slice(bounds[k] + 1, bounds[k + 1]);
    for (const rest of expandBraces(`${head}${middle}${tail}`, limit)) {
      if (out.length >= limit) return [pattern];
      out.push(rest);
    }
  }
  return out;
}

/** `[…]` at `p[at]`: whether it matches `c`, and where the class ends (undefined: not a class). */
function classAt(p: string, at: number, c: string): { match: boolean; end: number } | undefined {
  let i = at + 1;
  const negate = p[i] === "!" || p[i] === "^";
  if (negate) i++;
  let match = false;
  let first = true;
  for (; i < p.length; i++) {
    if (p[i] === "]" && !first) return { match: match !== negate, end: i + 1 };
    first = false;
    if (p[i + 1] === "-" && p[i + 2] !== undefined && p[i + 2] !== "]") {
      if (c >= p[i] && c <= p[i + 2]) match = true;
      i += 2;
    } else if (p[i] === c) match = true;
  }
  return undefined;
}

/** One path segment against one pattern segment (`*`, `?`, `[…]`, literals). */
function segmentMatch(p: string, s: string): boolean {
  // reach[j]: the pattern prefix read so far matches s[0..j).
  let reach = new Array<boolean>(s.length + 1).fill(false);
  reach[0] = true;
  let i = 0;
  while (i < p.length) {
    const next = new Array<boolean>(s.length + 1).fill(false);
    const c = p[i];
    if (c === "*") {
      let any = false;
      for (let j = 0; j <= s.length; j++) {
        any = any || reach[j];
        next[j] = any;
      }
      i++;
    } else {
      const cls = c === "[" ? classAt(p, i, "") : undefined;
      const width = cls === undefined ? 1 : cls.end - i;
      for (let j = 0; j < s.length; j++) {
        if (!reach[j]) continue;
        const ok = c === "?" ||
          (c === "[" && cls !== undefined ? classAt(p, i, s[j])!.match : c === s[j]);
        if (ok) next[j + 1] = true;
      }
      i += width;
    }
    reach = next;
  }
  return reach[s.length];
}

/** A path against one brace-free pattern, segment by segment (`**` any number of segments). */
function globMatchOne(pattern: string, path: string): boolean {
  const p = pattern.split("/");
  const s = path.split("/");
  let reach = new Array<boolean>(s.length + 1).fill(false);
  reach[0] = true;
  for (const seg of p) {
    const next = new Array<boolean>(s.length + 1).fill(false);
    if (seg === "**") {
      let any = false;
      for (let j = 0; j <= s.length; j++) {
        any = any || reach[j];
        next[j] = any;
      }
    } else {
      for (let j = 0; j < s.length; j++) {
        if (reach[j] && segmentMatch(seg, s[j])) next[j + 1] = true;
      }
    }
    reach = next;
  }
  return reach[s.length];
}

/** True when `path` matches the glob `pattern` (picomatch, `dot: true`). */
export function globMatch(pattern: string, path: string): boolean {
  return expandBraces(pattern).some((p) => globMatchOne(p, path));
}

/** A predicate: is this instruction file excluded by the `claudeMdExcludes` patterns? */
export function excluder(patterns: readonly string[]): (path: string) => boolean {
  const usable = patterns.filter((p) => p !== "" && !p.startsWith("!"));
  if (usable.length === 0) return () => false;
  return (path) => usable.some((p) => globMatch(p, path));
}
