/**
 * `prose serve`, the loopback backend (`references/prose.md#backend-api`): the port and database
 * it uses, the HTTP gate in contract order, the three endpoints, and the server's lifetime. Every
 * toggle writes the flag through the same transitions as the CLI (the flag file stays the source
 * of truth), re-reads it, and mirrors what it read into SQLite in one transaction.
 *
 * The handler is synchronous between reading the body and answering, so a flag write and its
 * mirror write never interleave with another request. Only the CLI's `serve` imports this module.
 *
 * @module
 */

import { text, verbatim } from "../text.ts";
import { EnvironmentError } from "../errors.ts";
import { errorCode, firstLine } from "../_fs/errors.ts";
import { readRegular } from "../_fs/read.ts";
import { decodeJson, readCapped } from "./backend.ts";
import { ProseError } from "./errors.ts";
import {
  type FlagRead,
  makeStateDirs,
  type ProseOptions,
  type ProsePaths,
  readProseFlag,
} from "./flag.ts";
import { loadMirrorOpener, MirrorError } from "./mirror.ts";
import { applyToggle, type OpResult } from "./ops.ts";
import { sanitize } from "./sanitize.ts";
import {
  issueField,
  type MirrorRows,
  type MirrorValues,
  type StatusDocument,
  type ToggleRequest,
  ToggleRequestSchema,
  WorkerJsonSchema,
} from "./schema.ts";
import { expectedMirror, statusDocument } from "./status.ts";

/** The bind address: loopback only, never configurable. */
const BIND_HOST = "127.0.0.1";
/** The port used when nothing else names one. */
export const DEFAULT_PORT = 31415;
/** Largest accepted request body in bytes (declared or streamed); larger is 413. */
export const MAX_BODY_BYTES = 4096;
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

/** True when a declared `Content-Length` already exceeds the cap. */
export function declaredTooLarge(contentLength: string | null): boolean {
  if (contentLength === null) return false;
  const n = Number(contentLength.trim());
  return Number.isFinite(n) && n > MAX_BODY_BYTES;
}

/** A `Response` for `reply`: JSON, `no-store`, `nosniff`, and never any CORS header. */
export function toResponse(reply: Reply): Response {
  const headers = new Headers({
    "Content-Type": "application/json; charset=utf-8",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
  });
  for (const [k, v] of Object.entries(reply.headers ?? {})) headers.set(k, v);
  return new Response(JSON.stringify(reply.body) + "\n", { status: reply.status, headers });
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
  const message = sanitize(outcome.message ?? outcome.reason ?? outcome.result);
  const field = outcome.field === undefined ? {} : { field: sanitize(outcome.field) };
  if (outcome.result === "usage") return errorReply(400, "invalid_request", message, field);
  if (outcome.result === "refused" && outcome.reason === "config") {
    return errorReply(500, "config_invalid", message, field);
  }
  return errorReply(409, outcome.result, message, { reason: outcome.reason ?? outcome.result });
}

