/**
 * The HTTP side shared by the prose backend and its client (`references/prose.md#cli-delegation`):
 * bounded, strict reading of bodies (neither side buffers more than its cap or accepts anything
 * but UTF-8 JSON), and the one delegation client: a call with a timeout, classified into success,
 * a rejection the CLI must report, or a failure that makes the CLI fall back to the flag file.
 * Documents received are parsed through their schema; the CLI escapes their strings where it
 * prints them. When the CLI has the server's token, a request proves it without sending it and
 * only an answer proved by the server is believed (`token.ts`).
 *
 * @module
 */

import type * as z from "../_zod.ts";
import { isPermissionError } from "../_fs/errors.ts";
import { randomHex } from "../random.ts";
import { readCapped } from "../streams.ts";
import { requestMac, responseProof } from "./token.ts";
import {
  ErrorBodySchema,
  type StatusDocument,
  StatusDocumentSchema,
  type ToggleRequest,
  type ToggleResponse,
  ToggleResponseSchema,
} from "./schema.ts";

/** Per-request timeout of a delegated command, in milliseconds. */
const BACKEND_TIMEOUT_MS = 1000;

/**
 * Timeout of a toggle sent to the server that wrote `serve.json`, in milliseconds. It must exceed
 * the server's own longest answer — the lock wait (5 s, `LOCK_WAIT_MS`) plus the mirror write's
 * retries (1 s, `MIRROR_BUSY_MS`) — so the CLI never gives up on a toggle the server is still
 * carrying out (`references/prose.md#cli-delegation`; `server_test.ts` holds the relation).
 */
export const TOGGLE_TIMEOUT_MS = 8000;

/** Largest response body the client reads, in bytes; more is a `bad-response`. */
const MAX_RESPONSE_BYTES = 65536;

/** Decode strict UTF-8 JSON; `undefined` when the bytes are not UTF-8 or not JSON. */
export function decodeJson(bytes: Uint8Array): { value: unknown } | undefined {
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** Why a delegated command fell back to the flag file. */
export type FallbackReason =
  | "connection"
  | "timeout"
  | "not-found"
  | "server-error"
  | "bad-response"
  | "unverified";

/** A final answer of the backend that is not a success: reported, never retried locally. */
export interface Rejection {
  /** Always `rejected`. */
  kind: "rejected";
  /** 400, 401, 403, 409, 413 or 415. */
  status: number;
  /** The error body's `error` (`unknown` when the body did not parse), unsanitized. */
  error: string;
  /** The body's `reason`, unsanitized. */
  reason?: string;
  /** The body's `field`, unsanitized. */
  field?: string;
  /** The body's `message` (or `HTTP <status>`), unsanitized. */
  message: string;
}

/** The outcome of one backend call. */
export type BackendOutcome<T> =
  | { kind: "ok"; status: number; body: T }
  | { kind: "fallback"; reason: FallbackReason }
  | Rejection;

/** The statuses that are final answers: reported, never retried locally. */
const REJECTION_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 409, 413, 415]);

/** The CLI exit code for a rejection: 1 for 401, 403 and 409, 2 otherwise. */
export function rejectionExitCode(status: number): 1 | 2 {
  return status === 401 || status === 403 || status === 409 ? 1 : 2;
}

/** Classify an HTTP status that is not a success or a rejection. */
export function fallbackForStatus(status: number): FallbackReason {
  if (status === 404) return "not-found";
  if (status >= 500) return "server-error";
  return "bad-response";
}

function isTimeout(e: unknown): boolean {
  const name = (e as { name?: string } | null)?.name;
  return name === "TimeoutError" || name === "AbortError";
}

/** What {@linkcode backendCall} sends. */
export interface BackendRequest {
  /** `GET` or `POST`. */
  method: "GET" | "POST";
  /** The endpoint path, e.g. `/api/prose/status`. */
  path: string;
  /** A JSON body (POST only). */
  body?: unknown;
  /** Timeout in milliseconds (default {@linkcode BACKEND_TIMEOUT_MS}). */
  timeoutMs?: number;
  /**
   * The server's token: the request proves it (`Authorization: Prose <nonce> <mac>`; the token is
   * never sent) and any answer without the matching `Prose-Proof` is `unverified`.
   */
  token?: string;
}

