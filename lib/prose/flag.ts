/**
 * The flag file: where the prose state lives (`references/prose.md#files`) and the one safe way to
 * read, write and clear the flag (`references/prose.md#flag-io`). Reads never follow links, never
 * write and never throw on file-system state; writes replace the flag atomically through an
 * owner-only temp file in an owner-only directory; read-modify-write callers pass the bytes they
 * read as `expect`, so a concurrent change ends in `conflict` instead of a lost update.
 *
 * @module
 */

import { EnvironmentError } from "../errors.ts";
import { text } from "../text.ts";
import { envValue, normalizeLexical } from "../paths.ts";
import { errorCode, rethrowPermission } from "../_fs/errors.ts";
import { LinkedComponentError, makePrivateDirs } from "../_fs/dirs.ts";
import { readHead, ReadRefusedError } from "../_fs/read.ts";
import {
  DestinationRefusedError,
  fsyncDirectory,
  sweepTemps,
  writeFileAtomic,
} from "../_fs/write.ts";
import { faultPoint } from "../faults.ts";
import {
  type FlagState,
  isExpired,
  issueField,
  MAX_FLAG_BYTES,
  type ProseFlag,
  ProseFlagSchema,
  type ProseLevel,
  type ReasonCode,
  serializeFlag,
} from "./schema.ts";
import { sanitize } from "./sanitize.ts";

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

/** Options of every library call: an explicit root and an injected clock. */
export interface ProseOptions {
  /** Absolute root `R`; default `$CELLM_DIR`, else `$HOME/.cellm`. */
  root?: string;
  /** Epoch-ms "now" (default `Date.now()`); tests inject it for deterministic TTLs. */
  now?: number;
  /**
   * Writers only: the flag's bytes as read earlier (`FlagRead.raw`, `null` for "absent"); the
   * write stops with `conflict` unless the flag still holds them (compare first).
   */
  expect?: Uint8Array | null;
}

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

/** A refused or failed write or clear: a reason code and a sanitized one-line message. */
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

/** The prefix of flag temp files inside `D`. */
const TEMP_PREFIX = ".active.tmp-";

/** A path below `base`, normalized like a join (`base` stays relative when it is). */
function child(base: string, name: string): string {
  return base.startsWith("/") ? normalizeLexical(`${base}/${name}`, "/") : `${base}/${name}`;
}

/**
 * Resolve the prose paths. A relative `opts.root` is a `TypeError` (misuse); a relative
 * `$CELLM_DIR`, or neither `CELLM_DIR` nor `HOME`, is an `EnvironmentError` naming the variable.
 */
export function resolvePaths(opts: ProseOptions = {}): ProsePaths {
  let root: string;
  if (opts.root !== undefined) {
    if (!opts.root.startsWith("/")) throw new TypeError("root must be absolute");
    root = opts.root;
  } else {
    const cellm = envValue("CELLM_DIR");
    const home = envValue("HOME");
    if (cellm !== undefined) {
      if (!cellm.startsWith("/")) {
        throw new EnvironmentError("CELLM_DIR", text`CELLM_DIR must be an absolute path`);
      }
      root = cellm;
    } else if (home !== undefined) {
      root = child(home, ".cellm");
    } else {
      throw new EnvironmentError("HOME", text`HOME is not set (and CELLM_DIR is empty)`);
    }
  }
  root = root.length > 1 ? root.replace(/\/+$/, "") : root;
  const dir = child(root, "prose");
  return {
    root,
    dir,
    flag: child(dir, ".active"),
    config: child(dir, "config.json"),
    db: child(dir, "prose.db"),
    workerJson: child(root, "worker.json"),
  };
}

/** The paths, or `null` when the environment names no usable root (readers report `no-root`). */
function pathsOrNull(opts: ProseOptions): ProsePaths | null {
  try {
    return resolvePaths(opts);
  } catch (e) {
    if (e instanceof EnvironmentError) return null;
    throw e;
  }
}

/** The flag path, or `""` when the environment names no usable root. */
export function flagPath(opts: ProseOptions = {}): string {
  return pathsOrNull(opts)?.flag ?? "";
}

/** The current uid, or `null` when Deno does not grant it (`--allow-sys=uid`). */
function processUid(): number | null {
  try {
    return typeof Deno.uid === "function" ? Deno.uid() : null;
  } catch {
    return null;
  }
}

