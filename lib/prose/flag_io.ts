/**
 * Safe I/O of the flag file (spec §7): reads never follow links, never write and never throw on
 * filesystem state; writes go through an exclusive owner-only temp file renamed into an owner-only
 * directory; read-modify-write callers compare bytes first (`conflict`).
 *
 * @module
 */

import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { fsyncDirectory } from "../atomic.ts";
import { isPermissionError } from "../exit.ts";
import { faultPoint } from "../faults.ts";
import {
  type FlagState,
  isExpired,
  issueField,
  MAX_FLAG_BYTES,
  type ProseFlag,
  ProseFlagZod,
  type ReasonCode,
  serializeFlag,
} from "./schema.ts";
import { type ProseOptions, type ProsePaths, resolvePaths } from "./paths.ts";
import { sanitize } from "./sanitize.ts";

/** The result of reading the flag. `flag` is set only for `active` and `expired`. */
export interface FlagRead {
  /** `absent`, `active`, `expired`, `invalid` or `unsafe`. */
  state: FlagState;
  /** The parsed flag (`active` or `expired` only). */
  flag: ProseFlag | null;
  /** Why the flag is `invalid` or `unsafe`. */
  reason: ReasonCode | null;
  /** The schema field at fault (known key names only; an extra key is `(extra-key)`). */
  field: string | null;
  /** The flag path. */
  path: string;
  /** The bytes read, for compare-first writers (never print them). */
  raw: Uint8Array | null;
}

/** A refused or failed write/clear: a reason code and a sanitized one-line message. */
export interface IoFailure {
  /** Always `false`. */
  ok: false;
  /** The reason code, or `conflict` when the flag changed since it was read. */
  reason: ReasonCode | "conflict";
  /** One line: the sanitized path and what to check. */
  message: string;
  /** The schema field, for `schema` failures. */
  field?: string;
}

/** Outcome of {@linkcode writeProseFlag}. */
export type WriteResult = { ok: true; path: string } | IoFailure;
/** Outcome of {@linkcode clearProseFlag}. */
export type ClearResult = { ok: true; cleared: boolean } | IoFailure;

/** Options of compare-first writers: `expect` is the bytes read earlier, `null` for "absent". */
export interface WriteOptions extends ProseOptions {
  /** When set, the write stops with `conflict` unless the flag still holds these bytes. */
  expect?: Uint8Array | null;
}

/** Temp files of killed writers older than this are swept after a successful write. */
export const STALE_TEMP_MS = 60_000;
/** The prefix of flag temp files inside `D`. */
export const TEMP_PREFIX = ".active.tmp-";

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

function errCode(e: unknown): string | undefined {
  return (e as { code?: string } | null)?.code;
}

/** Missing Deno permissions are environment errors, not filesystem state: let the bin report them. */
function passPermission(e: unknown): void {
  if (isPermissionError(e)) throw e;
}

/** The current uid, or `null` when Deno does not grant it (`--allow-sys=uid`). */
export function processUid(): number | null {
  try {
    return typeof Deno.uid === "function" ? Deno.uid() : null;
  } catch {
    return null;
  }
}

const HINTS: Record<ReasonCode | "conflict", string> = {
  "symlink-dir": "the prose directory is a symbolic link; replace it with a real directory (0700)",
  "not-directory": "the prose directory is not a directory",
  "insecure-dir": "the prose directory is group- or world-writable; chmod 700 it",
  "foreign-owner": "owned by another user; remove it or fix its owner",
  "symlink-file": "the flag is a symbolic link; remove it (it was not followed)",
  "not-regular-file": "the flag is not a regular file; remove it",
  "insecure-mode": "the flag is group- or world-writable; run `prose off`",
  "too-large": "the flag exceeds 1024 bytes; run `prose off`",
  "bad-utf8": "the flag is not valid UTF-8; run `prose off`",
  "bad-json": "the flag is not valid JSON; run `prose off`",
  "schema": "the flag does not match the schema; run `prose off`",
  "io-error": "I/O error; check permissions and free space",
  "no-root": "no state root; set CELLM_DIR (absolute) or HOME",
  "conflict": "the flag changed while this command ran; nothing was written",
};

/** The one-line message for a reason code about `path` (sanitized). */
export function reasonMessage(reason: ReasonCode | "conflict", path: string): string {
  return `${sanitize(path)}: ${HINTS[reason]}`;
}

