/**
 * A small, strict HTTP/1.1 server for `prose serve` (`references/prose.md#limits`), written over
 * `Deno.listen` because `Deno.serve` has no connection cap and no header deadline: one local
 * process holding connections open must never take the backend down.
 *
 * - **Connections**: two bounded pools, far below any fd limit. A connection that has sent no byte
 *   yet is *silent*: at most `maxSilent` of them, and a newcomer past that takes the place of the
 *   oldest one — but only once it has been open `silentGraceMs` (the accept loop waits until then:
 *   the kernel's queue holds the newcomers). So a request already in its socket is always read
 *   before its connection can lose its place, however fast another user opens silent connections
 *   and however slowly a busy machine delivers the read (an accept of a queued connection
 *   completes without a turn of the event loop, so without the grace a flood of accepts runs
 *   ahead of every read). A connection that sent bytes is *speaking*: at most `maxConnections` of
 *   them; one past the cap takes the place of a connection that never carried a trusted
 *   (authenticated) request, the one active the longest ago first, busy or not; else of the trusted
 *   one idle the longest; when every speaking connection is a trusted one busy with a request, it
 *   is closed itself. A request that arrives whole is judged the moment its bytes are read, so an
 *   authenticated one is trusted before anything can evict it. An accept error (`EMFILE`
 *   included) frees a place (the oldest silent connection, else as above), waits a moment and
 *   goes on: it never ends the server.
 * - **Admission**: the `admit` hook judges each request from its head, before any body byte is
 *   read; a request it does not trust is never given its body, so an unauthenticated client cannot
 *   hold a connection open by never finishing one.
 * - **Deadlines**: a request (head and body) must be complete `headerTimeoutMs` after the
 *   connection was accepted, or after the first byte of a later request arrived; a kept-alive
 *   connection with no request in progress is closed after `idleTimeoutMs`; an answer must be
 *   written within `headerTimeoutMs`. An expired connection is closed without an answer.
 * - **Requests**: origin-form targets, `HTTP/1.0` and `HTTP/1.1`, CRLF line ends only, no
 *   obs-fold, no control characters in field values, at most `maxHeadBytes` of head; a body framed
 *   by `Content-Length` or `chunked` (both at once, or any other transfer coding, is refused), of
 *   at most `maxBodyBytes`: a larger one is not read (declared) or read no further (chunked), the
 *   request is passed on with `bodyTooLarge`, and the connection closes after the answer.
 *
 * @module
 */

import {
  concat,
  encoder,
  hasBody,
  headEnd,
  lineEnd,
  parseHead,
  Refusal,
  type RequestHead,
  serializeResponse,
  wantsKeepAlive,
} from "./http_wire.ts";

/** One parsed request. */
export interface HttpRequest {
  /** The method, as sent (case-sensitive). */
  method: string;
  /** The path of the request target, without its query. */
  path: string;
  /** Header fields by lowercase name; a repeated field is joined with `, `. */
  headers: ReadonlyMap<string, string>;
  /** The body (empty when there is none, or when it was too large). */
  body: Uint8Array;
  /** True when the body exceeded `maxBodyBytes` (declared or streamed). */
  bodyTooLarge: boolean;
  /** True when the `admit` hook let the request through (its head-only checks are done). */
  admitted?: boolean;
}

/**
 * What the `admit` hook decides from a request's head alone, before any of its body is read: an
 * answer that ends the request there (the body is never read, the connection closes after it), and
 * whether the request proved it comes from a real client (`trusted`; a connection that carried one
 * such request is never evicted while it is busy).
 */
export interface Admission {
  /** The request authenticated (or needs no body and no trust to be answered). */
  trusted: boolean;
  /** Answer this now, from the head alone. */
  response?: HttpResponse;
}

/** An answer: the server adds `Content-Length` and `Connection`. */
export interface HttpResponse {
  /** Status code. */
  status: number;
  /** Header fields (names as they should be sent). */
  headers: Record<string, string>;
  /** The body. */
  body: Uint8Array;
}

/** The bounds of {@linkcode serveHttp} (`references/prose.md#limits`). */
export interface HttpLimits {
  /** A request must be complete this many ms after it started (the header deadline). */
  headerTimeoutMs: number;
  /** A kept-alive connection without a request is closed after this many ms (the idle deadline). */
  idleTimeoutMs: number;
  /** Most connections that sent bytes (a request in progress, or a trusted keep-alive) at once. */
  maxConnections: number;
  /** Most connections that have sent nothing yet, at once. */
  maxSilent: number;
  /** A silent connection keeps its place at least this many ms (its chance to be read). */
  silentGraceMs: number;
  /** Largest request head (request line and fields) in bytes. */
  maxHeadBytes: number;
  /** Largest request body in bytes. */
  maxBodyBytes: number;
}