const HINTS: Record<ReasonCode | "conflict" | "busy", string> = {
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
  "busy": "another prose command holds the flag's lock; retry (a killed command's lock is " +
    "broken at once)",
};

/** The one-line message for a reason code about `path` (sanitized). */
export function reasonMessage(reason: ReasonCode | "conflict" | "busy", path: string): string {
  return `${sanitize(path)}: ${HINTS[reason]}`;
}

function fail(reason: ReasonCode | "conflict", path: string, field?: string): IoFailure {
  return field === undefined
    ? { ok: false, reason, message: reasonMessage(reason, path) }
    : { ok: false, reason, message: reasonMessage(reason, path), field };
}

/** `lstat` of `path`, or the OS error code (a missing Deno grant is rethrown). */
function lstatOr(path: string): Deno.FileInfo | string {
  try {
    return Deno.lstatSync(path);
  } catch (e) {
    rethrowPermission(e);
    return errorCode(e) ?? "EIO";
  }
}

/**
 * `D` when it exists and passes the checks of `references/prose.md#files` (the lock lives there),
 * else `null` (missing, unsafe, or no root: the transition reports that itself).
 */
export function safeStateDir(opts: ProseOptions = {}): string | null {
  const checked = checkStateDir(opts);
  return checked.ok ? checked.dir : null;
}

/**
 * `D` and its owner when it exists and passes the checks every reader of the state applies
 * (`references/prose.md#files`), else why not: a writer of a state file other readers must trust
 * (`serve.json`) writes nothing into a `D` they would refuse.
 */
export function checkStateDir(
  opts: ProseOptions = {},
): { ok: true; dir: string; uid: number } | { ok: false; reason: ReasonCode; path: string } {
  const paths = pathsOrNull(opts);
  if (paths === null) return { ok: false, reason: "no-root", path: "" };
  const dir = checkDir(paths.dir, processUid());
  if (dir.kind === "ok") return { ok: true, dir: paths.dir, uid: dir.uid };
  return { ok: false, reason: dir.kind === "bad" ? dir.reason : "io-error", path: paths.dir };
}

/**
 * The bytes of the file `D/<name>` (at most `max`), read with the flag's rules: `D` must be safe,
 * the file a regular file (never a link) with `D`'s owner that nobody else can write. Used for
 * the backend's `serve.json`.
 */
export function readStateFile(
  opts: ProseOptions,
  name: string,
  max: number,
): { ok: true; bytes: Uint8Array; path: string } | {
  ok: false;
  reason: ReasonCode | "absent";
  path: string;
} {
  const paths = pathsOrNull(opts);
  if (paths === null) return { ok: false, reason: "no-root", path: "" };
  const path = child(paths.dir, name);
  const dir = checkDir(paths.dir, processUid());
  if (dir.kind !== "ok") {
    return { ok: false, reason: dir.kind === "bad" ? dir.reason : "absent", path };
  }
  const raw = readRaw(path, dir.uid, max);
  if (raw.kind === "bytes") return { ok: true, bytes: raw.bytes, path };
  return { ok: false, reason: raw.kind === "absent" ? "absent" : raw.reason, path };
}

type DirCheck =
  | { kind: "absent" }
  | { kind: "ok"; uid: number }
  | { kind: "bad"; reason: ReasonCode };

/** `lstat` `D` against the rules of `references/prose.md#files`. */
function checkDir(dir: string, uid: number | null): DirCheck {
  const st = lstatOr(dir);
  if (typeof st === "string") {
    if (st === "ENOENT") return { kind: "absent" };
    return { kind: "bad", reason: st === "ENOTDIR" ? "not-directory" : "io-error" };
  }
  if (st.isSymlink) return { kind: "bad", reason: "symlink-dir" };
  if (!st.isDirectory) return { kind: "bad", reason: "not-directory" };
  if (uid !== null && st.uid !== uid) return { kind: "bad", reason: "foreign-owner" };
  if (((st.mode ?? 0) & 0o022) !== 0) return { kind: "bad", reason: "insecure-dir" };
  return { kind: "ok", uid: st.uid ?? -1 };
}

type RawRead =
  | { kind: "absent" }
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "bad"; state: "invalid" | "unsafe"; reason: ReasonCode };