/**
 * Call the backend at the origin `url` and classify the answer. 200 with a body that passes
 * `schema` is `ok`; 400/401/403/409/413/415 are `rejected`; a connection error, timeout, 404, 5xx, a
 * redirect or any body that fails its schema is a `fallback`. Never throws, except for a missing
 * `--allow-net` grant (the caller's environment, not an unreachable backend).
 */
export async function backendCall<T>(
  url: string,
  request: BackendRequest,
  schema: z.ZodMiniType<T>,
): Promise<BackendOutcome<T>> {
  const signal = AbortSignal.timeout(request.timeoutMs ?? BACKEND_TIMEOUT_MS);
  const headers: Record<string, string> = { Accept: "application/json" };
  if (request.body !== undefined) headers["Content-Type"] = "application/json";
  const token = request.token;
  const nonce = randomHex(16);
  if (token !== undefined) {
    headers.Authorization = `Prose ${nonce} ${
      requestMac(token, nonce, request.method, request.path)
    }`;
  }
  let response: Response;
  try {
    response = await fetch(`${url}${request.path}`, {
      method: request.method,
      redirect: "manual",
      signal,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
    });
  } catch (e) {
    if (isPermissionError(e)) throw e;
    return { kind: "fallback", reason: isTimeout(e) || signal.aborted ? "timeout" : "connection" };
  }
  let bytes: Uint8Array | undefined;
  try {
    const read = await readCapped(response.body, MAX_RESPONSE_BYTES);
    bytes = read.truncated ? undefined : read.bytes;
  } catch (e) {
    return {
      kind: "fallback",
      reason: isTimeout(e) || signal.aborted ? "timeout" : "bad-response",
    };
  }
  const status = response.status;
  if (token !== undefined) {
    // Only the server that wrote serve.json knows the token: no other answer is believed.
    const proof = response.headers.get("prose-proof");
    if (bytes === undefined || proof !== responseProof(token, nonce, status, bytes)) {
      return { kind: "fallback", reason: "unverified" };
    }
  }
  if (REJECTION_STATUSES.has(status)) {
    const parsed = bytes === undefined
      ? undefined
      : ErrorBodySchema.safeParse(decodeJson(bytes)?.value);
    if (parsed?.success) {
      const { error, reason, field, message } = parsed.data;
      return {
        kind: "rejected",
        status,
        error,
        ...(reason === undefined ? {} : { reason }),
        ...(field === undefined ? {} : { field }),
        message,
      };
    }
    return { kind: "rejected", status, error: "unknown", message: `HTTP ${status}` };
  }
  if (status !== 200) return { kind: "fallback", reason: fallbackForStatus(status) };
  if (bytes === undefined) return { kind: "fallback", reason: "bad-response" };
  const parsed = schema.safeParse(decodeJson(bytes)?.value);
  if (!parsed.success) return { kind: "fallback", reason: "bad-response" };
  return { kind: "ok", status, body: parsed.data };
}

/**
 * `POST /api/prose/toggle`, proving the server's `token` when the CLI has it (then with the long
 * {@linkcode TOGGLE_TIMEOUT_MS}: the server may wait for the flag's lock).
 */
export function callToggle(
  url: string,
  request: ToggleRequest,
  token?: string,
  timeoutMs: number = token === undefined ? BACKEND_TIMEOUT_MS : TOGGLE_TIMEOUT_MS,
): Promise<BackendOutcome<ToggleResponse>> {
  return backendCall(
    url,
    { method: "POST", path: "/api/prose/toggle", body: request, timeoutMs, token },
    ToggleResponseSchema,
  );
}

/** `GET /api/prose/status`, proving the server's `token` when the CLI has it. */
export function callStatus(
  url: string,
  token?: string,
  timeoutMs: number = BACKEND_TIMEOUT_MS,
): Promise<BackendOutcome<StatusDocument>> {
  return backendCall(
    url,
    { method: "GET", path: "/api/prose/status", timeoutMs, token },
    StatusDocumentSchema,
  );
}
