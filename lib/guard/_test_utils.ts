/**
 * Fixtures shared by the guard's unit tests (not part of the library).
 *
 * @module
 */

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { UsageError } from "../errors.ts";
import type { GuardRoots } from "./roots.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

/** Fresh roots in a temp dir: project `P`, global `G = <base>/home/.claude` and `B`, all existing. */
export function guardRootsFixture(prefix: string): GuardRoots & { base: string } {
  const base = makeTempDir(prefix);
  const global = `${base}/home/.claude`;
  const roots = { base, project: `${base}/proj`, global, backups: `${global}/backups` };
  mkdirSync(roots.project, { recursive: true });
  mkdirSync(roots.backups, { recursive: true });
  return roots;
}

/** A run dir `B/<name>` with `orig/` and, unless `manifest` is `undefined`, that manifest. */
export function makeRunDir(
  backups: string,
  name: string,
  manifest?: Record<string, unknown>,
): string {
  const dir = `${backups}/${name}`;
  mkdirSync(`${dir}/orig`, { recursive: true });
  if (manifest !== undefined) writeFileSync(`${dir}/manifest.json`, JSON.stringify(manifest));
  return dir;
}

/** Assert that `fn` throws a {@linkcode UsageError} (exit 2) with exactly `message`. */
export function assertUsage(fn: () => unknown, message: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof UsageError, String(e));
    assert.equal(e.exitCode, 2);
    assert.equal(e.message, message);
    return true;
  });
}

/**
 * The `RESTORE_REFUSED:` line of `rel` and its two hint lines as a collecting reporter keeps them
 * (`stderr: …`), when no command line registered its forced restore (the library's bare form).
 */
export function refusedShown(runDir: string, rel: string, abs: string): string[] {
  return [
    `stderr: RESTORE_REFUSED: ${rel} (current bytes lack matching draft ownership)`,
    `stderr:   current: ${abs} (kept) · original: ${runDir}/orig/${rel}`,
    `stderr:   to restore it anyway, keeping the current bytes in ${runDir}/displaced/: restore --run-dir ${runDir} --force ${abs}`,
  ];
}