function toggle(ctx: ServerContext, request: ToggleRequest, now: number): Reply {
  const outcome = applyToggle(request, { ...ctx.opts, now });
  if (!outcome.ok) return failureReply(outcome);
  // Mirror what the flag file now says, not what was asked: the file is the source of truth.
  const read = readProseFlag({ ...ctx.opts, now });
  let mirrored = true;
  try {
    ctx.mirror.write(expectedMirror(read), now);
  } catch {
    mirrored = false;
  }
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

async function handle(ctx: ServerContext, req: Request): Promise<Reply> {
  const routed = route(req.method, new URL(req.url).pathname);
  if (!routed.ok) return routed.reply;
  if (!hostAllowed(req.headers.get("host"), ctx.port)) {
    return errorReply(403, "forbidden_host", "Host must be a loopback name with this port");
  }
  if (!originAllowed(req.headers.get("origin"))) {
    return errorReply(403, "forbidden_origin", "Origin must be a loopback origin");
  }
  const clock = ctx.clock ?? Date.now;
  if (routed.path === "/health") return { status: 200, body: { ok: true } };
  if (routed.path === "/api/prose/status") {
    return { status: 200, body: backendStatus(ctx, clock()) };
  }
  if (!isJsonContentType(req.headers.get("content-type"))) {
    return errorReply(415, "unsupported_media_type", "Content-Type must be application/json");
  }
  if (declaredTooLarge(req.headers.get("content-length"))) {
    return errorReply(413, "payload_too_large", "body larger than 4096 bytes");
  }
  const body = await readCapped(req.body, MAX_BODY_BYTES);
  if (body.truncated) return errorReply(413, "payload_too_large", "body larger than 4096 bytes");
  const decoded = decodeJson(body.bytes);
  if (decoded === undefined) {
    return errorReply(400, "invalid_json", "body must be UTF-8 JSON");
  }
  const parsed = ToggleRequestSchema.safeParse(decoded.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return errorReply(400, "invalid_request", sanitize(issue.message), {
      field: issueField(issue),
    });
  }
  // The clock is read again: the body may have taken a while to arrive.
  return toggle(ctx, parsed.data, clock());
}

/**
 * Create the request handler. It never throws: an unexpected failure is a 500 `internal` body
 * without a stack trace.
 */
export function createProseHandler(ctx: ServerContext): (req: Request) => Promise<Response> {
  return async (req) => {
    let reply: Reply;
    try {
      reply = await handle(ctx, req);
    } catch (e) {
      reply = errorReply(500, "internal", sanitize(firstLine(e)));
    }
    return toResponse(reply);
  };
}

// --- lifetime ---------------------------------------------------------------------------------

/** Options of {@linkcode startProseServer}. */
export interface StartOptions {
  /** Port to bind on 127.0.0.1 (`0` = any free port). */
  port: number;
  /** Absolute path of the mirror database. */
  dbPath: string;
  /** Library options (the root `R`). */
  opts?: ProseOptions;
}

/** A running backend. */
export interface RunningServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** The bound port. */
  port: number;
  /** The mirror database path. */
  dbPath: string;
  /** Stop accepting, finish in-flight requests, close the database. Safe to call twice. */
  shutdown(): Promise<void>;
}

/** Placeholder mirror for the instant between bind and open (never reached by a request). */
const UNOPENED: MirrorStore = {
  read: () => {
    throw new Error("mirror not open");
  },
  write: () => {
    throw new Error("mirror not open");
  },
};

/**
 * Bind 127.0.0.1 and open the mirror. Throws {@linkcode ProseError} `port-in-use` for a busy port
 * and `db` for a database that cannot be opened (the server is stopped again then).
 */
export async function startProseServer(options: StartOptions): Promise<RunningServer> {
  const open = await loadMirrorOpener();
  // Bind first: a busy port then leaves no database file behind. No request can run before the
  // mirror is set below, because nothing awaits in between.
  const ctx: ServerContext = { port: options.port, opts: options.opts ?? {}, mirror: UNOPENED };
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: BIND_HOST,
      port: options.port,
      onListen: () => {},
      onError: () =>
        new Response('{"ok":false,"error":"internal","message":"internal error"}\n', {
          status: 500,
          headers: { "content-type": "application/json", "cache-control": "no-store" },
        }),
    }, createProseHandler(ctx));
  } catch (e) {
    if (e instanceof Deno.errors.AddrInUse) {
      const address = `${BIND_HOST}:${options.port}`;
      throw new ProseError(
        "port-in-use",
        text`${verbatim(address)} is already in use; pick another with --port`,
      );
    }
    throw e;
  }
  let mirror: ReturnType<typeof open>;
  try {
    mirror = open(options.dbPath);
  } catch (e) {
    await server.shutdown();
    if (e instanceof MirrorError) throw new ProseError("db", text`${e.message}`);
    throw e;
  }
  ctx.mirror = mirror;
  // With --port 0 the Host check must use the port the OS picked.
  ctx.port = server.addr.port;
  let stopped: Promise<void> | undefined;
  return {
    url: `http://${BIND_HOST}:${server.addr.port}`,
    port: server.addr.port,
    dbPath: options.dbPath,
    shutdown: () => {
      stopped ??= server.shutdown().finally(() => mirror.close());
      return stopped;
    },
  };
}

/** SIGINT/SIGTERM listeners: `signal` resolves with the first one's name; `cancel` removes them. */
export function watchSignals(): { signal: Promise<Deno.Signal>; cancel: () => void } {
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
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
