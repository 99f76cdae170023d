/**
 * Where the prose state lives (spec §2): root `R` = `$CELLM_DIR` or `$HOME/.cellm`, `D = R/prose`.
 *
 * @module
 */

import { envValue } from "../paths.ts";
import { join } from "node:path";

/** The prose locations under one root. */
export interface ProsePaths {
  /** `R`: `$CELLM_DIR`, else `$HOME/.cellm` (may be a symlink). */
  root: string;
  /** `D = R/prose`: must be a real, owner-only directory. */
  dir: string;
  /** `F = D/.active`: the flag, the runtime source of truth. */
  flag: string;
  /** `D/config.json` (JSONC). */
  config: string;
  /** `D/prose.db`: the backend's mirror. */
  db: string;
  /** `R/worker.json`, read only for its `port`. */
  workerJson: string;
}

/** Options shared by every library call: an explicit root and an injected clock. */
export interface ProseOptions {
  /** Absolute root `R`; default `$CELLM_DIR`, else `$HOME/.cellm`. */
  root?: string;
  /** Epoch-ms "now" (default `Date.now()`); tests inject it for deterministic TTLs. */
  now?: number;
}

/** Thrown by {@linkcode resolvePaths} when no usable root exists (relative `CELLM_DIR`, no `HOME`). */
export class ProseRootError extends TypeError {
  /** The environment variable to fix. */
  readonly field: string;
  /** Create the error for `field`. */
  constructor(field: string, message: string) {
    super(message);
    this.name = "ProseRootError";
    this.field = field;
  }
}

/**
 * Resolve the prose paths. Throws {@linkcode ProseRootError} (a `TypeError`) when `opts.root` or
 * `$CELLM_DIR` is relative, or when neither `CELLM_DIR` nor `HOME` is set.
 *
 * @example
 * ```ts
 * import { resolvePaths } from "./paths.ts";
 * resolvePaths({ root: "/tmp/cellm" }).flag; // "/tmp/cellm/prose/.active"
 * ```
 */
export function resolvePaths(opts: ProseOptions = {}): ProsePaths {
  let root: string;
  if (opts.root !== undefined) {
    if (!opts.root.startsWith("/")) throw new ProseRootError("root", "root must be absolute");
    root = opts.root;
  } else {
    const cellm = envValue("CELLM_DIR");
    if (cellm !== undefined) {
      if (!cellm.startsWith("/")) {
        throw new ProseRootError("CELLM_DIR", "CELLM_DIR must be an absolute path");
      }
      root = cellm;
    } else {
      const home = envValue("HOME");
      if (home === undefined) {
        throw new ProseRootError("HOME", "HOME is not set (and CELLM_DIR is empty)");
      }
      root = join(home, ".cellm");
    }
  }
  root = root.length > 1 ? root.replace(/\/+$/, "") : root;
  const dir = join(root, "prose");
  return {
    root,
    dir,
    flag: join(dir, ".active"),
    config: join(dir, "config.json"),
    db: join(dir, "prose.db"),
    workerJson: join(root, "worker.json"),
  };
}
