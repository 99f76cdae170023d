/**
 * The backend's per-server secret (`references/prose.md#authentication`): `prose serve` creates a
 * random 256-bit token on start and records it, with the port it bound and its pid, in
 * `D/serve.json` (0600, written atomically, never through a link, inside the owner-only `D`);
 * every request but `GET /health` must carry it as `Authorization: Bearer <token>`. The CLI reads
 * the record to authenticate; a user who cannot read `D` (another user) cannot change the flag.
 *
 * @module
 */

import { text, verbatim } from "../text.ts";
import { rethrowPermission } from "../_fs/errors.ts";
import { Sha256 } from "../_fs/sha256.ts";
import { DestinationRefusedError, writeFileAtomic } from "../_fs/write.ts";
import { ProseError } from "./errors.ts";
import { makeStateDirs, type ProseOptions, readStateFile, resolvePaths } from "./flag.ts";
import { sanitize } from "./sanitize.ts";
import { type ServeRecord, ServeRecordSchema } from "./schema.ts";
import { randomHex } from "../random.ts";

/** The record's name inside `D`. */
export const SERVE_FILE = "serve.json";
/** Largest record read, in bytes. */
const MAX_RECORD_BYTES = 4096;

/** A fresh token: 32 random bytes as 64 lowercase hex digits. */
export function newToken(): string {
  return randomHex(32);
}

function digest(value: string): string {
  return new Sha256().update(new TextEncoder().encode(value)).hex();
}

/**
 * True when the `Authorization` header is exactly `Bearer <expected>` (scheme case-insensitive).
 * The comparison runs over fixed-length digests with no early exit, so its time does not depend
 * on how much of a guess is right.
 */
export function authorized(header: string | null, expected: string): boolean {
  const m = /^bearer ([^\s]+)$/i.exec(header ?? "");
  const a = digest(m === null ? "" : m[1]);
  const b = digest(expected);
  let diff = m === null ? 1 : 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Write `D/serve.json` for the server at `port` (creating `R` and `D` 0700 when missing). Throws
 * a `token` {@linkcode ProseError} when `D` is unsafe or the file cannot be written.
 */
export function writeServeRecord(opts: ProseOptions, record: ServeRecord): string {
  const paths = resolvePaths(opts);
  const path = `${paths.dir}/${SERVE_FILE}`;
  const made = makeStateDirs(paths);
  if (made !== null) throw new ProseError("token", text`${verbatim(made.message)}`);
  try {
    writeFileAtomic(path, JSON.stringify(ServeRecordSchema.parse(record)) + "\n", {
      mode: 0o600,
      exactMode: true,
    });
  } catch (e) {
    rethrowPermission(e);
    const why = e instanceof DestinationRefusedError
      ? "a link or not a regular file"
      : "not writable";
    throw new ProseError("token", text`cannot write the token file ${path}: ${why}`);
  }
  return path;
}

/**
 * The record in `D/serve.json`, read with the flag's rules (`D` safe, the file regular, never a
 * link, owned by `D`'s owner, writable by nobody else) and parsed through its schema; else why
 * there is none, as a printable phrase.
 */
function readServeRecord(
  opts: ProseOptions,
): { ok: true; record: ServeRecord; path: string } | { ok: false; missing: string } {
  const read = readStateFile(opts, SERVE_FILE, MAX_RECORD_BYTES);
  if (!read.ok) {
    const why = read.reason === "absent" ? "missing" : `unusable (${read.reason})`;
    return { ok: false, missing: `${sanitize(read.path || SERVE_FILE)} is ${why}` };
  }
  try {
    const record = ServeRecordSchema.parse(JSON.parse(new TextDecoder().decode(read.bytes)));
    return { ok: true, record, path: read.path };
  } catch {
    return { ok: false, missing: `${sanitize(read.path)} is not a valid record` };
  }
}

/** Remove `D/serve.json` if it still holds `token` (a newer server may have replaced it). */
export function removeServeRecord(opts: ProseOptions, token: string): void {
  const read = readServeRecord(opts);
  if (!read.ok || read.record.token !== token) return; // gone, or not ours: leave it
  try {
    Deno.removeSync(read.path);
  } catch { /* removed meanwhile */ }
}

/** What the CLI sends to a backend: where, and the token when it has the one for that server. */
export interface BackendTarget {
  /** The origin the request goes to. */
  origin: string;
  /** The bearer token, when `D/serve.json` names the server at `url`. */
  token?: string;
  /** Why there is no token (printed with a 401). */
  missing?: string;
}

/**
 * Where the CLI sends a request for the backend at `url`, and with which token. The token is sent
 * only to the address the server recorded, `http://127.0.0.1:<port>` (a `localhost` URL with that
 * port goes there too): never to another port, and never to whatever listens on `[::1]`.
 */
export function backendTarget(url: string, opts: ProseOptions = {}): BackendTarget {
  const read = readServeRecord(opts);
  if (!read.ok) return { origin: url, missing: read.missing };
  const record = read.record;
  const u = new URL(url);
  const port = Number(u.port === "" ? "80" : u.port);
  if ((u.hostname !== "127.0.0.1" && u.hostname !== "localhost") || port !== record.port) {
    return {
      origin: url,
      missing: `${sanitize(read.path)} names the server at http://127.0.0.1:${record.port}`,
    };
  }
  return { origin: `http://127.0.0.1:${record.port}`, token: record.token };
}
