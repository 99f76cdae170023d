/**
 * `prose serve`, the loopback backend (`references/prose.md#backend-api`): the port and database
 * it uses, the HTTP gate in contract order (authentication included), the three endpoints, and
 * the server's lifetime. Every toggle writes the flag through the same transitions as the CLI (the
 * flag file stays the source of truth), re-reads it, and mirrors what it read into SQLite in one
 * transaction. HTTP itself, with its connection cap and deadlines, is `http.ts`.
 *
 * A toggle waits for the flag's lock, and a mirror write for a database another program holds,
 * on timers: the event loop keeps answering `/health` and status meanwhile. Once it holds the lock
 * the flag write runs synchronously; each mirror write derives its rows from a fresh read of the
 * flag file, so one that ran late never undoes a newer toggle. Only the CLI's `serve` imports this
 * module.
 *
 * @module
 */

import { text, verbatim } from "../text.ts";
import { EnvironmentError } from "../errors.ts";
import { errorCode, firstLine } from "../_fs/errors.ts";
import { readRegular } from "../_fs/read.ts";
import { decodeJson } from "./backend.ts";
import { ProseError } from "./errors.ts";
import {
  DEFAULT_LIMITS,
  type HttpLimits,
  type HttpRequest,
  type HttpResponse,
  serveHttp,
} from "./http.ts";
import {
  type FlagRead,
  makeStateDirs,
  type ProseOptions,
  type ProsePaths,
  readProseFlag,
} from "./flag.ts";
import { loadMirrorOpener, MirrorError } from "./mirror.ts";
import { applyToggleAsync, type OpResult } from "./ops.ts";
import { safeJson, sanitizeMessage } from "./sanitize.ts";
import {
  issueField,
  issueMessage,
  type MirrorRows,
  type MirrorValues,
  type StatusDocument,
  type ToggleRequest,
  ToggleRequestSchema,
  WorkerJsonSchema,
} from "./schema.ts";
import { expectedMirror, statusDocument } from "./status.ts";
import {
  authorized,
  newToken,
  proofNonce,
  removeServeRecord,
  responseProof,
  writeServeRecord,
} from "./token.ts";

/** The bind address: loopback only, never configurable. */
const BIND_HOST = "127.0.0.1";
/** The port used when nothing else names one. */
export const DEFAULT_PORT = 31415;
/** Largest accepted request body in bytes (declared or streamed); larger is 413. */
export const MAX_BODY_BYTES: number = DEFAULT_LIMITS.maxBodyBytes;
/** Largest `worker.json` read, in bytes. */
const MAX_WORKER_JSON_BYTES = 65536;

// --- port and database (references/prose.md#starting-and-stopping) ----------------------------

/**
 * Parse a port: decimal digits only, 0–65535. `0` asks the OS for a free port (what tests use).
 */
export function parsePort(raw: string): number | undefined {
  if (!/^[0-9]{1,5}$/.test(raw)) return undefined;
  const n = Number(raw);
  return n <= 65535 ? n : undefined;
}

/** The inputs of {@linkcode resolvePort}: each `undefined` when not given. */
export interface PortInputs {
  /** The `--port` value. */
  flag?: string;
  /** `CELLM_WORKER_PORT` (empty counts as unset). */
  env?: string;
  /** Reads `R/worker.json` (see {@linkcode readWorkerJson}); called only when it decides. */
  workerJson?: () => string | undefined;
}

/**
 * Pick the port: `--port`, else `CELLM_WORKER_PORT`, else the `port` of `worker.json`, else 31415.
 * A malformed `--port` is a usage error and a malformed `CELLM_WORKER_PORT` an environment error
 * (exit 2); an unusable `worker.json` only gives a warning, because it belongs to another program.
 */
export function resolvePort(inputs: PortInputs): { port: number; warning?: string } {
  const invalid = text`must be an integer 0-65535`;
  if (inputs.flag !== undefined) {
    const port = parsePort(inputs.flag);
    if (port === undefined) throw new ProseError("usage", invalid, { field: "--port" });
    return { port };
  }
  if (inputs.env !== undefined && inputs.env !== "") {
    const port = parsePort(inputs.env);
    if (port === undefined) throw new EnvironmentError("CELLM_WORKER_PORT", invalid);
    return { port };
  }
  const worker = inputs.workerJson?.();
  if (worker === undefined) return { port: DEFAULT_PORT };
  let value: unknown;
  try {
    value = JSON.parse(worker);
  } catch {
    value = undefined;
  }
  const parsed = WorkerJsonSchema.safeParse(value);
  if (parsed.success) return { port: parsed.data.port };
  return { port: DEFAULT_PORT, warning: "worker.json has no usable port; using 31415" };
}