function fail(reason: ReasonCode | "conflict", path: string, field?: string): IoFailure {
  return field === undefined
    ? { ok: false, reason, message: reasonMessage(reason, path) }
    : { ok: false, reason, message: reasonMessage(reason, path), field };
}

type DirCheck =
  | { kind: "absent" }
  | { kind: "ok"; uid: number }
  | { kind: "bad"; reason: ReasonCode };

/** `lstat` `D` and apply §2: a real directory, owned by us, not group/world-writable. */
function checkDir(dir: string, uid: number | null): DirCheck {
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch (e) {
    passPermission(e);
    const code = errCode(e);
    if (code === "ENOENT") return { kind: "absent" };
    return { kind: "bad", reason: code === "ENOTDIR" ? "not-directory" : "io-error" };
  }
  if (st.isSymbolicLink()) return { kind: "bad", reason: "symlink-dir" };
  if (!st.isDirectory()) return { kind: "bad", reason: "not-directory" };
  if (uid !== null && st.uid !== uid) return { kind: "bad", reason: "foreign-owner" };
  if ((st.mode & 0o022) !== 0) return { kind: "bad", reason: "insecure-dir" };
  return { kind: "ok", uid: st.uid };
}

type RawRead =
  | { kind: "absent" }
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "bad"; state: "invalid" | "unsafe"; reason: ReasonCode };

/** Steps 2–3 of the read: lstat checks, then an `O_NOFOLLOW` read of at most 1025 bytes. */
function readRaw(path: string, ownerUid: number): RawRead {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (e) {
    passPermission(e);
    return errCode(e) === "ENOENT"
      ? { kind: "absent" }
      : { kind: "bad", state: "unsafe", reason: "io-error" };
  }
  if (st.isSymbolicLink()) return { kind: "bad", state: "unsafe", reason: "symlink-file" };
  if (!st.isFile()) return { kind: "bad", state: "unsafe", reason: "not-regular-file" };
  if (st.uid !== ownerUid) return { kind: "bad", state: "unsafe", reason: "foreign-owner" };
  if ((st.mode & 0o022) !== 0) return { kind: "bad", state: "unsafe", reason: "insecure-mode" };
  if (st.size > MAX_FLAG_BYTES) return { kind: "bad", state: "invalid", reason: "too-large" };
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | NOFOLLOW | NONBLOCK);
  } catch (e) {
    passPermission(e);
    const code = errCode(e);
    if (code === "ENOENT") return { kind: "absent" };
    return code === "ELOOP"
      ? { kind: "bad", state: "unsafe", reason: "symlink-file" }
      : { kind: "bad", state: "unsafe", reason: "io-error" };
  }
  try {
    if (!fstatSync(fd).isFile()) {
      return { kind: "bad", state: "unsafe", reason: "not-regular-file" };
    }
    const buf = new Uint8Array(MAX_FLAG_BYTES + 1);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, null);
      if (n === 0) break;
      got += n;
    }
    if (got > MAX_FLAG_BYTES) return { kind: "bad", state: "invalid", reason: "too-large" };
    return { kind: "bytes", bytes: buf.slice(0, got) };
  } catch (e) {
    passPermission(e);
    return { kind: "bad", state: "unsafe", reason: "io-error" };
  } finally {
    closeSync(fd);
  }
}

/** Decode and validate flag bytes: fatal UTF-8, strict JSON, strict schema. */
export function parseFlagBytes(
  bytes: Uint8Array,
): { ok: true; flag: ProseFlag } | { ok: false; reason: ReasonCode; field: string | null } {
  let text: string;
  try {
    // ignoreBOM keeps a BOM in the text, so JSON.parse rejects it: flags are strict JSON.
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return { ok: false, reason: "bad-utf8", field: null };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: "bad-json", field: null };
  }
  const parsed = ProseFlagZod.safeParse(value);
  if (!parsed.success) {
    return { ok: false, reason: "schema", field: issueField(parsed.error.issues[0]) };
  }
  return { ok: true, flag: parsed.data };
}

function rootOrNull(opts: ProseOptions): ProsePaths | null {
  try {
    return resolvePaths(opts);
  } catch (e) {
    if (e instanceof TypeError && opts.root === undefined) return null;
    throw e;
  }
}

/**
 * Read the flag without following links, writing anything or throwing on filesystem state.
 *
 * @example
 * ```ts ignore
 * import { readProseFlag, resolveLevel } from "./mod.ts";
 * const read = readProseFlag();
 * if (resolveLevel(read) === "off") {
 *   // default quantization
 * }
 * ```
 */
