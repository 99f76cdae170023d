/**
 * The prose config `D/config.json` (spec §4): JSONC, strict, every field defaulted. An invalid
 * config never crashes: {@linkcode loadConfig} names the field and callers decide to fail closed.
 *
 * @module
 */

import { readFileSync, statSync } from "node:fs";
import { parse, type ParseError, printParseErrorCode } from "jsonc-parser";
import { z } from "zod";
import { isPermissionError } from "../exit.ts";
import {
  MAX_AUTO_CLARITY_MS,
  MAX_AUTO_CLARITY_TURNS,
  MAX_TURNS,
  type ParseSchema,
  TTL_UNITS,
  type TtlUnit,
} from "./schema.ts";
import { type ProseOptions, resolvePaths } from "./paths.ts";
import { sanitize } from "./sanitize.ts";

/** The built-in multilingual trigger (opt-in through `trigger.enabled`). */
export const DEFAULT_TRIGGER_PATTERN = "prose|prosa|plain|normal mode|modo normal|普通|普通模式";
/** Largest config file in bytes. */
export const MAX_CONFIG_BYTES = 64 * 1024;

const DURATION = /^([1-9][0-9]{0,5})(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** Shortest and longest durations. */
const MIN_DURATION_MS = 1000;
const MAX_DURATION_MS = 30 * 86_400_000;

/**
 * Milliseconds of a duration (`^[1-9][0-9]{0,5}(s|m|h|d)$`, 1 s–30 d), or `null` when invalid.
 *
 * @example
 * ```ts
 * import { parseDuration } from "./config.ts";
 * parseDuration("15m"); // 900000
 * parseDuration("31d"); // null
 * ```
 */
export function parseDuration(text: string): number | null {
  const m = DURATION.exec(text);
  if (m === null) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return ms >= MIN_DURATION_MS && ms <= MAX_DURATION_MS ? ms : null;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * The origin of a backend URL when it follows §9 (`http://` on 127.0.0.1, localhost or [::1], no
 * path, query or credentials), else `null`.
 *
 * @example
 * ```ts
 * import { loopbackOrigin } from "./config.ts";
 * loopbackOrigin("http://127.0.0.1:31415"); // "http://127.0.0.1:31415"
 * loopbackOrigin("http://10.0.0.5:31415"); // null
 * ```
 */
export function loopbackOrigin(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" || !LOOPBACK_HOSTS.has(url.hostname)) return null;
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    return null;
  }
  if (url.pathname !== "/" || /^http:\/\/[^/]*\/./.test(text)) return null;
  return url.origin;
}

function compiles(pattern: string, flags: string): boolean {
  try {
    new RegExp(pattern, flags);
    return true;
  } catch {
    return false;
  }
}

const Duration = z.string().refine((s) => parseDuration(s) !== null, {
  message: "must be a duration like 90s, 15m, 12h or 7d (1s to 30d)",
});

/** A loaded config with every default applied (spec §4). */
export interface ProseConfig {
  /** Editor schema hint; ignored. */
  $schema?: string;
  /** Default activation level. */
  level: "minimal" | "full";
  /** Default TTL unit. */
  ttl: TtlUnit;
  /** Default responses for `turn`. */
  turns: number;
  /** Cap of `session` flags without `--for` (a duration), or `null` for none. */
  sessionCap: string | null;
  /** The natural-language trigger (opt-in). */
  trigger: {
    /** Whether `match` may match at all. */
    enabled: boolean;
    /** Add the `i` flag. */
    caseInsensitive: boolean;
    /** The regex source (compiled with `u`). */
    pattern: string;
  };
  /** Short overrides activated by safety warnings or ambiguity. */
  autoClarity: {
    /** Whether auto-clarity activations are accepted. */
    enabled: boolean;
    /** Their level. */
    level: "minimal" | "full";
    /** Their responses (1–10). */
    turns: number;
    /** Their cap (a duration ≤ 1h). */
    for: string;
  };
  /** The optional loopback backend. */
  backend: {
    /** Its origin, or `null` for filesystem only. */
    url: string | null;
  };
}

/**
 * The strict config schema with its defaults. Unknown keys are errors, except a top-level
 * `$schema`.
 */
export const ProseConfigZod = z.strictObject({
  $schema: z.string().optional(),
  level: z.enum(["minimal", "full"]).default("full"),
  ttl: z.enum(TTL_UNITS).default("block"),
  turns: z.int().min(1).max(MAX_TURNS).default(1),
  sessionCap: Duration.nullable().default("12h"),
  trigger: z.strictObject({
    enabled: z.boolean().default(false),
    caseInsensitive: z.boolean().default(true),
    pattern: z.string().min(1).max(512).refine((p) => compiles(p, "u"), {
      message: "must be a valid regular expression (u flag)",
    }).default(DEFAULT_TRIGGER_PATTERN),
  }).prefault({}),
  autoClarity: z.strictObject({
    enabled: z.boolean().default(true),
    level: z.enum(["minimal", "full"]).default("full"),
    turns: z.int().min(1).max(MAX_AUTO_CLARITY_TURNS).default(1),
    for: Duration.refine((s) => (parseDuration(s) ?? Infinity) <= MAX_AUTO_CLARITY_MS, {
      message: "must be at most 1h",
    }).default("15m"),
  }).prefault({}),
  backend: z.strictObject({
    url: z.string().refine((u) => loopbackOrigin(u) !== null, {
      message: "must be http:// on 127.0.0.1, localhost or [::1], without a path",
    }).nullable().default(null),
  }).prefault({}),
});

const _configShape: z.ZodType<ProseConfig> = ProseConfigZod;

/** The strict config schema with its defaults (the zod schema, typed for the public API). */
export const ProseConfigSchema: ParseSchema<ProseConfig> = ProseConfigZod;

/** The built-in defaults (what a missing or blank config means). */
export function defaultConfig(): ProseConfig {
  return ProseConfigZod.parse({});
}

/** Outcome of {@linkcode loadConfig}: the config, or the faulty field and a one-line message. */
export type ConfigResult =
  | { ok: true; config: ProseConfig; path: string }
  | { ok: false; field: string; message: string; path: string };

function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - (before.lastIndexOf("\n") + 1) + 1;
  return `${line}:${column}`;
}