/** The documented bounds. */
export const DEFAULT_LIMITS: Readonly<HttpLimits> = Object.freeze({
  headerTimeoutMs: 5_000,
  idleTimeoutMs: 10_000,
  maxConnections: 64,
  maxSilent: 256,
  silentGraceMs: 1000,
  maxHeadBytes: 8192,
  maxBodyBytes: 4096,
});

/** Pause after a failed accept (ms). */
const ACCEPT_RETRY_MS = 50;

/** What {@linkcode serveHttp} needs. */
export interface HttpServerOptions {
  /** A bound listener; the server owns it from now on. */
  listener: Deno.Listener;
  /** Answers a request; a throw closes the connection without an answer. */
  handler: (req: HttpRequest) => HttpResponse | Promise<HttpResponse>;
  /**
   * Judge a request from its head, before its body is read (default: every request is trusted).
   * An untrusted request is never given its body: the handler sees it empty and the connection
   * closes after the answer, so a client that has not authenticated never holds a slot.
   */
  admit?: (head: RequestHead) => Admission;
  /** The answer to a request the server cannot parse (400, 431, 501). */
  protocolError: (status: number, error: string, message: string) => HttpResponse;
  /** Bounds (default {@linkcode DEFAULT_LIMITS}). */
  limits?: Partial<HttpLimits>;
}

/** A running server. */
export interface HttpServer {
  /** Connections open now. */
  readonly connections: number;
  /**
   * Stop accepting, close every connection that is not answering a request, let the requests in
   * progress finish (each within its deadlines), then resolve. Safe to call twice.
   */
  shutdown(): Promise<void>;
}

/** One accepted connection and its state. */
class Connection {
  /** Bytes received and not consumed yet. */
  pending: Uint8Array = new Uint8Array(0);
  /** True from a complete request head until its answer is written. */
  busy = false;
  /** True once a request on this connection was trusted (authenticated): a real client's. */
  trusted = false;
  /** When the connection was accepted (epoch-ms). */
  readonly accepted = Date.now();
  /** When a byte last arrived or an answer was last written (epoch-ms). */
  lastActivity = this.accepted;
  /** True once a byte arrived: it left the silent pool for the speaking one. */
  spoke = false;
  closed = false;
  readonly #conn: Deno.Conn;
  readonly #onClose: (c: Connection) => void;
  readonly #onSpeak: (c: Connection) => void;
  readonly #scratch = new Uint8Array(8192);
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    conn: Deno.Conn,
    onClose: (c: Connection) => void,
    onSpeak: (c: Connection) => void,
  ) {
    this.#conn = conn;
    this.#onClose = onClose;
    this.#onSpeak = onSpeak;
  }

  /** Close now (idempotent): the descriptor is released at once and a pending read ends. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.#timer);
    try {
      this.#conn.close();
    } catch { /* already closed */ }
    this.#onClose(this);
  }

  /** Close the connection `ms` from now unless re-armed or disarmed. */
  arm(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.close(), ms);
  }

  /** Stop the deadline (while the handler answers: it is bounded on its own). */
  disarm(): void {
    clearTimeout(this.#timer);
  }

  /** Read more bytes into {@linkcode pending}; false at the end of the stream or when closed. */
  async fill(): Promise<boolean> {
    if (this.closed) return false;
    const n = await this.#conn.read(this.#scratch).catch(() => null);
    if (n === null || n === 0) return false;
    this.pending = concat(this.pending, this.#scratch.subarray(0, n));
    this.lastActivity = Date.now();
    if (!this.spoke) {
      this.spoke = true;
      this.#onSpeak(this);
    }
    return !this.closed;
  }

  /** Take `n` bytes from {@linkcode pending}. */
  take(n: number): Uint8Array {
    const out = this.pending.slice(0, n);
    this.pending = this.pending.slice(n);
    return out;
  }

  /** Write all of `bytes`; false when the connection failed. */
  async write(bytes: Uint8Array): Promise<boolean> {
    try {
      let at = 0;
      while (at < bytes.length) at += await this.#conn.write(bytes.subarray(at));
      this.lastActivity = Date.now();
      return true;
    } catch {
      return false;
    }
  }
}

/** Read a CRLF-terminated line of at most `max` bytes (without the CRLF); null at the end. */
async function readLine(c: Connection, max: number): Promise<string | null> {
  for (;;) {
    const end = lineEnd(c.pending);
    if (end >= 0) {
      const line = c.take(end + 2).subarray(0, end);
      return String.fromCharCode(...line);
    }
    if (c.pending.length > max) throw new Refusal(400, "bad_request", "chunk line too long");
    if (!await c.fill()) return null;
  }
}

/** Read exactly `n` bytes; null at the end. */
async function readBytes(c: Connection, n: number): Promise<Uint8Array | null> {
  while (c.pending.length < n) if (!await c.fill()) return null;
  return c.take(n);
}

/** A body read (or left unread: the connection then closes after the answer); null at the end. */
type Body = { bytes: Uint8Array; tooLarge: boolean; unread?: boolean } | null;

/** Read a chunked body up to `max` bytes; stop reading as soon as it is larger. */
async function readChunked(c: Connection, max: number): Promise<Body> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const line = await readLine(c, 256);
    if (line === null) return null;
    const m = /^([0-9A-Fa-f]{1,8})(?:[ \t]*;.*)?$/.exec(line);
    if (m === null) throw new Refusal(400, "bad_request", "malformed chunk size");
    const size = parseInt(m[1], 16);
    if (size === 0) break;
    if (total + size > max) return { bytes: new Uint8Array(0), tooLarge: true };
    const data = await readBytes(c, size + 2);
    if (data === null) return null;
    if (data[size] !== 13 || data[size + 1] !== 10) {
      throw new Refusal(400, "bad_request", "malformed chunk");
    }
    parts.push(data.subarray(0, size));
    total += size;
  }
  // Trailer fields, then the empty line.
  for (let used = 0;;) {
    const line = await readLine(c, 1024);
    if (line === null) return null;
    if (line === "") break;
    used += line.length;
    if (used > 1024) throw new Refusal(400, "bad_request", "trailer too large");
  }
  return { bytes: parts.reduce(concat, new Uint8Array(0)), tooLarge: false };
}