export function readProseFlag(opts: ProseOptions = {}): FlagRead {
  const paths = rootOrNull(opts);
  if (paths === null) {
    return { state: "unsafe", flag: null, reason: "no-root", field: null, path: "", raw: null };
  }
  const now = opts.now ?? Date.now();
  const base = { flag: null, field: null, path: paths.flag, raw: null };
  const dir = checkDir(paths.dir, processUid());
  if (dir.kind === "absent") return { ...base, state: "absent", reason: null };
  if (dir.kind === "bad") return { ...base, state: "unsafe", reason: dir.reason };
  // Without the uid (no --allow-sys), a flag owned by someone else than D's owner is still foreign.
  const raw = readRaw(paths.flag, dir.uid);
  if (raw.kind === "absent") return { ...base, state: "absent", reason: null };
  if (raw.kind === "bad") return { ...base, state: raw.state, reason: raw.reason };
  const parsed = parseFlagBytes(raw.bytes);
  if (!parsed.ok) {
    return {
      ...base,
      state: "invalid",
      reason: parsed.reason,
      field: parsed.field,
      raw: raw.bytes,
    };
  }
  return {
    state: isExpired(parsed.flag, now) ? "expired" : "active",
    flag: parsed.flag,
    reason: null,
    field: null,
    path: paths.flag,
    raw: raw.bytes,
  };
}

function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Compare-first (write step 6): `null` when `F` still holds `expect`, else the failure. */
function compareFirst(paths: ProsePaths, ownerUid: number, expect: Uint8Array | null) {
  const now = readRaw(paths.flag, ownerUid);
  if (now.kind === "absent") return sameBytes(null, expect) ? null : fail("conflict", paths.flag);
  if (now.kind === "bytes") {
    return sameBytes(now.bytes, expect) ? null : fail("conflict", paths.flag);
  }
  return fail(now.state === "unsafe" ? now.reason : "conflict", paths.flag);
}

function makeDir(path: string, recursive: boolean): ReasonCode | null {
  try {
    mkdirSync(path, { mode: 0o700, recursive });
    return null;
  } catch (e) {
    passPermission(e);
    const code = errCode(e);
    if (code === "EEXIST") return null;
    return code === "ENOTDIR" ? "not-directory" : "io-error";
  }
}

/** Create `R` and `D` when missing (0700, never chmod an existing one) and check `D` is safe. */
function prepareDir(paths: ProsePaths): { ok: true; uid: number } | IoFailure {
  const rootErr = makeDir(paths.root, true);
  if (rootErr !== null) return fail(rootErr, paths.root);
  const dirErr = makeDir(paths.dir, false);
  if (dirErr !== null) return fail(dirErr, paths.dir);
  const dir = checkDir(paths.dir, processUid());
  if (dir.kind === "absent") return fail("io-error", paths.dir);
  if (dir.kind === "bad") return fail(dir.reason, paths.dir);
  return { ok: true, uid: dir.uid };
}

/** `F` must be absent or a regular file before a write or a clear. */
function checkFlagPath(path: string): IoFailure | null {
  try {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return fail("symlink-file", path);
    if (!st.isFile()) return fail("not-regular-file", path);
    return null;
  } catch (e) {
    passPermission(e);
    return errCode(e) === "ENOENT" ? null : fail("io-error", path);
  }
}

/**
 * Write `bytes` to `dir/name` through an exclusive temp file `dir/<tempPrefix><pid>-<16 hex>`
 * (`O_EXCL|O_NOFOLLOW`, `fchmod mode`, fsync, rename, fsync dir). `beforeRename` may veto the
 * rename (the temp file is then removed). Throws only permission errors; returns the error code.
 */