const unsafe = (reason: ReasonCode): RawRead => ({ kind: "bad", state: "unsafe", reason });

/**
 * `lstat` checks, then a no-follow read of at most `max + 1` bytes (`references/prose.md#flag-io`).
 */
function readRaw(path: string, ownerUid: number, max: number = MAX_FLAG_BYTES): RawRead {
  // A writer renamed a new flag into place between our lstat and open: read again. Every retry
  // means a write finished, so this ends when the writers stop (bounded all the same).
  for (let attempt = 0;; attempt++) {
    const read = readRawOnce(path, ownerUid, max);
    if (read !== "changed") return read;
    if (attempt >= 1000) return unsafe("io-error");
  }
}

function readRawOnce(path: string, ownerUid: number, max: number): RawRead | "changed" {
  const st = lstatOr(path);
  if (typeof st === "string") return st === "ENOENT" ? { kind: "absent" } : unsafe("io-error");
  if (st.isSymlink) return unsafe("symlink-file");
  if (!st.isFile) return unsafe("not-regular-file");
  if ((st.uid ?? -1) !== ownerUid) return unsafe("foreign-owner");
  if (((st.mode ?? 0) & 0o022) !== 0) return unsafe("insecure-mode");
  const tooLarge: RawRead = { kind: "bad", state: "invalid", reason: "too-large" };
  if (st.size > max) return tooLarge;
  try {
    const head = readHead(path, max + 1, { follow: false });
    return head.size > max ? tooLarge : { kind: "bytes", bytes: head.bytes };
  } catch (e) {
    rethrowPermission(e);
    if (e instanceof ReadRefusedError) {
      const r = e.refusal;
      if (r === "changed") return "changed";
      return unsafe(
        r === "symlink" ? "symlink-file" : r === "not-regular" ? "not-regular-file" : "io-error",
      );
    }
    return errorCode(e) === "ENOENT" ? { kind: "absent" } : unsafe("io-error");
  }
}

/** Decode and validate flag bytes: fatal UTF-8, strict JSON, strict schema. */
export function parseFlagBytes(
  bytes: Uint8Array,
): { ok: true; flag: ProseFlag } | { ok: false; reason: ReasonCode; field: string | null } {
  let decoded: string;
  try {
    // ignoreBOM keeps a BOM in the text, so JSON.parse rejects it: flags are strict JSON.
    decoded = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return { ok: false, reason: "bad-utf8", field: null };
  }
  let value: unknown;
  try {
    value = JSON.parse(decoded);
  } catch {
    return { ok: false, reason: "bad-json", field: null };
  }
  const parsed = ProseFlagSchema.safeParse(value);
  if (!parsed.success) {
    return { ok: false, reason: "schema", field: issueField(parsed.error.issues[0]) };
  }
  return { ok: true, flag: parsed.data };
}

/**
 * Read the flag without following links, writing anything or throwing on file-system state.
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
  const paths = pathsOrNull(opts);
  if (paths === null) {
    return { state: "unsafe", flag: null, reason: "no-root", field: null, path: "", raw: null };
  }
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
    state: isExpired(parsed.flag, opts.now ?? Date.now()) ? "expired" : "active",
    flag: parsed.flag,
    reason: null,
    field: null,
    path: paths.flag,
    raw: raw.bytes,
  };
}

/**
 * The level skills should render at: the flag's level when it is `active`, otherwise `off`
 * (default quantization).
 *
 * @example
 * ```ts ignore
 * import { readProseFlag, resolveLevel } from "./mod.ts";
 * const level = resolveLevel(readProseFlag()); // "off" | "minimal" | "full"
 * ```
 */
export function resolveLevel(read: Pick<FlagRead, "state" | "flag">): ProseLevel {
  return read.state === "active" && read.flag !== null ? read.flag.level : "off";
}

function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Compare-first: `null` when `F` still holds `expect`, else the failure. */
function compareFirst(paths: ProsePaths, ownerUid: number, expect: Uint8Array | null) {
  const now = readRaw(paths.flag, ownerUid);
  if (now.kind === "bad" && now.state === "unsafe") return fail(now.reason, paths.flag);
  const bytes = now.kind === "absent" ? null : now.kind === "bytes" ? now.bytes : undefined;
  return bytes !== undefined && sameBytes(bytes, expect) ? null : fail("conflict", paths.flag);
}

