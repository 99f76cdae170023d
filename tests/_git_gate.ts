/**
 * The git gate of context-guard `snapshot` run in-process (`references/context-guard.md#snapshot`):
 * a fresh repository with its layer roots, a commit of everything, and one gate call whose printed
 * lines and error are returned.
 *
 * @module
 */
import { mkdirSync } from "node:fs";
import { CtxkitError } from "../lib/errors.ts";
import { collectingReporter } from "../lib/guard/report.ts";
import { snapshot } from "../lib/guard/commands/snapshot.ts";
import { git, makeTempDir } from "./_helpers.ts";

/** A fresh git repository `proj` under a temp `base`, with the layer roots a snapshot takes. */
export function gateRepo(): {
  base: string;
  proj: string;
  roots: { project: string; global: string; backups: string };
} {
  const base = makeTempDir("ctxkit-gate-");
  const proj = `${base}/proj`;
  mkdirSync(proj, { recursive: true });
  git(proj, "init", "-q");
  const global = `${base}/home/.claude`;
  return { base, proj, roots: { project: proj, global, backups: `${global}/backups` } };
}

/** Stage and commit everything in `proj`. */
export function commitAll(proj: string): void {
  git(proj, "add", "-A");
  git(proj, "commit", "-qm", "init");
}

/** Run the snapshot gate on `files`; its printed lines and the error it ended with, if any. */
export async function gate(
  roots: { project: string; global: string; backups: string },
  files: string[],
): Promise<{ out: string[]; error?: CtxkitError }> {
  const rep = collectingReporter();
  try {
    await snapshot({ roots, files, scriptPath: "/x/context-guard.ts" }, rep);
  } catch (e) {
    if (!(e instanceof CtxkitError)) throw e;
    return { out: rep.lines.map((l) => l.text), error: e };
  }
  return { out: rep.lines.map((l) => l.text) };
}
