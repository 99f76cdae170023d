/**
 * The request handler of `prose serve` (spec §9): the HTTP gate in contract order, then the three
 * endpoints. Every toggle writes the flag through the library (the flag file stays the source of
 * truth), re-reads it, and mirrors what it read into SQLite in one transaction.
 *
 * The handler is synchronous between reading the body and answering, so a flag write and its
 * mirror write never interleave with another request.
 *
 * @module
 */

import { decodeJson, readBodyCapped } from "./http_body.ts";
import {
  declaredTooLarge,
  errorReply,
  hostAllowed,
  isJsonContentType,
  originAllowed,
  type Reply,
  route,
  toResponse,
} from "./server_http.ts";
import { type ToggleRequest, ToggleRequestSchema } from "./server_protocol.ts";
import {
  expectedMirror,
  MIRROR_KEYS,
  mirrorDrift,
  type MirrorKey,
  type MirrorRows,
  type MirrorValues,
} from "./mirror.ts";
import { issueField } from "./schema.ts";
import { sanitize } from "./sanitize.ts";
import type { ProseOptions } from "./paths.ts";
import { type FlagRead, readProseFlag } from "./flag_io.ts";
import { activate, deactivate, setLevel } from "./ops.ts";
import { type MirrorReport, type StatusDocument, statusDocument } from "./status.ts";

/** What the handler needs from the mirror database (the real one is {@linkcode ProseMirror}). */
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

function mirrorSection(ctx: ServerContext, read: FlagRead): MirrorReport {
  const expected = expectedMirror(read);
  let rows: MirrorRows | null;
  try {
    rows = ctx.mirror.read();
  } catch {
    rows = null;
  }
  if (rows === null) {
    // An unreadable mirror cannot match anything: every key drifts.
    return { mirror: null, drift: true, driftKeys: [...MIRROR_KEYS] };
  }
  const { drift, driftKeys } = mirrorDrift(rows, expected);
  const show = (key: MirrorKey) => (rows[key] === null ? null : sanitize(rows[key]));
  return {
    mirror: {
      CELLM_PROSE_ACTIVE: show("CELLM_PROSE_ACTIVE"),
      CELLM_PROSE_LEVEL: show("CELLM_PROSE_LEVEL"),
      CELLM_PROSE_EXPIRES_AT: show("CELLM_PROSE_EXPIRES_AT"),
    },
    drift,
    driftKeys,
  };
}

/** The backend status document for a flag read (default: a fresh one) plus the mirror comparison. */
export function backendStatus(
  ctx: ServerContext,
  now: number,
  read: FlagRead = readProseFlag({ ...ctx.opts, now }),
): StatusDocument {
  return statusDocument(read, "backend", now, mirrorSection(ctx, read));
}

/** Re-read the flag and mirror it. Returns the read and whether the database write succeeded. */
function syncMirror(ctx: ServerContext, now: number): { read: FlagRead; ok: boolean } {
  const read = readProseFlag({ ...ctx.opts, now });
  try {
    ctx.mirror.write(expectedMirror(read), now);
    return { read, ok: true };
  } catch {
    return { read, ok: false };
  }
}

/** A transition's outcome as the handler needs it ({@linkcode OpResult}, or `synced`). */
interface ToggleOutcome {
  ok: boolean;
  result: string;
  reason?: string;
  field?: string;
  message?: string;
}

/** Run one toggle through the library (the CLI's own transitions: one logic, two front ends). */
function runToggle(request: ToggleRequest, opts: ProseOptions): ToggleOutcome {
  switch (request.action) {
    case "on": {
      const { action: _action, ...params } = request;
      return activate(params, opts);
    }
    case "off":
      return deactivate(opts);
    case "level":
      return setLevel(request.level, opts);
    case "sync":
      return { ok: true, result: "synced" };
  }
}

/** Map a failed transition to its reply: usage → 400, invalid config → 500, else 409. */
function failureReply(outcome: ToggleOutcome): Reply {
  const message = sanitize(outcome.message ?? outcome.reason ?? outcome.result);
  const field = outcome.field === undefined ? {} : { field: sanitize(outcome.field) };
  if (outcome.result === "usage") return errorReply(400, "invalid_request", message, field);
  if (outcome.result === "refused" && outcome.reason === "config") {
    return errorReply(500, "config_invalid", message, field);
  }
  return errorReply(409, outcome.result, message, { reason: outcome.reason ?? outcome.result });
}

function toggle(ctx: ServerContext, request: ToggleRequest, now: number): Reply {
  const outcome = runToggle(request, { ...ctx.opts, now });
  if (!outcome.ok) return failureReply(outcome);
  // Mirror what the flag file now says, not what was asked: the file is the source of truth.
  const synced = syncMirror(ctx, now);
  const body: { [key: string]: unknown } = {
    ok: true,
    action: request.action,
    result: outcome.result,
  };
  if (outcome.reason !== undefined) body.reason = outcome.reason;
  body.status = backendStatus(ctx, now, synced.read);
  body.mirror = { ok: synced.ok };
  return { status: 200, body };
}

async function handle(ctx: ServerContext, req: Request): Promise<Reply> {
  const url = new URL(req.url);
  const routed = route(req.method, url.pathname);
  if (!routed.ok) return routed.reply;
  if (!hostAllowed(req.headers.get("host"), ctx.port)) {
    return errorReply(403, "forbidden_host", "Host must be a loopback name with this port");
  }
  if (!originAllowed(req.headers.get("origin"))) {
    return errorReply(403, "forbidden_origin", "Origin must be a loopback origin");
  }
  const now = (ctx.clock ?? Date.now)();
  if (routed.path === "/health") return { status: 200, body: { ok: true } };
  if (routed.path === "/api/prose/status") return { status: 200, body: backendStatus(ctx, now) };
  if (!isJsonContentType(req.headers.get("content-type"))) {
    return errorReply(415, "unsupported_media_type", "Content-Type must be application/json");
  }
  if (declaredTooLarge(req.headers.get("content-length"))) {
    return errorReply(413, "payload_too_large", "body larger than 4096 bytes");
  }
  const bytes = await readBodyCapped(req.body);
  if (bytes === "too-large") {
    return errorReply(413, "payload_too_large", "body larger than 4096 bytes");
  }
  const decoded = decodeJson(bytes);
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
  return toggle(ctx, parsed.data, (ctx.clock ?? Date.now)());
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
      const detail = e instanceof Error ? e.message.split("\n")[0] : String(e);
      reply = errorReply(500, "internal", sanitize(detail));
    }
    return toResponse(reply);
  };
}
