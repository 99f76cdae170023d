/**
 * The HTTP/1.1 wire format of `prose serve`'s server (`lib/prose/http.ts`,
 * `references/prose.md#http-checks`): parsing a request head strictly (origin-form targets,
 * `HTTP/1.0` and `HTTP/1.1`, CRLF line ends only, no obs-fold, no control characters in field
 * values, no repeated framing or credential field), finding line and head ends, what a head
 * announces (a body, keep-alive), and serializing an answer. Pure functions over bytes: the
 * connections, pools and deadlines are `http.ts`'s.
 *
 * @module
 */

import type { HttpResponse } from "./http.ts";

const REASONS: Readonly<Record<number, string>> = {
  100: "Continue",
  200: "OK",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
};

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (\/[^ ]*) HTTP\/1\.([01])$/;
// deno-lint-ignore no-control-regex
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
/** Fields that must not be repeated (a repeat could be read two ways). */
const SINGLE = new Set(["host", "content-length", "transfer-encoding", "authorization"]);

/** A request the server refuses before the handler sees it. */
export class Refusal extends Error {
  constructor(readonly status: number, readonly error: string, message: string) {
    super(message);
  }
}

/** The parsed head of a request. */
export interface RequestHead {
  /** The method. */
  method: string;
  /** The target's path (no query). */
  path: string;
  /** `0` for HTTP/1.0, `1` for HTTP/1.1. */
  minor: 0 | 1;
  /** Fields by lowercase name. */
  headers: Map<string, string>;
}

/**
 * Parse a request head (the bytes before the empty line, without it). Throws a refusal (400) for
 * anything but a well-formed origin-form HTTP/1.x request.
 */
export function parseHead(bytes: Uint8Array): RequestHead {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b); // bytes as Latin-1: never lossy
  const lines = text.split("\r\n");
  if (lines.some((l) => l.includes("\r") || l.includes("\n"))) {
    throw new Refusal(400, "bad_request", "lines must end with CRLF");
  }
  const m = REQUEST_LINE.exec(lines[0]);
  if (m === null) throw new Refusal(400, "bad_request", "malformed request line");
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon) : "";
    if (!TOKEN.test(name)) throw new Refusal(400, "bad_request", "malformed header field");
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
    if (BAD_VALUE.test(value)) {
      throw new Refusal(400, "bad_request", "control character in a field");
    }
    const key = name.toLowerCase();
    const before = headers.get(key);
    if (before !== undefined && SINGLE.has(key)) {
      throw new Refusal(400, "bad_request", "repeated header field");
    }
    headers.set(key, before === undefined ? value : `${before}, ${value}`);
  }
  const target = m[2];
  const q = target.search(/[?#]/);
  return {
    method: m[1],
    path: q < 0 ? target : target.slice(0, q),
    minor: m[3] === "0" ? 0 : 1,
    headers,
  };
}

/** `a` then `b`, in a new array. */
export function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b.slice();
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Index of `\r\n\r\n` in `bytes` from `from`, or -1. */
export function headEnd(bytes: Uint8Array, from: number): number {
  for (let i = Math.max(from, 0); i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      return i;
    }
  }
  return -1;
}

/** Index of `\r\n` in `bytes`, or -1. */
export function lineEnd(bytes: Uint8Array): number {
  for (let i = 0; i + 1 < bytes.length; i++) if (bytes[i] === 13 && bytes[i + 1] === 10) return i;
  return -1;
}

/** The one encoder of the wire. */
export const encoder = new TextEncoder();

/** Serialize an answer (no body for `HEAD`). */
export function serializeResponse(res: HttpResponse, keepAlive: boolean, head = false): Uint8Array {
  let out = `HTTP/1.1 ${res.status} ${REASONS[res.status] ?? "Unknown"}\r\n`;
  for (const [k, v] of Object.entries(res.headers)) out += `${k}: ${v}\r\n`;
  out += `Content-Length: ${res.body.length}\r\nConnection: ${keepAlive ? "keep-alive" : "close"}`;
  const bytes = encoder.encode(out + "\r\n\r\n");
  return head ? bytes : concat(bytes, res.body);
}

/** True when the head announces a body (chunked, or a non-zero `Content-Length`). */
export function hasBody(head: RequestHead): boolean {
  const cl = head.headers.get("content-length");
  return head.headers.has("transfer-encoding") || (cl !== undefined && !/^0+$/.test(cl));
}

/** True when the client wants the connection kept open after the answer (HTTP/1.1 default). */
export function wantsKeepAlive(head: RequestHead): boolean {
  const tokens = (head.headers.get("connection") ?? "").toLowerCase().split(",").map((t) =>
    t.trim()
  );
  return head.minor === 1 ? !tokens.includes("close") : tokens.includes("keep-alive");
}
