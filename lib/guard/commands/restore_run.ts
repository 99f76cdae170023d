/**
 * Restoring one run dir (spec §7.3), shared by `restore`, `rollback` and verify's whole-run rollback.
 *
 * @module
 */

import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { CtxkitError, die } from "../../exit.ts";
import { physicalPath } from "../../paths.ts";
import { existsNoFollow, isTrustedCopy, sha256Hex } from "../fsx.ts";
import { readManifest } from "../manifest.ts";
import type { Reporter } from "../report.ts";
import { resolveLogical, rootPrefix } from "../roots.ts";
import { stageRestore } from "../stage.ts";

/** The last-line label of a restore. */
export type RestoreLabel = "RESTORE_VERIFIED" | "ROLLBACK_VERIFIED";

/** Outcome of {@linkcode restoreRunDir}. */
export interface RunDirRestore {
  /** The run dir. */
  runDir: string;
  /** True only when every file was restored and re-hashed equal (`0 mismatches, 0 missing`). */
  ok: boolean;
  /** Rels restored, in order. */
  restored: string[];
  /** Re-hash mismatches after restoring. */
  mismatches: number;
  /** Why it failed, when it did. */
  failure?: "damaged" | "refused" | "mismatch";
}

function rehash(path: string): string | undefined {
  try {
    return sha256Hex(readFileSync(path));
  } catch {
    return undefined;
  }
}

/** The nearest existing ancestor directory of `path`, physically resolved. */
function nearestPhysicalAncestor(path: string): string | undefined {
  let p = dirname(path);
  for (;;) {
    if (existsNoFollow(p)) {
      const physical = physicalPath(p);
      if (physical !== undefined) return physical;
    }
    const parent = dirname(p);
    if (parent === p) return undefined;
    p = parent;
  }
}

/**
 * Restore `files` (or every manifest entry) of `runDir` back under the manifest's root. Manifest
 * problems and bad file arguments die (exit 2) before any write; a damaged snapshot or a refused
 * stage prints `<label>: FAILED - …` and returns `ok: false`, nothing written.
 */
export function restoreRunDir(
  runDir: string,
  label: RestoreLabel,
  files: readonly string[],
  reporter: Reporter,
): RunDirRestore {
  const manifest = readManifest(runDir);
  const root = manifest.root;
  const hashes = new Map(manifest.files.map((f) => [f.path, f.sha256]));
  let rels: string[];
  if (files.length > 0) {
    rels = files.map((f) => {
      const { rel } = resolveLogical(f, root);
      if (!hashes.has(rel)) die(`❌ not in the manifest: ${rel}`);
      return rel;
    });
  } else {
    rels = manifest.files.map((f) => f.path);
  }
  const orig = `${runDir}/orig`;
  let damaged = false;
  for (const rel of rels) {
    if (!existsNoFollow(`${orig}/${rel}`)) {
      reporter.err(`❌ MISSING FROM SNAPSHOT: ${rel} (manifest lists it, ${orig} has no copy)`);
      damaged = true;
    } else {
      const want = hashes.get(rel);
      const ok = isTrustedCopy(orig, rel) && want !== undefined &&
        rehash(`${orig}/${rel}`) === want;
      if (!ok) {
        reporter.err(`❌ SNAPSHOT CHECKSUM MISMATCH: ${rel}`);
        damaged = true;
      }
    }
  }
  if (damaged) {
    reporter.err(
      `${label}: FAILED - snapshot incomplete or damaged; current bytes preserved (${runDir})`,
    );
    return { runDir, ok: false, restored: [], mismatches: 0, failure: "damaged" };
  }
  const physicalRoot = physicalPath(root);
  if (physicalRoot !== undefined) {
    for (const rel of rels) {
      const ancestor = nearestPhysicalAncestor(`${rootPrefix(root)}${rel}`);
      if (
        ancestor === undefined ||
        !(ancestor === physicalRoot || ancestor.startsWith(rootPrefix(physicalRoot)))
      ) {
        die(`❌ unsafe manifest path: ${rel} (${manifest.path})`);
      }
    }
  }
  const targets = rels.map((rel) => `${rootPrefix(root)}${rel}`);
  try {
    stageRestore({ projectDir: root, runDir, files: targets, reporter });
  } catch (e) {
    if (!(e instanceof CtxkitError)) throw e;
    if (e.message !== "") reporter.err(e.message);
    reporter.err(`${label}: FAILED - restoration refused; current bytes preserved (${runDir})`);
    return { runDir, ok: false, restored: [], mismatches: 0, failure: "refused" };
  }
  let mismatches = 0;
  for (let i = 0; i < rels.length; i++) {
    if (rehash(targets[i]) !== hashes.get(rels[i])) {
      reporter.err(`❌ CHECKSUM MISMATCH: ${rels[i]}`);
      mismatches++;
    }
  }
  reporter.out(`${label}: ${mismatches} mismatches, 0 missing from snapshot (${runDir})`);
  return {
    runDir,
    ok: mismatches === 0,
    restored: rels,
    mismatches,
    failure: mismatches === 0 ? undefined : "mismatch",
  };
}
