/**
 * The wire documents of the prose backend (spec §9), defined once and shared by the server (which
 * parses requests) and the CLI's backend client (which parses responses).
 *
 * @module
 */

import { z } from "zod";
import {
  LEVELS,
  MAX_TURNS,
  type ParseSchema,
  type ProseLevel,
  type ProseSource,
  SOURCES,
  TTL_UNITS,
  type TtlUnit,
} from "./schema.ts";
import { type StatusDocument, StatusDocumentZod } from "./status.ts";

/** Largest accepted request body in bytes (declared or streamed); larger is 413. */
export const MAX_BODY_BYTES = 4096;

/** A parsed toggle request (the body of `POST /api/prose/toggle`). */
export type ToggleRequest =
  | {
    action: "on";
    level?: "minimal" | "full";
    ttl?: { unit: TtlUnit; value?: number };
    for?: string;
    source?: ProseSource;
  }
  | { action: "off" }
  | { action: "level"; level: ProseLevel }
  | { action: "sync" };

/** The zod schema behind {@linkcode ToggleRequestSchema} (for composition and JSON Schema export). */
export const ToggleRequestZod = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("on"),
    level: z.enum(["minimal", "full"]).optional(),
    ttl: z.strictObject({
      unit: z.enum(TTL_UNITS),
      value: z.int().min(0).max(MAX_TURNS).optional(),
    }).optional(),
    for: z.string().max(16).optional(),
    source: z.enum(SOURCES).optional(),
  }),
  z.strictObject({ action: z.literal("off") }),
  z.strictObject({ action: z.literal("level"), level: z.enum(LEVELS) }),
  z.strictObject({ action: z.literal("sync") }),
]);

const _toggleShape: z.ZodType<ToggleRequest> = ToggleRequestZod;

/**
 * The strict body of `POST /api/prose/toggle`: `on` (with optional level, ttl, `for` and source),
 * `off`, `level`, or `sync` (re-mirror only). Unknown keys are rejected at every level.
 *
 * @example
 * ```ts
 * import { ToggleRequestSchema } from "./server_protocol.ts";
 * ToggleRequestSchema.safeParse({ action: "level", level: "max" }).success; // false
 * ```
 */
export const ToggleRequestSchema: ParseSchema<ToggleRequest> = ToggleRequestZod;

/** The error codes a backend error body carries. */
export const BACKEND_ERRORS = [
  "not_found",
  "method_not_allowed",
  "forbidden_host",
  "forbidden_origin",
  "unsupported_media_type",
  "payload_too_large",
  "invalid_json",
  "invalid_request",
  "refused",
  "conflict",
  "config_invalid",
  "internal",
] as const;

/** Every non-2xx body: `{ok: false, error, reason?, field?, message}`. */
export interface ErrorBody {
  /** Always `false`. */
  ok: false;
  /** One of {@linkcode BACKEND_ERRORS} (a newer server may send others). */
  error: string;
  /** The reason code of a 409 (`symlink-file`, `conflict`, `auto-clarity-disabled`…). */
  reason?: string;
  /** The request or config field at fault. */
  field?: string;
  /** One line, never a stack trace. */
  message: string;
}

/** The zod schema behind {@linkcode ErrorBodySchema}. */
export const ErrorBodyZod = z.strictObject({
  ok: z.literal(false),
  error: z.string().max(64),
  reason: z.string().max(64).optional(),
  field: z.string().max(256).optional(),
  message: z.string().max(1024),
});

const _errorShape: z.ZodType<ErrorBody> = ErrorBodyZod;

/** The schema of {@linkcode ErrorBody}. */
export const ErrorBodySchema: ParseSchema<ErrorBody> = ErrorBodyZod;

/** The body of `GET /health`. */
export const HealthBodySchema: ParseSchema<{ ok: true }> = z.strictObject({ ok: z.literal(true) });

/** The success body of a toggle: `{ok: true, action, result, reason?, status, mirror: {ok}}`. */
export interface ToggleResponse {
  /** Always `true`. */
  ok: true;
  /** The requested action. */
  action: "on" | "off" | "level" | "sync";
  /** The result word (`activated`, `kept`, `cleared`, `changed`, `synced`…). */
  result: string;
  /** Why, when the result needs one (`existing-override`). */
  reason?: string;
  /** The status document after the toggle. */
  status: StatusDocument;
  /** Whether the mirror write succeeded (when not, `status` shows drift). */
  mirror: { ok: boolean };
}

/** The zod schema behind {@linkcode ToggleResponseSchema}. */
export const ToggleResponseZod = z.strictObject({
  ok: z.literal(true),
  action: z.enum(["on", "off", "level", "sync"]),
  result: z.string().min(1).max(64),
  reason: z.string().max(64).optional(),
  status: StatusDocumentZod,
  mirror: z.strictObject({ ok: z.boolean() }),
});

const _toggleResponseShape: z.ZodType<ToggleResponse> = ToggleResponseZod;

/** The schema of {@linkcode ToggleResponse}. */
export const ToggleResponseSchema: ParseSchema<ToggleResponse> = ToggleResponseZod;