/** Read the body a head announces. */
async function readBody(c: Connection, head: RequestHead, max: number): Promise<Body> {
  const te = head.headers.get("transfer-encoding");
  const cl = head.headers.get("content-length");
  if (te !== undefined) {
    if (cl !== undefined) {
      throw new Refusal(400, "bad_request", "Content-Length and Transfer-Encoding together");
    }
    if (te.toLowerCase() !== "chunked") {
      throw new Refusal(501, "not_implemented", "only the chunked transfer coding is supported");
    }
    await continueIfAsked(c, head);
    return await readChunked(c, max);
  }
  if (cl === undefined) return { bytes: new Uint8Array(0), tooLarge: false };
  if (!/^[0-9]{1,15}$/.test(cl)) throw new Refusal(400, "bad_request", "malformed Content-Length");
  const n = Number(cl);
  if (n > max) return { bytes: new Uint8Array(0), tooLarge: true };
  if (n > 0) await continueIfAsked(c, head);
  const bytes = await readBytes(c, n);
  return bytes === null ? null : { bytes, tooLarge: false };
}

async function continueIfAsked(c: Connection, head: RequestHead): Promise<void> {
  if (head.minor === 1 && head.headers.get("expect")?.toLowerCase() === "100-continue") {
    await c.write(encoder.encode("HTTP/1.1 100 Continue\r\n\r\n"));
  }
}

/**
 * Serve HTTP/1.1 on `listener` within `limits` until {@linkcode HttpServer.shutdown}. Nothing a
 * client does, and no accept error, ends the server.
 */
