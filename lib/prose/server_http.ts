/**
 * The HTTP gate of `prose serve` (spec §9): routing, `Host`/`Origin` checks, media type, body cap,
 * JSON decoding and the reply shape. Pure decisions plus one capped body reader, so every rejection
 * is testable without a socket.
 *
 * @module
 */

import { MAX_BODY_BYTES } from "./server_protocol.ts";

/** The endpoints and the one method each accepts. */
export const ROUTES: Readonly<Record<string, "GET" | "POST">> = Object.freeze({
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

/** The outcome of routing a request. */
export type RouteMatch =
  | { ok: true; path: string }
  | { ok: false; reply: Reply };

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

/** Route by exact path: unknown path → 404, wrong method → 405 with `Allow`. */
export function route(method: string, pathname: string): RouteMatch {
  const allowed = Object.hasOwn(ROUTES, pathname) ? ROUTES[pathname] : undefined;
  if (allowed === undefined) {
    return { ok: false, reply: errorReply(404, "not_found", "no such endpoint") };
  }
  if (method !== allowed) {
    return {
      ok: false,
      reply: errorReply(405, "method_not_allowed", `use ${allowed}`, {
        headers: { Allow: allowed },
      }),
    };
  }
  return { ok: true, path: pathname };
}

/**
 * True when `host` is exactly `127.0.0.1:<port>`, `localhost:<port>` or `[::1]:<port>` (case
 * insensitive). A missing `Host` is refused: a browser always sends one, so only a DNS-rebinding
 * page or a hand-made request could lack it.
 *
 * @example
 * ```ts
 * import { hostAllowed } from "./server_http.ts";
 * hostAllowed("localhost:31415", 31415); // true
 * hostAllowed("evil.example:31415", 31415); // false
 * ```
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

/** The headers every reply carries: JSON, `no-store`, `nosniff`, and never any CORS header. */
export function replyHeaders(extra: Record<string, string> = {}): Headers {
  const headers = new Headers({
    "Content-Type": "application/json; charset=utf-8",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
  });
  for (const [k, v] of Object.entries(extra)) headers.set(k, v);
  return headers;
}

/** Turn a {@linkcode Reply} into a `Response`. */
export function toResponse(reply: Reply): Response {
  return new Response(JSON.stringify(reply.body) + "\n", {
    status: reply.status,
    headers: replyHeaders(reply.headers),
  });
}
