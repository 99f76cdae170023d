/**
 * How the table report fits a path into a column (`references/context-scan.md#table-report`):
 * which part of a path tells rows apart (its *name*: the file name, the skill folder of a file in
 * a skill, the plugin folder of a plugin's file), how a path is cut (from the left, at a `/`,
 * behind `…/`), and how a list of paths is fitted so that no two rows print the same text. Pure
 * functions of strings; `report.ts` lays the columns out.
 *
 * @module
 */

/** Code points of `s` (what the report counts as its width). */
export function width(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** `s` cut to `max` code points, keeping its end behind a leading `…`. */
export function keepEnd(s: string, max: number): string {
  const chars = [...s];
  if (chars.length <= max) return s;
  return max <= 0 ? "" : "…" + chars.slice(chars.length - max + 1).join("");
}

/** The folders that hold a plugin's parts: the segment before one of them is the plugin's. */
const PLUGIN_PARTS = new Set(["skills", "agents", "commands", "hooks", "output-styles"]);

/**
 * The index of the first segment of `path`'s name — the part of it that tells its row apart and
 * is never cut: the file name; from the skill's folder for a file inside `skills/<name>/`; from
 * the plugin's folder for a file of a plugin (`plugin`: the row belongs to a `--plugin-dir`).
 *
 * @example
 * ```ts
 * import { nameStart } from "./report_paths.ts";
 * nameStart("skills/tdd/SKILL.md"); // 1 (tdd/SKILL.md)
 * nameStart("p/ops/agents/k8s.md", true); // 1 (ops/agents/k8s.md)
 * ```
 */
export function nameStart(path: string, plugin = false): number {
  const segments = path.split("/");
  const last = segments.length - 1;
  let start = last;
  const skills = segments.lastIndexOf("skills", last - 2);
  if (skills >= 0) start = skills + 1;
  if (plugin) {
    for (let i = Math.min(start, last) - 1; i > 0; i--) {
      if (PLUGIN_PARTS.has(segments[i])) {
        start = i - 1;
        break;
      }
    }
  }
  return Math.max(0, start);
}

/**
 * `path` fitted to `max` code points with `suffix` after it: whole when it fits, else cut from the
 * left at a `/` behind `…/`, keeping as many whole segments as fit but never fewer than those from
 * segment `keep` on. `undefined` when even that does not fit.
 */
export function cutLeft(
  path: string,
  suffix: string,
  max: number,
  keep: number,
): string | undefined {
  if (width(path) + width(suffix) <= max) return path + suffix;
  const segments = path.split("/");
  for (let from = 1; from <= keep; from++) {
    const text = `…/${segments.slice(from).join("/")}${suffix}`;
    if (width(text) <= max) return text;
  }
  return undefined;
}

/**
 * One path alone fitted to `max` code points: {@linkcode cutLeft} keeping its name, or, when even
 * the name does not fit, its end behind `…`.
 */
export function fitPath(path: string, max: number): string {
  return cutLeft(path, "", max, nameStart(path)) ?? keepEnd(path, max);
}

/** One path of a column: its text before fitting, and whether its row belongs to a plugin. */
export interface ColumnPath {
  /** The path as displayed (relative, `~/…` or absolute; already printable). */
  path: string;
  /** Printed after the path and never cut (` [listing]`…). */
  suffix: string;
  /** The row belongs to a `--plugin-dir`: its plugin folder is part of its name. */
  plugin: boolean;
}

/**
 * Fit every path of one column to `max` code points (see {@linkcode cutLeft}), so that two
 * different paths never print the same text: rows whose cut texts collide keep one more segment,
 * until they differ or are whole. An entry is `undefined` when the path's name does not fit.
 *
 * @example
 * ```ts
 * import { fitColumn } from "./report_paths.ts";
 * fitColumn([
 *   { path: "skills/subagent-driven-development/SKILL.md", suffix: "", plugin: false },
 *   { path: "skills/test-driven-development/SKILL.md", suffix: "", plugin: false },
 * ], 40); // ["…/subagent-driven-development/SKILL.md", "skills/test-driven-development/SKILL.md"]
 * ```
 */
export function fitColumn(paths: readonly ColumnPath[], max: number): (string | undefined)[] {
  const keep = paths.map((p) => nameStart(p.path, p.plugin));
  const full = paths.map((p) => p.path + p.suffix);
  for (;;) {
    const texts = paths.map((p, i) => cutLeft(p.path, p.suffix, max, keep[i]));
    const seen = new Map<string, number[]>();
    texts.forEach((t, i) => {
      const key = t ?? `\0${i}`;
      seen.set(key, [...(seen.get(key) ?? []), i]);
    });
    let widened = false;
    for (const rows of seen.values()) {
      if (new Set(rows.map((i) => full[i])).size < 2) continue;
      for (const i of rows) {
        if (keep[i] > 0) {
          keep[i]--;
          widened = true;
        }
      }
    }
    if (!widened) return texts;
  }
}
