/**
 * The CLI side of the prose backend (spec §9 "CLI delegation"): one HTTP call with a timeout,
 * classified into success, a rejection the CLI must report, or a failure that makes the CLI fall
 * back to the flag file. (The loopback-only URL rule is `loopbackOrigin` in `config.ts`.)
 *
 * @module
 */

import type { ParseSchema } from "./schema.ts";
import { ErrorBodySchema } from "./server_protocol.ts";

/** Per-request timeout of a delegated command, in milliseconds. */
export const BACKEND_TIMEOUT_MS = 1000;

/** Largest response body the client reads, in bytes; more is a `bad-response`. */
export const MAX_RESPONSE_BYTES = 65536;

/** Why a delegated command fell back to the flag file. */
export type FallbackReason =
  | "connection"
  | "timeout"
  | "not-found"
  | "server-error"
  | "bad-response";

/** The outcome of one backend call. */
export type BackendOutcome<T> =
  | { kind: "ok"; status: number; body: T }
  | { kind: "fallback"; reason: FallbackReason }
  | {
    kind: "rejected";
    status: number;
    error: string;
    reason?: string;
    field?: string;
    message: string;
  };

/** The statuses that are final answers: reported, never retried locally. */
export const REJECTION_STATUSES: ReadonlySet<number> = new Set([400, 403, 409, 413, 415]);

/** The CLI exit code for a rejection: 1 for 403 and 409, 2 otherwise. */
export function rejectionExitCode(status: number): 1 | 2 {
  return status === 403 || status === 409 ? 1 : 2;
}

/** Classify an HTTP status that is not a success or a rejection. */
export function fallbackForStatus(status: number): FallbackReason {
  if (status === 404) return "not-found";
  if (status >= 500) return "server-error";
  return "bad-response";
}

async function readCapped(response: Response): Promise<Uint8Array | undefined> {
  if (response.body === null) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
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
}

/**
 * Call the backend at the origin `url` and classify the answer. 200 with a body that passes
 * `schema` is `ok`; 400/403/409/413/415 are `rejected`; a connection error, timeout, 404, 5xx, a
 * redirect or any body that fails its schema is a `fallback`. Never throws.
 */
export async function backendCall<T>(
  url: string,
  request: BackendRequest,
  schema: ParseSchema<T>,
): Promise<BackendOutcome<T>> {
  const signal = AbortSignal.timeout(request.timeoutMs ?? BACKEND_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch(`${url}${request.path}`, {
      method: request.method,
      redirect: "manual",
      signal,
      headers: request.body === undefined
        ? { Accept: "application/json" }
        : { Accept: "application/json", "Content-Type": "application/json" },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
    });
  } catch (e) {
    return { kind: "fallback", reason: isTimeout(e) || signal.aborted ? "timeout" : "connection" };
  }
  let bytes: Uint8Array | undefined;
  try {
    bytes = await readCapped(response);
  } catch (e) {
    return {
      kind: "fallback",
      reason: isTimeout(e) || signal.aborted ? "timeout" : "bad-response",
    };
  }
  const status = response.status;
  if (REJECTION_STATUSES.has(status)) {
    const parsed = bytes === undefined ? undefined : ErrorBodySchema.safeParse(parseJson(bytes));
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
  const parsed = schema.safeParse(parseJson(bytes));
  if (!parsed.success) return { kind: "fallback", reason: "bad-response" };
  return { kind: "ok", status, body: parsed.data };
}