/**
 * The text of `R/worker.json`: `undefined` when it is missing, and a placeholder that fails the
 * schema when it cannot be read, is not UTF-8 or is too large.
 */
export function readWorkerJson(path: string): string | undefined {
  try {
    const bytes = readRegular(path, { maxBytes: MAX_WORKER_JSON_BYTES });
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (e) {
    return errorCode(e) === "ENOENT" ? undefined : "";
  }
}

/** The default database `D/prose.db`, creating `R` and `D` (0700); `D` must be a real directory. */
export function defaultDbPath(paths: ProsePaths): string {
  const made = makeStateDirs(paths);
  if (made?.reason === "symlink-dir") {
    throw new ProseError("db", text`${paths.dir} must be a real directory`);
  }
  if (made !== null) {
    throw new ProseError("db", text`cannot create ${paths.dir}: check permissions`);
  }
  let st: Deno.FileInfo;
  try {
    st = Deno.lstatSync(paths.dir);
  } catch {
    throw new ProseError("db", text`cannot inspect ${paths.dir}`);
  }
  if (st.isSymlink || !st.isDirectory) {
    throw new ProseError("db", text`${paths.dir} must be a real directory`);
  }
  return paths.db;
}

// --- the HTTP gate (references/prose.md#http-checks) -------------------------------------------

/** The endpoints and the one method each accepts. */
const ROUTES: Readonly<Record<string, "GET" | "POST">> = Object.freeze({
  "/health": "GET",
  "/api/prose/status": "GET",
  "/api/prose/toggle": "POST",
});

/** A response before it becomes a `Response`: status, JSON body, extra headers. */
export interface Reply {
  /** HTTP status code. */
  status: number;
  /** The JSON body: always an object, serialized in insertion order. */
  body: object;
  /** Extra headers (e.g. `Allow` on 405). */
  headers?: Record<string, string>;
}

/**
 * Build an error reply `{ok: false, error, reason?, field?, message}`; absent optional members are
 * left out.
 */
export function errorReply(
  status: number,
  error: string,
  message: string,
  extra: { reason?: string; field?: string; headers?: Record<string, string> } = {},
): Reply {
  const body: { [key: string]: unknown } = { ok: false, error };
  if (extra.reason !== undefined) body.reason = extra.reason;
  if (extra.field !== undefined) body.field = extra.field;
  body.message = message;
  return extra.headers ? { status, body, headers: extra.headers } : { status, body };
}

/** Route by exact path: the path, or the 404 (unknown path) / 405 with `Allow` (wrong method). */
export function route(method: string, pathname: string): { ok: true; path: string } | {
  ok: false;
  reply: Reply;
} {
  const allowed = Object.hasOwn(ROUTES, pathname) ? ROUTES[pathname] : undefined;
  if (allowed === undefined) {
    return { ok: false, reply: errorReply(404, "not_found", "no such endpoint") };
  }
  if (method !== allowed) {
    const headers = { Allow: allowed };
    return {
      ok: false,
      reply: errorReply(405, "method_not_allowed", `use ${allowed}`, { headers }),
    };
  }
  return { ok: true, path: pathname };
}

/**
 * True when `host` is exactly `127.0.0.1:<port>`, `localhost:<port>` or `[::1]:<port>` (case
 * insensitive). A missing `Host` is refused: a browser always sends one, so only a DNS-rebinding
 * page or a hand-made request could lack it.
 */
export function hostAllowed(host: string | null, port: number): boolean {
  if (host === null) return false;
  const h = host.toLowerCase();
  return h === `127.0.0.1:${port}` || h === `localhost:${port}` || h === `[::1]:${port}`;
}

const LOOPBACK_HOSTNAMES = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * True when there is no `Origin`, or it is an `http`/`https` origin on a loopback host (any port).
 * The opaque origin `null` (sandboxed frames, file pages) is refused.
 */
export function originAllowed(origin: string | null): boolean {
  if (origin === null) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return false;
  if (url.username !== "" || url.password !== "") return false;
  if (url.origin.toLowerCase() !== origin.toLowerCase()) return false;
  return LOOPBACK_HOSTNAMES.has(url.hostname.toLowerCase());
}

/** True when the media type is `application/json`, with at most a `charset=utf-8` parameter. */
export function isJsonContentType(contentType: string | null): boolean {
  if (contentType === null) return false;
  const [type, ...params] = contentType.split(";").map((p) => p.trim().toLowerCase());
  if (type !== "application/json") return false;
  return params.every((p) => p === "" || p === "charset=utf-8" || p === 'charset="utf-8"');
}

const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "Content-Type": "application/json; charset=utf-8",
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
});

