/**
 * The backend's per-server secret (`references/prose.md#authentication`): `prose serve` creates a
 * random 256-bit token on start and records it, with the port it bound and its pid, in
 * `D/serve.json` (0600, written atomically, never through a link, inside the owner-only `D`);
 * every request but `GET /health` must carry it as `Authorization: Bearer <token>`, or prove it
 * knows it without sending it (`Authorization: Prose <nonce> <mac>`, what the CLI sends). A server
 * answers a proved request with `Prose-Proof`, an HMAC of its answer keyed by the token, so the CLI
 * knows it talks to the server that wrote `serve.json` before it believes a word — and the token
 * itself never leaves the user's files. A user who cannot read `D` (another user) can neither
 * change the flag nor pass for the server.
 *
 * @module
 */

import { text, verbatim } from "../text.ts";
import { rethrowPermission } from "../_fs/errors.ts";
import { Sha256 } from "../_fs/sha256.ts";
import { DestinationRefusedError, writeFileAtomic } from "../_fs/write.ts";
import { ProseError } from "./errors.ts";
import {
  checkStateDir,
  makeStateDirs,
  type ProseOptions,
  readStateFile,
  reasonMessage,
  resolvePaths,
} from "./flag.ts";
import { openRegular, readAllFrom } from "../_fs/read.ts";
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

const encoder = new TextEncoder();

function digest(value: string): string {
  return new Sha256().update(encoder.encode(value)).hex();
}

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** HMAC-SHA-256 (RFC 2104) of `message` keyed by `key`, as 64 lowercase hex digits. */
export function hmacHex(key: string, message: string | Uint8Array): string {
  let k: Uint8Array = encoder.encode(key);
  if (k.length > 64) k = hexBytes(new Sha256().update(k).hex());
  const ipad = new Uint8Array(64).fill(0x36);
  const opad = new Uint8Array(64).fill(0x5c);
  for (let i = 0; i < k.length; i++) {
    ipad[i] ^= k[i];
    opad[i] ^= k[i];
  }
  const bytes = typeof message === "string" ? encoder.encode(message) : message;
  const inner = new Sha256().update(ipad).update(bytes).hex();
  return new Sha256().update(opad).update(hexBytes(inner)).hex();
}

/** Equal strings, compared with no early exit (for secrets and MACs of a fixed length). */
function sameSecret(a: string, b: string): boolean {
  let diff = a.length === b.length ? 0 : 1;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

/** The MAC a client proving the token sends for `method path` with its fresh `nonce`. */
export function requestMac(token: string, nonce: string, method: string, path: string): string {
  return hmacHex(token, `prose-request ${nonce} ${method} ${path}`);
}

/** The `Prose-Proof` of an answer (`status` and `body`) to the request that sent `nonce`. */
export function responseProof(
  token: string,
  nonce: string,
  status: number,
  body: Uint8Array,
): string {
  return hmacHex(token, `prose-response ${nonce} ${status} ${new Sha256().update(body).hex()}`);
}

const PROSE_SCHEME = /^prose ([0-9a-f]{32}) ([0-9a-f]{64})$/i;

/** The nonce of an `Authorization: Prose <nonce> <mac>` header, or `null` for another header. */
export function proofNonce(header: string | null): string | null {
  return PROSE_SCHEME.exec(header ?? "")?.[1].toLowerCase() ?? null;
}

/**
 * True when the `Authorization` header is exactly `Bearer <expected>` (scheme case-insensitive),
 * or `Prose <nonce> <mac>` with the MAC of `request` under `expected` (the token then never
 * travels). Every comparison runs over fixed-length digests or MACs with no early exit, so its
 * time does not depend on how much of a guess is right.
 */
export function authorized(
  header: string | null,
  expected: string,
  request?: { method: string; path: string },
): boolean {
  const proved = PROSE_SCHEME.exec(header ?? "");
  if (proved !== null) {
    if (request === undefined) return false;
    const mac = requestMac(expected, proved[1].toLowerCase(), request.method, request.path);
    return sameSecret(proved[2].toLowerCase(), mac);
  }
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
  // Every reader (the CLI, a consumer skill) applies the flag's rules to D and to this file: a
  // record they would refuse is a server nobody can reach, and a token in a directory others can
  // write (references/prose.md#authentication).
  const dir = checkStateDir(opts);
  if (!dir.ok) {
    throw new ProseError(
      "token",
      text`cannot write the token file ${path}: ${verbatim(reasonMessage(dir.reason, dir.path))}`,
    );
  }
  try {
    writeFileAtomic(path, JSON.stringify(ServeRecordSchema.parse(record)) + "\n", {
      mode: 0o600,
      exactMode: true,
      beforeRename: (temp) => {
        // Readers require the record to have D's owner (without --allow-sys, the temp file's owner
        // is the only uid known).
        if (temp.uid !== dir.uid) throw new ForeignOwner();
      },
    });
  } catch (e) {
    rethrowPermission(e);
    const why = e instanceof ForeignOwner
      ? verbatim(reasonMessage("foreign-owner", paths.dir))
      : e instanceof DestinationRefusedError
      ? "a link or not a regular file"
      : "not writable";
    throw new ProseError("token", text`cannot write the token file ${path}: ${why}`);
  }
  return path;
}

/** The record's temp file is not owned by D's owner: readers would refuse the record. */
class ForeignOwner extends Error {}

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

/**
 * Remove `D/serve.json` if it still holds `token` (a newer server may have replaced it). The
 * server reads the file it wrote itself, whatever happened to `D` since (a `chmod` that makes
 * readers refuse it must not leave the token behind): a regular file, never followed through a
 * link, removed only while it is still the file read.
 */
export function removeServeRecord(opts: ProseOptions, token: string): void {
  const path = `${resolvePaths(opts).dir}/${SERVE_FILE}`;
  try {
    const { file, info } = openRegular(path, { follow: false, maxBytes: MAX_RECORD_BYTES });
    let bytes: Uint8Array;
    try {
      bytes = readAllFrom(file, info.size);
    } finally {
      file.close();
    }
    const record = ServeRecordSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    if (!record.success || record.data.token !== token) return; // not ours: leave it
    const now = Deno.lstatSync(path);
    if (now.dev === info.dev && now.ino === info.ino) Deno.removeSync(path);
  } catch (e) {
    rethrowPermission(e); // gone, replaced, unreadable or not a record: nothing of ours to remove
  }
}

/** What the CLI sends to a backend: where, and the token when it has the one for that server. */
export interface BackendTarget {
  /** The origin the request goes to. */
  origin: string;
  /**
   * The server's token, when `D/serve.json` names the server at `url`: the key of the proofs the
   * CLI sends and checks; never sent itself.
   */
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
