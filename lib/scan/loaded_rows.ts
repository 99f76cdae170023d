/**
 * The loading model seen from the inventory (`references/context-scan.md#what---loaded-adds`):
 * the model names every file from the start directory's physical path, as Claude Code does; the
 * inventory names it from the root as given. Here the model's sources are renamed into the
 * inventory's names, the ones a run reports are chosen (global and installed-plugin sources with
 * `--global`), a source read through a link is counted on the inventory row of the file it reaches,
 * and every plugin's skill and agent bodies become per-invocation and per-spawn rows.
 *
 * @module
 */

import { isSymlink } from "../_fs/inspect.ts";
import { dirname } from "../paths.ts";
import type { LoadedSource, LoadingModel } from "./claude_model.ts";
import type { CandidateRow } from "./discovery.ts";
import { statFollow } from "./files.ts";
import { markdownBelow } from "./model/read.ts";
import type { LoadingContext } from "./scan.ts";

/** `path` with the physical start directory `physical` renamed to the root as given. */
export function logicalName(physical: string, logical: string): (path: string) => string {
  if (physical === logical) return (path) => path;
  return (path) =>
    path === physical
      ? logical
      : path.startsWith(`${physical}/`)
      ? `${logical}${path.slice(physical.length)}`
      : path;
}

/** The file a symbolic link `path` resolves to (renamed by `name`), or undefined. */
export function linkTarget(path: string, name: (p: string) => string): string | undefined {
  if (!isSymlink(path)) return undefined;
  try {
    return name(Deno.realPathSync(path));
  } catch {
    return undefined;
  }
}

/** The size of the regular file `path` (links followed), or undefined. */
function fileSize(path: string): number | undefined {
  const st = statFollow(path);
  return "error" in st || !st.isFile ? undefined : st.size;
}

/** The model as the inventory sees it. */
export interface ModelView {
  /** The sources a run reports, named as the inventory names files. */
  readonly sources: readonly LoadedSource[];
  /** Link rows whose source is counted on the row of the file they reach: link → that file. */
  readonly counted: ReadonlyMap<string, string>;
  /** A model path set renamed. */
  readonly names: {
    readonly listingFiles: ReadonlySet<string>;
    readonly instructionFiles: ReadonlySet<string>;
    readonly excludedFiles: ReadonlySet<string>;
  };
  /** Per-invocation and per-spawn rows of the plugins' skill and agent bodies and references. */
  readonly pluginRows: readonly CandidateRow[];
}

/** The view of `model` for a scan of `context` whose inventory is `candidates`. */
export function modelView(
  model: LoadingModel,
  context: LoadingContext,
  candidates: readonly CandidateRow[],
): ModelView {
  const name = logicalName(model.project, context.project);
  const reports = (s: { root: string; userLevel?: boolean }) =>
    context.includeGlobal || (s.root !== "global" && s.userLevel !== true);
  const fileRows = new Set(
    candidates.filter((c) => c.tier === "always-on" && c.kind === "file").map((c) => c.path),
  );
  const counted = new Map<string, string>();
  const sources: LoadedSource[] = [];
  for (const s of model.sources) {
    if (!reports(s)) continue;
    let path = name(s.path);
    if (s.category === "memory-files" && s.kind === "file") {
      // Claude Code names the link; the file it reaches is the one counted and advised on.
      const target = linkTarget(path, name);
      if (target !== undefined && target !== path && fileRows.has(target)) {
        counted.set(path, target);
        path = target;
      }
    }
    sources.push({
      ...s,
      path,
      ...(s.importedBy === undefined ? {} : { importedBy: name(s.importedBy) }),
    });
  }
  const rename = (set: ReadonlySet<string>) => new Set([...set].map(name));
  const pluginRows: CandidateRow[] = [];
  for (const f of model.pluginFiles) {
    if (!reports({ root: "plugin", userLevel: f.userLevel })) continue;
    // A stat, not an open: the file is only sized here (the model has read it already).
    const size = f.size ?? fileSize(f.path);
    if (size === undefined) continue;
    const row = {
      path: f.path,
      root: "plugin" as const,
      kind: "file" as const,
      bytes: size,
      estimated: false,
    };
    if (f.kind === "agent") {
      pluginRows.push({ ...row, tier: "per-spawn", loading: "selected-agent" });
      continue;
    }
    pluginRows.push({ ...row, tier: "per-invocation", loading: "invoked-skill" });
    // The folder's own path stands for its real one (no realpath a skill): a link below it is
    // still resolved, so a loop through links ends.
    const references = `${dirname(f.path)}/references`;
    for (const ref of markdownBelow(references, new Set(), references)) {
      const refSize = fileSize(ref);
      if (refSize === undefined) continue;
      pluginRows.push({
        ...row,
        path: ref,
        bytes: refSize,
        tier: "per-invocation",
        loading: "on-demand",
      });
    }
  }
  return {
    sources,
    counted,
    names: {
      listingFiles: rename(model.listingFiles),
      instructionFiles: rename(model.instructionFiles),
      excludedFiles: rename(model.excludedFiles),
    },
    pluginRows,
  };
}