/**
 * The HTTP answer for `reply`: one line of JSON (every character a terminal could act on
 * escaped), `no-store`, `nosniff`, and never any CORS header.
 */
export function toHttpResponse(reply: Reply): HttpResponse {
  return {
    status: reply.status,
    headers: { ...JSON_HEADERS, ...reply.headers },
    body: new TextEncoder().encode(safeJson(reply.body) + "\n"),
  };
}

// --- the endpoints ---------------------------------------------------------------------------

/** What the handler needs from the mirror database (the real one is a `ProseMirror`). */
export interface MirrorStore {
  /** The stored rows; throws when the database cannot be read. */
  read(): MirrorRows;
  /** Write all three values in one transaction; throws on failure. */
  write(values: MirrorValues, updatedAt: number): void;
}

/** The server's fixed context. */
export interface ServerContext {
  /** The bound port (the `Host` check needs it). */
  port: number;
  /** The per-server secret every request but `GET /health` must carry. */
  token: string;
  /** Library options: the root `R`. */
  opts: ProseOptions;
  /** The mirror database. */
  mirror: MirrorStore;
  /** Epoch-ms clock (default `Date.now`). */
  clock?: () => number;
}

/** The backend status document for a read (default: a fresh one), compared with the mirror. */
function backendStatus(
  ctx: ServerContext,
  now: number,
  read: FlagRead = readProseFlag({ ...ctx.opts, now }),
): StatusDocument {
  let rows: MirrorRows | null;
  try {
    rows = ctx.mirror.read();
  } catch {
    rows = null; // an unreadable mirror matches nothing: every key drifts
  }
  return statusDocument(read, "backend", now, rows);
}

/** Map a failed transition to its reply: usage → 400, invalid config → 500, else 409. */
function failureReply(outcome: OpResult): Reply {
  const message = sanitizeMessage(outcome.message ?? outcome.reason ?? outcome.result);
  const field = outcome.field === undefined ? {} : { field: outcome.field };
  if (outcome.result === "usage") return errorReply(400, "invalid_request", message, field);
  if (outcome.result === "refused" && outcome.reason === "config") {
    return errorReply(500, "config_invalid", message, field);
  }
  return errorReply(409, outcome.result, message, { reason: outcome.reason ?? outcome.result });
}

/** How long a mirror write is retried while another program holds the database (ms). */
export const MIRROR_BUSY_MS = 1000;

/** True for a write refused because another connection holds the database's write lock. */
function isBusy(e: unknown): boolean {
  return e instanceof Error && /database is (locked|busy)$/.test(e.message);
}

/**
 * Mirror what the flag file says now. A database locked by another program is retried on timers
 * for {@linkcode MIRROR_BUSY_MS} (never a wait that blocks the event loop), each time from a fresh
 * read, so a toggle that ran meanwhile is never undone in the mirror.
 */
async function mirrorFlag(
  ctx: ServerContext,
  now: number,
): Promise<{ read: FlagRead; mirrored: boolean }> {
  const deadline = performance.now() + MIRROR_BUSY_MS;
  for (let wait = 1;; wait = Math.min(wait * 2, 25)) {
    // Mirror what the flag file now says, not what was asked: the file is the source of truth.
    const read = readProseFlag({ ...ctx.opts, now });
    try {
      ctx.mirror.write(expectedMirror(read), now);
      return { read, mirrored: true };
    } catch (e) {
      const left = deadline - performance.now();
      if (!isBusy(e) || left <= 0) return { read, mirrored: false };
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, left)));
    }
  }
}

async function toggle(ctx: ServerContext, request: ToggleRequest, now: number): Promise<Reply> {
  // Waiting for the flag's lock never blocks the event loop (references/prose.md#concurrency).
  const outcome = await applyToggleAsync(request, { ...ctx.opts, now });
  if (!outcome.ok) return failureReply(outcome);
  const { read, mirrored } = await mirrorFlag(ctx, now);
  const body: { [key: string]: unknown } = {
    ok: true,
    action: request.action,
    result: outcome.result,
  };
  if (outcome.reason !== undefined) body.reason = outcome.reason;
  body.status = backendStatus(ctx, now, read);
  body.mirror = { ok: mirrored };
  return { status: 200, body };
}

/** The reply to a request that lacks the token: no detail at all. */
const UNAUTHORIZED: Reply = errorReply(401, "unauthorized", "unauthorized", {
  headers: { "WWW-Authenticate": 'Bearer realm="prose"' },
});
const TOO_LARGE = `body larger than ${MAX_BODY_BYTES} bytes`;