/**
 * Parse config text (JSONC: comments and trailing commas allowed). Blank text means defaults.
 *
 * @example
 * ```ts
 * import { parseConfigText } from "./config.ts";
 * const r = parseConfigText('{ "level": "minimal", } // trailing comma ok', "config.json");
 * r.ok && r.config.level; // "minimal"
 * ```
 */
export function parseConfigText(text: string, path: string): ConfigResult {
  const shown = sanitize(path);
  const body = text.startsWith("\ufeff") ? text.slice(1) : text;
  if (body.trim() === "") return { ok: true, config: defaultConfig(), path };
  const errors: ParseError[] = [];
  const value: unknown = parse(body, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0];
    return {
      ok: false,
      field: "(syntax)",
      message: `${shown}:${lineColumn(body, e.offset)}: ${printParseErrorCode(e.error)}`,
      path,
    };
  }
  const parsed = ProseConfigZod.safeParse(value);
  if (parsed.success) return { ok: true, config: parsed.data, path };
  const issue = parsed.error.issues[0];
  const parts = issue.path.map((p) => sanitize(String(p), 64));
  let message = sanitize(issue.message);
  if (issue.code === "unrecognized_keys") {
    parts.push(sanitize(String(issue.keys[0]), 64));
    message = "unknown key";
  }
  return {
    ok: false,
    field: parts.length === 0 ? "(root)" : parts.join("."),
    message: `${shown}: ${message}`,
    path,
  };
}

/**
 * Load `D/config.json` (it may be a symlink; at most 64 KiB). Missing or blank means defaults.
 * Never throws on filesystem state.
 *
 * @example
 * ```ts ignore
 * import { loadConfig } from "./mod.ts";
 * const r = loadConfig();
 * if (!r.ok) console.error(`config field ${r.field}: ${r.message}`);
 * ```
 */
export function loadConfig(opts: ProseOptions = {}): ConfigResult {
  const path = resolvePaths(opts).config;
  const shown = sanitize(path);
  let text: string;
  try {
    const st = statSync(path);
    if (!st.isFile()) return { ok: false, field: "(file)", message: `${shown}: not a file`, path };
    if (st.size > MAX_CONFIG_BYTES) {
      return { ok: false, field: "(file)", message: `${shown}: larger than 64 KiB`, path };
    }
    const bytes = readFileSync(path);
    if (bytes.length > MAX_CONFIG_BYTES) {
      return { ok: false, field: "(file)", message: `${shown}: larger than 64 KiB`, path };
    }
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (e) {
    if (isPermissionError(e)) throw e;
    const code = (e as { code?: string } | null)?.code;
    if (code === "ENOENT") return { ok: true, config: defaultConfig(), path };
    const why = e instanceof TypeError ? "not valid UTF-8" : `cannot be read (${code ?? "error"})`;
    return { ok: false, field: "(file)", message: `${shown}: ${why}`, path };
  }
  return parseConfigText(text, path);
}