export function serveHttp(options: HttpServerOptions): HttpServer {
  const limits: HttpLimits = { ...DEFAULT_LIMITS, ...options.limits };
  /** Connections that have sent nothing yet, oldest first (a `Set` keeps insertion order). */
  const silent = new Set<Connection>();
  /** Connections that sent bytes. */
  const speaking = new Set<Connection>();
  const tasks = new Set<Promise<void>>();
  let stopping = false;
  let stopped: Promise<void> | undefined;

  /**
   * The speaking connection to close for another one: one that never carried a trusted request,
   * the one active the longest ago first (busy or not), else the trusted one idle the longest;
   * `undefined` when every other one is a trusted one busy with a request.
   */
  const speakingVictim = (except?: Connection): Connection | undefined => {
    let victim: Connection | undefined;
    let victimRank = 2;
    for (const c of speaking) {
      const rank = !c.trusted ? 0 : c.busy ? 2 : 1;
      if (rank === 2 || c === except) continue;
      if (rank < victimRank || (rank === victimRank && c.lastActivity < victim!.lastActivity)) {
        victim = c;
        victimRank = rank;
      }
    }
    return victim;
  };

  /** A connection's first bytes: it joins the speaking pool, taking a place when it is full. */
  const onSpeak = (c: Connection) => {
    silent.delete(c);
    if (speaking.size >= limits.maxConnections) (speakingVictim(c) ?? c).close();
    if (!c.closed) speaking.add(c);
  };

  /**
   * Make room in the silent pool for a newcomer: close the oldest silent connection once it has
   * had its grace (waiting for that on a timer; the newcomer waits in the kernel's queue).
   */
  const makeSilentRoom = async () => {
    while (!stopping && silent.size >= limits.maxSilent) {
      const oldest: Connection = silent.values().next().value!;
      const left = oldest.accepted + limits.silentGraceMs - Date.now();
      if (left > 0) {
        await new Promise((resolve) => setTimeout(resolve, left));
        // One more turn of the event loop: bytes that arrived while this process was not
        // running are read (and the connection leaves the pool) before anything is judged.
        await new Promise((resolve) => setTimeout(resolve, 0));
      } else oldest.close();
    }
  };

  /** Free a descriptor after an accept error: the oldest silent connection, else a speaking one. */
  const evictAny = () => {
    const oldest = silent.values().next().value ?? speakingVictim();
    oldest?.close();
  };

  /** Write an answer within the deadline; true when the connection stays open for another. */
  const answer = async (c: Connection, res: HttpResponse, keepAlive: boolean, head: boolean) => {
    const keep = keepAlive && !stopping;
    c.arm(limits.headerTimeoutMs);
    const ok = await c.write(serializeResponse(res, keep, head));
    return ok && keep && !stopping;
  };

  const serveConnection = async (c: Connection): Promise<void> => {
    c.arm(limits.headerTimeoutMs);
    let started = true; // the first request's deadline runs from the accept
    while (!c.closed) {
      // Skip empty lines before a request line (RFC 9112 §2.2).
      while (c.pending.length >= 2 && c.pending[0] === 13 && c.pending[1] === 10) c.take(2);
      if (!started && c.pending.length > 0) {
        c.arm(limits.headerTimeoutMs);
        started = true;
      }
      const end = headEnd(c.pending, 0);
      // Too large: a complete head past the bound, or that many bytes with no end of head yet.
      if (end < 0 ? c.pending.length > limits.maxHeadBytes : end > limits.maxHeadBytes) {
        const res = options.protocolError(431, "headers_too_large", "request head too large");
        await answer(c, res, false, false);
        return;
      }
      if (end < 0) {
        if (!await c.fill()) return;
        continue;
      }
      c.busy = true;
      let head: RequestHead;
      let body: Body;
      let admission: Admission = { trusted: true };
      try {
        head = parseHead(c.take(end + 4).subarray(0, end));
        admission = options.admit?.(head) ?? admission;
        if (admission.trusted) c.trusted = true;
        if (admission.response !== undefined) {
          await answer(c, admission.response, false, head.method === "HEAD");
          return;
        }
        body = admission.trusted || !hasBody(head)
          ? await readBody(c, head, limits.maxBodyBytes)
          : { bytes: new Uint8Array(0), tooLarge: false, unread: true };
      } catch (e) {
        if (!(e instanceof Refusal)) throw e;
        await answer(c, options.protocolError(e.status, e.error, e.message), false, false);
        return;
      }
      if (body === null) return; // the client went away, or the deadline closed it
      c.disarm();
      const response = await options.handler({
        method: head.method,
        path: head.path,
        headers: head.headers,
        body: body.bytes,
        bodyTooLarge: body.tooLarge,
        admitted: options.admit !== undefined,
      });
      const keepAlive = !body.tooLarge && !body.unread && wantsKeepAlive(head);
      if (!await answer(c, response, keepAlive, head.method === "HEAD")) return;
      c.busy = false;
      c.arm(limits.idleTimeoutMs);
      started = false;
    }
  };

  const start = (conn: Deno.Conn) => {
    try {
      (conn as Deno.TcpConn).setNoDelay?.(true);
    } catch { /* not a TCP connection */ }
    const c = new Connection(conn, (closed) => {
      silent.delete(closed);
      speaking.delete(closed);
    }, onSpeak);
    silent.add(c);
    const task = serveConnection(c).catch(() => {}).finally(() => {
      c.close();
      tasks.delete(task);
    });
    tasks.add(task);
  };

  const accepting = (async () => {
    while (!stopping) {
      let conn: Deno.Conn;
      try {
        conn = await options.listener.accept();
      } catch {
        if (stopping) break;
        // Out of descriptors (EMFILE) or a passing failure: free a place, wait, go on.
        evictAny();
        await new Promise((resolve) => setTimeout(resolve, ACCEPT_RETRY_MS));
        continue;
      }
      await makeSilentRoom();
      if (stopping) {
        try {
          conn.close();
        } catch { /* already gone */ }
        continue;
      }
      start(conn);
    }
  })();

  return {
    get connections() {
      return silent.size + speaking.size;
    },
    shutdown: () => {
      stopped ??= (async () => {
        stopping = true;
        try {
          options.listener.close();
        } catch { /* already closed */ }
        await accepting;
        for (const c of [...silent, ...speaking]) if (!c.busy) c.close();
        while (tasks.size > 0) await Promise.all([...tasks]);
      })();
      return stopped;
    },
  };
}