export function writeExclusive(
  dir: string,
  name: string,
  tempPrefix: string,
  bytes: Uint8Array,
  mode: number,
  beforeRename: (tempUid: number) => IoFailure | null = () => null,
): IoFailure | { ok: true } {
  const temp = join(dir, `${tempPrefix}${Deno.pid}-${randomBytes(8).toString("hex")}`);
  let fd: number;
  try {
    fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, mode);
  } catch (e) {
    passPermission(e);
    return fail("io-error", join(dir, name));
  }
  let created = true;
  try {
    let uid: number;
    try {
      let offset = 0;
      while (offset < bytes.length) {
        offset += writeSync(fd, bytes, offset, bytes.length - offset);
      }
      fchmodSync(fd, mode); // regardless of umask
      fsyncSync(fd);
      uid = fstatSync(fd).uid;
    } finally {
      closeSync(fd);
    }
    const veto = beforeRename(uid);
    if (veto !== null) return veto;
    faultPoint("prose.flag.before-rename");
    renameSync(temp, join(dir, name));
    created = false;
    fsyncDirectory(dir);
    return { ok: true };
  } catch (e) {
    passPermission(e);
    return fail("io-error", join(dir, name));
  } finally {
    if (created) {
      try {
        unlinkSync(temp);
      } catch { /* already gone */ }
    }
  }
}

/** Delete regular `<prefix>*` files in `dir` older than {@linkcode STALE_TEMP_MS}, never following links. */
export function sweepTemps(dir: string, prefix: string, now: number = Date.now()): number {
  let swept = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    passPermission(e);
    return 0;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const path = join(dir, name);
    try {
      const st = lstatSync(path);
      if (st.isFile() && now - st.mtimeMs > STALE_TEMP_MS) {
        unlinkSync(path);
        swept++;
      }
    } catch (e) {
      passPermission(e);
    }
  }
  return swept;
}

/**
 * Validate and write the flag atomically (symlink-safe, exclusive temp, 0600, fsync, rename).
 * With `expect`, stops with `conflict` when the flag no longer holds those bytes.
 *
 * @example
 * ```ts ignore
 * import { writeProseFlag } from "./mod.ts";
 * const now = Date.now();
 * const r = writeProseFlag({
 *   level: "full",
 *   ttl: { unit: "turn", value: 1 },
 *   expiresAt: null,
 *   activatedAt: now,
 *   source: "manual",
 * });
 * if (!r.ok) console.error(r.reason);
 * ```
 */
export function writeProseFlag(flag: ProseFlag, opts: WriteOptions = {}): WriteResult {
  const paths = rootOrNull(opts);
  if (paths === null) return fail("no-root", "");
  const parsed = ProseFlagZod.safeParse(flag);
  if (!parsed.success) return fail("schema", paths.flag, issueField(parsed.error.issues[0]));
  const bytes = new TextEncoder().encode(serializeFlag(parsed.data));
  if (bytes.length > MAX_FLAG_BYTES) return fail("too-large", paths.flag);
  const dir = prepareDir(paths);
  if (!dir.ok) return dir;
  const bad = checkFlagPath(paths.flag);
  if (bad !== null) return bad;
  const written = writeExclusive(paths.dir, ".active", TEMP_PREFIX, bytes, 0o600, (tempUid) => {
    if (tempUid !== dir.uid) return fail("foreign-owner", paths.dir);
    return opts.expect === undefined ? null : compareFirst(paths, dir.uid, opts.expect);
  });
  if (!written.ok) return written;
  sweepTemps(paths.dir, TEMP_PREFIX, Date.now());
  return { ok: true, path: paths.flag };
}

/**
 * Remove the flag (`cleared: false` when there was none). Refuses an unsafe directory and a
 * symlinked or non-regular flag; with `expect`, stops with `conflict` when the bytes changed.
 *
 * @example
 * ```ts ignore
 * import { clearProseFlag } from "./mod.ts";
 * clearProseFlag(); // { ok: true, cleared: true } when a flag was removed
 * ```
 */
export function clearProseFlag(opts: WriteOptions = {}): ClearResult {
  const paths = rootOrNull(opts);
  if (paths === null) return fail("no-root", "");
  const dir = checkDir(paths.dir, processUid());
  if (dir.kind === "absent") {
    return opts.expect === undefined || opts.expect === null
      ? { ok: true, cleared: false }
      : fail("conflict", paths.flag);
  }
  if (dir.kind === "bad") return fail(dir.reason, paths.dir);
  const bad = checkFlagPath(paths.flag);
  if (bad !== null) return bad;
  if (opts.expect !== undefined) {
    const conflict = compareFirst(paths, dir.uid, opts.expect);
    if (conflict !== null) return conflict;
  }
  try {
    unlinkSync(paths.flag);
  } catch (e) {
    passPermission(e);
    if (errCode(e) === "ENOENT") return { ok: true, cleared: false };
    return fail("io-error", paths.flag);
  }
  fsyncDirectory(paths.dir);
  return { ok: true, cleared: true };
}