/**
 * The checks of the gate a request's head decides (`references/prose.md#http-checks`: path,
 * method, `Host`, `Origin`, the token), in contract order: the reply that refuses it, or `null`
 * when it may go on (`trusted` when it authenticated; `/health` needs no token).
 */
export function gate(
  ctx: Pick<ServerContext, "port" | "token">,
  head: Pick<HttpRequest, "method" | "path" | "headers">,
): { reply: Reply; trusted: false } | { reply: null; trusted: boolean } {
  const routed = route(head.method, head.path);
  if (!routed.ok) return { reply: routed.reply, trusted: false };
  const header = (name: string) => head.headers.get(name) ?? null;
  if (!hostAllowed(header("host"), ctx.port)) {
    const reply = errorReply(403, "forbidden_host", "Host must be a loopback name with this port");
    return { reply, trusted: false };
  }
  if (!originAllowed(header("origin"))) {
    const reply = errorReply(403, "forbidden_origin", "Origin must be a loopback origin");
    return { reply, trusted: false };
  }
  if (routed.path === "/health") return { reply: null, trusted: false };
  if (!authorized(header("authorization"), ctx.token, head)) {
    return { reply: UNAUTHORIZED, trusted: false };
  }
  return { reply: null, trusted: true };
}

/** The endpoint of a request that passed the gate. */
function endpoint(ctx: ServerContext, req: HttpRequest): Reply | Promise<Reply> {
  if (req.path === "/health") return { status: 200, body: { ok: true } };
  const clock = ctx.clock ?? Date.now;
  if (req.path === "/api/prose/status") {
    return { status: 200, body: backendStatus(ctx, clock()) };
  }
  if (!isJsonContentType(req.headers.get("content-type") ?? null)) {
    return errorReply(415, "unsupported_media_type", "Content-Type must be application/json");
  }
  if (req.bodyTooLarge) return errorReply(413, "payload_too_large", TOO_LARGE);
  const decoded = decodeJson(req.body);
  if (decoded === undefined) {
    return errorReply(400, "invalid_json", "body must be UTF-8 JSON");
  }
  const parsed = ToggleRequestSchema.safeParse(decoded.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    // Neither the message nor the field ever names a key the client sent.
    return errorReply(400, "invalid_request", sanitizeMessage(issueMessage(issue)), {
      field: issueField(issue),
    });
  }
  return toggle(ctx, parsed.data, clock());
}

/**
 * Create the request handler. It never throws: an unexpected failure is a 500 `internal` body
 * without a stack trace.
 */
export function createProseHandler(
  ctx: ServerContext,
): (req: HttpRequest) => HttpResponse | Promise<HttpResponse> {
  return (req) => {
    // The gate, unless the HTTP layer already ran it on the head (before reading the body).
    if (!req.admitted) {
      const checked = gate(ctx, req);
      if (checked.reply !== null) return toHttpResponse(checked.reply);
    }
    // A request that proved the token gets its answer proved back: the CLI believes nothing else
    // (references/prose.md#authentication).
    const nonce = req.path === "/health"
      ? null
      : proofNonce(req.headers.get("authorization") ?? null);
    const finish = (reply: Reply): HttpResponse => {
      const res = toHttpResponse(reply);
      if (nonce !== null) {
        res.headers["Prose-Proof"] = responseProof(ctx.token, nonce, res.status, res.body);
      }
      return res;
    };
    const internal = (e: unknown) =>
      finish(errorReply(500, "internal", sanitizeMessage(firstLine(e))));
    let reply: Reply | Promise<Reply>;
    try {
      reply = endpoint(ctx, req);
    } catch (e) {
      return internal(e);
    }
    // Only a toggle is asynchronous (it may wait for the lock); the rest answers at once.
    return reply instanceof Promise ? reply.then(finish, internal) : finish(reply);
  };
}

// --- lifetime ---------------------------------------------------------------------------------

/** Options of {@linkcode startProseServer}. */
export interface StartOptions {
  /** Port to bind on 127.0.0.1 (`0` = any free port). */
  port: number;
  /** Absolute path of the mirror database. */
  dbPath: string;
  /** Library options (the root `R`; the token file goes into its `D`). */
  opts?: ProseOptions;
  /** Connection bounds (default: the documented ones). */
  limits?: Partial<HttpLimits>;
}