/**
 * Create `R` and `D` as 0700 directories when missing (an existing one is never chmod-ed); `D`
 * must not be a link. `null` on success.
 */
export function makeStateDirs(paths: ProsePaths): IoFailure | null {
  for (const [dir, trusted] of [[paths.root, undefined], [paths.dir, paths.dir]] as const) {
    try {
      makePrivateDirs(dir, trusted);
    } catch (e) {
      rethrowPermission(e);
      if (e instanceof LinkedComponentError) return fail("symlink-dir", dir);
      return fail(errorCode(e) === "ENOTDIR" ? "not-directory" : "io-error", dir);
    }
  }
  return null;
}

/** A veto of the atomic write's rename, carrying the failure to report. */
class Vetoed extends Error {
  constructor(readonly failure: IoFailure) {
    super(failure.message);
  }
}

/**
 * Validate and write the flag atomically (never through a link, exclusive 0600 temp, fsync,
 * rename). With `expect`, stops with `conflict` when the flag no longer holds those bytes.
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
export function writeProseFlag(
  flag: ProseFlag,
  opts: ProseOptions = {},
): { ok: true; path: string } | IoFailure {
  const paths = pathsOrNull(opts);
  if (paths === null) return fail("no-root", "");
  const parsed = ProseFlagSchema.safeParse(flag);
  if (!parsed.success) return fail("schema", paths.flag, issueField(parsed.error.issues[0]));
  const bytes = new TextEncoder().encode(serializeFlag(parsed.data));
  if (bytes.length > MAX_FLAG_BYTES) return fail("too-large", paths.flag);
  const made = makeStateDirs(paths);
  if (made !== null) return made;
  const dir = checkDir(paths.dir, processUid());
  if (dir.kind !== "ok") return fail(dir.kind === "bad" ? dir.reason : "io-error", paths.dir);
  try {
    writeFileAtomic(paths.flag, bytes, {
      mode: 0o600,
      exactMode: true,
      tempPrefix: TEMP_PREFIX,
      beforeRename: (temp) => {
        // Without --allow-sys the temp file's owner is the only uid known: D must be ours.
        if (temp.uid !== dir.uid) throw new Vetoed(fail("foreign-owner", paths.dir));
        if (opts.expect !== undefined) {
          const conflict = compareFirst(paths, dir.uid, opts.expect);
          if (conflict !== null) throw new Vetoed(conflict);
        }
        faultPoint("prose.flag.before-rename");
      },
    });
  } catch (e) {
    rethrowPermission(e);
    if (e instanceof Vetoed) return e.failure;
    if (e instanceof DestinationRefusedError) {
      return fail(e.kind === "symlink" ? "symlink-file" : "not-regular-file", paths.flag);
    }
    return fail("io-error", paths.flag);
  }
  sweepTemps(paths.dir, { prefix: TEMP_PREFIX, deadWriters: false });
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
export function clearProseFlag(
  opts: ProseOptions = {},
): { ok: true; cleared: boolean } | IoFailure {
  const paths = pathsOrNull(opts);
  if (paths === null) return fail("no-root", "");
  const dir = checkDir(paths.dir, processUid());
  if (dir.kind === "absent") {
    return opts.expect === undefined || opts.expect === null
      ? { ok: true, cleared: false }
      : fail("conflict", paths.flag);
  }
  if (dir.kind === "bad") return fail(dir.reason, paths.dir);
  const st = lstatOr(paths.flag);
  if (typeof st === "string") {
    if (st !== "ENOENT") return fail("io-error", paths.flag);
  } else if (st.isSymlink) return fail("symlink-file", paths.flag);
  else if (!st.isFile) return fail("not-regular-file", paths.flag);
  if (opts.expect !== undefined) {
    const conflict = compareFirst(paths, dir.uid, opts.expect);
    if (conflict !== null) return conflict;
  }
  try {
    Deno.removeSync(paths.flag);
  } catch (e) {
    rethrowPermission(e);
    if (errorCode(e) === "ENOENT") return { ok: true, cleared: false };
    return fail("io-error", paths.flag);
  }
  fsyncDirectory(paths.dir);
  return { ok: true, cleared: true };
}
