/**
 * The CLI side of the prose backend (spec §9 "CLI delegation"): one HTTP call with a timeout,
 * classified into success, a rejection the CLI must report, or a failure that makes the CLI fall
 * back to the flag file. (The loopback-only URL rule is `loopbackOrigin` in `config.ts`.)
 *
 * @module
 */

import { decodeJson, readBodyCapped } from "./http_body.ts";
import { isPermissionError } from "../exit.ts";
import { writeErr, writeOut } from "../io.ts";
import type { FlagRead } from "./flag_io.ts";
import { renderValue, sanitize } from "./sanitize.ts";
import type { ParseSchema, ReasonCode } from "./schema.ts";
import { ErrorBodySchema, type ToggleRequest, ToggleResponseSchema } from "./server_protocol.ts";
import { type StatusDocument, StatusDocumentSchema, statusLine, statusSentence } from "./status.ts";

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
    // A missing --allow-net grant is the caller's environment, not an unreachable backend.
    if (isPermissionError(e)) throw e;
    return { kind: "fallback", reason: isTimeout(e) || signal.aborted ? "timeout" : "connection" };
  }
  let bytes: Uint8Array | undefined;
  try {
    const read = await readBodyCapped(response.body, MAX_RESPONSE_BYTES);
    bytes = read === "too-large" ? undefined : read;
  } catch (e) {
    return {
      kind: "fallback",
      reason: isTimeout(e) || signal.aborted ? "timeout" : "bad-response",
    };
  }
  const status = response.status;
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

/** Lines a delegated command prints: stdout and stderr, in order. */
export interface DelegationLines {
  /** stdout lines. */
  out: string[];
  /** stderr lines. */
  err: string[];
}

/**
 * The outcome of a delegated command: `done` when the backend gave the final answer (success or
 * rejection, with the exit code), `fallback` when the CLI must print the lines and act locally.
 */
export type Delegation =
  | ({ kind: "done"; rc: number } & DelegationLines)
  | ({ kind: "fallback" } & DelegationLines);

/** The warning printed when a delegated command falls back to the flag file. */
export const FALLBACK_WARNING =
  "PROSE-WARN: backend unreachable; flag file used directly (mirror not updated)";

/** The first line of every delegated command's output. */
export function viaBackendLine(url: string): string {
  return `PROSE: via=backend url=${renderValue(url)}`;
}

/** The fallback line: `PROSE: via=filesystem backend=unreachable url=<url> reason=<r>`. */
export function fallbackLine(url: string, reason: FallbackReason): string {
  return `PROSE: via=filesystem backend=unreachable url=${renderValue(url)} reason=${reason}`;
}

function fallback(url: string, reason: FallbackReason, json: boolean): Delegation {
  // With --json, stdout must stay one JSON document: the via line goes to stderr.
  const line = fallbackLine(url, reason);
  return json
    ? { kind: "fallback", out: [], err: [line, FALLBACK_WARNING] }
    : { kind: "fallback", out: [line], err: [FALLBACK_WARNING] };
}

function cleanOrNull(value: string | null): string | null {
  return value === null ? null : sanitize(value);
}

/** A status document as received, with every string that came over the network sanitized. */
export function sanitizeStatusDocument(doc: StatusDocument): StatusDocument {
  const m = doc.mirror;
  const e = doc.expected;
  return {
    ...doc,
    flagPath: sanitize(doc.flagPath),
    reason: cleanOrNull(doc.reason),
    field: cleanOrNull(doc.field),
    mirror: m === null ? null : {
      CELLM_PROSE_ACTIVE: cleanOrNull(m.CELLM_PROSE_ACTIVE),
      CELLM_PROSE_LEVEL: cleanOrNull(m.CELLM_PROSE_LEVEL),
      CELLM_PROSE_EXPIRES_AT: cleanOrNull(m.CELLM_PROSE_EXPIRES_AT),
    },
    expected: e === null ? null : {
      CELLM_PROSE_ACTIVE: sanitize(e.CELLM_PROSE_ACTIVE),
      CELLM_PROSE_LEVEL: sanitize(e.CELLM_PROSE_LEVEL),
      CELLM_PROSE_EXPIRES_AT: sanitize(e.CELLM_PROSE_EXPIRES_AT),
    },
  };
}

/** A flag read rebuilt from a (sanitized) status document, for the shared status renderers. */
function readFromDocument(doc: StatusDocument): FlagRead {
  return {
    state: doc.state,
    flag: doc.flag,
    // Only rendered, and already sanitized: the backend may know reason codes this CLI does not.
    reason: doc.reason as ReasonCode | null,
    field: doc.field,
    path: doc.flagPath,
    raw: null,
  };
}

/** `PROSE: mirror drift=<bool> driftKeys=<k,…|->`: the backend's drift verdict. */
export function driftLine(doc: StatusDocument): string {
  const keys = doc.driftKeys === null || doc.driftKeys.length === 0 ? "-" : doc.driftKeys.join(",");
  return `PROSE: mirror drift=${doc.drift === null ? "-" : String(doc.drift)} driftKeys=${keys}`;
}

