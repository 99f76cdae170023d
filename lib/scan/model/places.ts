/**
 * Where Claude Code looks from a start directory (`references/context-scan.md#paths`): the start
 * directory's physical path (a project opened through a link is walked and named from it), its git
 * root (the nearest folder up with a `.git` entry), and for a git worktree the main checkout its
 * `.git` file leads to. Read from the file system (`.git`, `gitdir:`, `commondir`), no `git` run.
 *
 * @module
 */

import { dirname, normalizeLexical } from "../../paths.ts";
import { ancestry, isDirectory, isFile, join, readText, realOrSelf } from "./read.ts";

/** The places of one start directory. */
export interface Places {
  /** The start directory's physical path. */
  readonly project: string;
  /** Its git root (physical), when it lies in a git repository. */
  readonly gitRoot?: string;
  /** For a git worktree: the main checkout (physical) its `.git` file leads to. */
  readonly mainCheckout?: string;
  /** The directories from `/` down to the start directory, the start directory last. */
  readonly dirs: readonly string[];
  /** The directories whose skills, commands and agents are listed: start directory up to the git root. */
  readonly listingDirs: readonly string[];
}

/** The git directory a `.git` file (`gitdir: <path>`) names, or undefined. */
function gitdirOf(dotGit: string): string | undefined {
  const read = readText(dotGit);
  if (read.kind !== "text") return undefined;
  const line = read.text.split("\n")[0].trim();
  if (!line.startsWith("gitdir:")) return undefined;
  return normalizeLexical(line.slice(7).trim(), dirname(dotGit));
}

/** The main checkout of the worktree whose `.git` file is `dotGit`, or undefined. */
function mainCheckoutOf(dotGit: string): string | undefined {
  const gitdir = gitdirOf(dotGit);
  if (gitdir === undefined) return undefined;
  const common = readText(`${gitdir}/commondir`);
  if (common.kind !== "text") return undefined;
  const commonDir = realOrSelf(normalizeLexical(common.text.trim(), gitdir));
  return commonDir.endsWith("/.git") ? dirname(commonDir) : undefined;
}

/** The places of the start directory `start`. */
export function placesOf(start: string): Places {
  const project = realOrSelf(start);
  const dirs = ancestry(project);
  let gitRoot: string | undefined;
  let mainCheckout: string | undefined;
  for (let i = dirs.length - 1; i >= 0; i--) {
    const dotGit = join(dirs[i], ".git");
    if (isDirectory(dotGit)) {
      gitRoot = dirs[i];
      break;
    }
    if (isFile(dotGit)) {
      gitRoot = dirs[i];
      mainCheckout = mainCheckoutOf(dotGit);
      break;
    }
  }
  const listingDirs = gitRoot === undefined ? dirs : dirs.slice(dirs.indexOf(gitRoot));
  return {
    project,
    ...(gitRoot === undefined ? {} : { gitRoot }),
    ...(mainCheckout === undefined ? {} : { mainCheckout }),
    dirs,
    listingDirs,
  };
}