/** A running backend. */
export interface RunningServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** The bound port. */
  port: number;
  /** The mirror database path. */
  dbPath: string;
  /** The token file `D/serve.json`. */
  tokenPath: string;
  /** The per-server secret (also in {@linkcode tokenPath}). */
  token: string;
  /** Connections open now. */
  readonly connections: number;
  /**
   * Stop accepting, finish in-flight requests, close the database, remove the token file. Safe to
   * call twice.
   */
  shutdown(): Promise<void>;
}

function bind(port: number): Deno.TcpListener {
  try {
    return Deno.listen({ hostname: BIND_HOST, port });
  } catch (e) {
    if (e instanceof Deno.errors.AddrInUse) {
      const address = `${BIND_HOST}:${port}`;
      throw new ProseError(
        "port-in-use",
        text`${verbatim(address)} is already in use; pick another with --port`,
      );
    }
    throw e;
  }
}

/**
 * Bind 127.0.0.1, open the mirror and write the token file. Throws {@linkcode ProseError}
 * `port-in-use` for a busy port, `db` for a database that cannot be opened (or is not ours) and
 * `token` when the token file cannot be written (the port is released again then).
 */
export async function startProseServer(options: StartOptions): Promise<RunningServer> {
  const open = await loadMirrorOpener();
  const opts = options.opts ?? {};
  // Bind first: a busy port then leaves no database file behind.
  const listener = bind(options.port);
  const port = (listener.addr as Deno.NetAddr).port;
  const token = newToken();
  let mirror: ReturnType<typeof open>;
  let tokenPath: string;
  try {
    mirror = open(options.dbPath);
  } catch (e) {
    listener.close();
    if (e instanceof MirrorError) throw new ProseError("db", text`${e.message}`);
    throw e;
  }
  try {
    tokenPath = writeServeRecord(opts, { port, pid: Deno.pid, token });
  } catch (e) {
    listener.close();
    mirror.close();
    throw e;
  }
  const ctx: ServerContext = { port, token, opts, mirror };
  const http = serveHttp({
    listener,
    handler: createProseHandler(ctx),
    // The head's checks run before any body byte is read: a client without the token is answered
    // from its head and never holds a connection (references/prose.md#limits).
    admit: (head) => {
      const checked = gate(ctx, head);
      return checked.reply === null
        ? { trusted: checked.trusted }
        : { trusted: false, response: toHttpResponse(checked.reply) };
    },
    protocolError: (status, error, message) => toHttpResponse(errorReply(status, error, message)),
    limits: { ...options.limits, maxBodyBytes: MAX_BODY_BYTES },
  });
  let stopped: Promise<void> | undefined;
  return {
    url: `http://${BIND_HOST}:${port}`,
    port,
    dbPath: options.dbPath,
    tokenPath,
    token,
    get connections() {
      return http.connections;
    },
    shutdown: () => {
      stopped ??= http.shutdown().finally(() => {
        mirror.close();
        removeServeRecord(opts, token);
      });
      return stopped;
    },
  };
}

/**
 * SIGINT/SIGTERM/SIGHUP listeners (a closed terminal ends `serve` as cleanly as Ctrl-C):
 * `signal` resolves with the first one's name; `cancel` removes them.
 */
export function watchSignals(): { signal: Promise<Deno.Signal>; cancel: () => void } {
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  let listeners: (() => void)[] = [];
  const cancel = () => {
    signals.forEach((s, i) => Deno.removeSignalListener(s, listeners[i]));
    listeners = [];
  };
  const signal = new Promise<Deno.Signal>((done) => {
    listeners = signals.map((s) => () => {
      cancel();
      done(s);
    });
    signals.forEach((s, i) => Deno.addSignalListener(s, listeners[i]));
  });
  return { signal, cancel };
}

/**
 * Turn an error nothing handled (a rejected promise, an exception thrown in a callback) into a
 * rejection of `failed`, so `serve` still ends through its error line and `❌ FAILED EXIT:1`
 * instead of the runtime's crash report; `cancel` removes the listeners.
 */
export function watchFatal(): { failed: Promise<never>; cancel: () => void } {
  let fail: (e: unknown) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => {}); // the caller races it; it is never unhandled itself
  const onRejection = (e: PromiseRejectionEvent) => {
    e.preventDefault();
    fail(e.reason);
  };
  const onError = (e: ErrorEvent) => {
    e.preventDefault();
    fail(e.error ?? new Error(e.message));
  };
  globalThis.addEventListener("unhandledrejection", onRejection);
  globalThis.addEventListener("error", onError);
  return {
    failed,
    cancel: () => {
      globalThis.removeEventListener("unhandledrejection", onRejection);
      globalThis.removeEventListener("error", onError);
    },
  };
}