function rejection(
  url: string,
  command: string,
  answer: Extract<BackendOutcome<unknown>, { kind: "rejected" }>,
): Delegation {
  const out = [viaBackendLine(url)];
  const err: string[] = [];
  const field = answer.field === undefined ? "" : ` field=${renderValue(answer.field)}`;
  if (answer.status === 409) {
    const reason = renderValue(answer.reason ?? answer.error);
    const result = answer.error === "conflict" ? "conflict" : "refused";
    out.push(`PROSE: action=${command} result=${result} reason=${reason}`);
    err.push(`PROSE-ERROR: code=${reason}${field} ${sanitize(answer.message)}`);
  } else {
    err.push(
      `PROSE-ERROR: code=${renderValue(answer.error)}${field} backend rejected the request ` +
        `(HTTP ${answer.status}): ${sanitize(answer.message)}`,
    );
  }
  return { kind: "done", rc: rejectionExitCode(answer.status), out, err };
}

/**
 * Delegate `on`, `off` or `level` to `POST /api/prose/toggle`. On success the output is the via
 * line, `PROSE: action=<cmd> result=<r> [reason=]` and the status line (rc 0).
 */
export async function delegateToggle(
  url: string,
  command: "on" | "off" | "level" | "sync",
  request: ToggleRequest,
  timeoutMs: number = BACKEND_TIMEOUT_MS,
): Promise<Delegation> {
  const answer = await backendCall(
    url,
    { method: "POST", path: "/api/prose/toggle", body: request, timeoutMs },
    ToggleResponseSchema,
  );
  if (answer.kind === "fallback") return fallback(url, answer.reason, false);
  if (answer.kind === "rejected") return rejection(url, command, answer);
  const doc = sanitizeStatusDocument(answer.body.status);
  const reason = answer.body.reason === undefined
    ? ""
    : ` reason=${renderValue(answer.body.reason)}`;
  return {
    kind: "done",
    rc: 0,
    out: [
      viaBackendLine(url),
      `PROSE: action=${command} result=${renderValue(answer.body.result)}${reason}`,
      statusLine(readFromDocument(doc)),
    ],
    err: [],
  };
}

/** The exit code of a status report: 1 for `invalid` or `unsafe`, else 0. */
export function statusExitCode(state: StatusDocument["state"]): 0 | 1 {
  return state === "invalid" || state === "unsafe" ? 1 : 0;
}

/**
 * Delegate `status [--json]` to `GET /api/prose/status`. Human output: the via line, the status
 * line, the drift line and the sentence. `--json`: the document alone on stdout (the via line goes
 * to stderr so stdout stays one JSON document).
 */
export async function delegateStatus(
  url: string,
  json: boolean,
  timeoutMs: number = BACKEND_TIMEOUT_MS,
): Promise<Delegation> {
  const answer = await backendCall(
    url,
    { method: "GET", path: "/api/prose/status", timeoutMs },
    StatusDocumentSchema,
  );
  if (answer.kind === "fallback") return fallback(url, answer.reason, json);
  if (answer.kind === "rejected") return rejection(url, "status", answer);
  const doc = sanitizeStatusDocument(answer.body);
  const rc = statusExitCode(doc.state);
  // As a local status: an invalid or unsafe flag (rc 1) also gets an error line.
  const problem = rc === 0 ? [] : [
    `PROSE-ERROR: code=${
      renderValue(doc.reason ?? doc.state)
    } ${doc.flagPath}: the flag is ${doc.state}`,
  ];
  if (json) {
    return { kind: "done", rc, out: [JSON.stringify(doc)], err: [viaBackendLine(url), ...problem] };
  }
  const read = readFromDocument(doc);
  return {
    kind: "done",
    rc,
    out: [viaBackendLine(url), statusLine(read), driftLine(doc), statusSentence(read)],
    err: problem,
  };
}

/**
 * `prose sync`: ask the backend to re-mirror the flag. Without a backend (`url` null) or when it is
 * unreachable there is nothing to do locally: rc 1.
 */
export async function delegateSync(
  url: string | null,
  timeoutMs: number = BACKEND_TIMEOUT_MS,
): Promise<{ rc: number } & DelegationLines> {
  if (url === null) {
    return {
      rc: 1,
      out: ["PROSE: action=sync result=refused reason=no-backend"],
      err: ["PROSE-ERROR: code=no-backend set CELLM_WORKER_URL or backend.url to sync the mirror"],
    };
  }
  const done = await delegateToggle(url, "sync", { action: "sync" }, timeoutMs);
  if (done.kind === "done") return done;
  return {
    rc: 1,
    out: [...done.out, "PROSE: action=sync result=refused reason=backend-unreachable"],
    err: [
      "PROSE-ERROR: code=backend-unreachable the mirror lives in the backend; start `prose serve`",
    ],
  };
}

/** A command the CLI delegates, in wire form (`status` is the GET). */
export type DelegatedRequest = ToggleRequest | { action: "status"; json: boolean };

/**
 * Run a delegated command against the backend at `url` and print its lines. Returns the exit code
 * when the backend gave the final answer (success or rejection), or `null` after printing the
 * fallback line and warning, when the CLI must act on the flag file. `sync` never falls back: it has
 * nothing to do locally, so an unreachable backend is rc 1.
 */
export async function runDelegation(
  request: DelegatedRequest,
  url: string,
  timeoutMs: number = BACKEND_TIMEOUT_MS,
): Promise<number | null> {
  let result: Delegation | ({ rc: number } & DelegationLines);
  if (request.action === "status") result = await delegateStatus(url, request.json, timeoutMs);
  else if (request.action === "sync") result = await delegateSync(url, timeoutMs);
  else result = await delegateToggle(url, request.action, request, timeoutMs);
  writeOut(...result.out);
  writeErr(...result.err);
  return "rc" in result ? result.rc : null;
}
