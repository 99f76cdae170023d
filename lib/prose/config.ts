/**
 * The prose config `D/config.json` (`references/prose.md#config`): JSONC, strict, every field
 * defaulted, and the natural-language trigger it configures. An invalid config never crashes:
 * {@linkcode loadConfig} names the field and callers decide to fail closed.
 *
 * @module
 */

import type { ParseError } from "jsonc-parser";
// @ts-types="jsonc-parser"
import { parse, printParseErrorCode } from "../_vendor/jsonc_parser.js";
import * as z from "../_zod.ts";
import { errorCode, rethrowPermission } from "../_fs/errors.ts";
import { ReadRefusedError, readRegular } from "../_fs/read.ts";
import { MAX_AUTO_CLARITY_MS, MAX_AUTO_CLARITY_TURNS, MAX_TURNS, TTL_UNITS } from "./schema.ts";
import { type ProseOptions, resolvePaths } from "./flag.ts";
import { clampPoints, sanitize, sanitizeMessage } from "./sanitize.ts";
import { nestedRepetition } from "./trigger.ts";

/** The built-in multilingual trigger (opt-in through `trigger.enabled`). */
const DEFAULT_TRIGGER_PATTERN = "prose|prosa|plain|normal mode|modo normal|普通|普通模式";
/** Largest config file in bytes. */
const MAX_CONFIG_BYTES = 64 * 1024;

const DURATION = /^([1-9][0-9]{0,5})(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** Shortest and longest durations. */
const MIN_DURATION_MS = 1000;
const MAX_DURATION_MS = 30 * 86_400_000;

/**
 * Milliseconds of a duration (`^[1-9][0-9]{0,5}(s|m|h|d)$`, 1 s–30 d), or `null` when invalid.
 */
export function parseDuration(text: string): number | null {
  const m = DURATION.exec(text);
  if (m === null) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return ms >= MIN_DURATION_MS && ms <= MAX_DURATION_MS ? ms : null;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * The origin of a backend URL when it is loopback-only (`http://` on 127.0.0.1, localhost or
 * [::1], no path, query or credentials; `references/prose.md#cli-delegation`), else `null`.
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

const Duration = z.deferred(() =>
  z.string().check(z.refine((s) => parseDuration(s) !== null, {
    message: "must be a duration like 90s, 15m, 12h or 7d (1s to 30d)",
  }))
);

/**
 * Each top-level config key with the builder of its schema, in schema order. A config file sets a
 * key or two, and cold zod code makes building all seven fields' schemas (about fifty nodes) the
 * dearest step of a hook-path run, so {@linkcode parseConfigText} builds only the fields a config
 * sets (`references/startup.md#deferred-schemas`); each builder runs at most once.
 */
const FIELDS = {
  $schema: () => z.optional(z.string()),
  level: () => z._default(z.enum(["minimal", "full"]), "full"),
  ttl: () => z._default(z.enum(TTL_UNITS), "block"),
  turns: () => z._default(z.int().check(z.minimum(1), z.maximum(MAX_TURNS)), 1),
  sessionCap: () => z._default(z.nullable(Duration), "12h"),
  trigger: () =>
    z.prefault(
      z.strictObject({
        enabled: z._default(z.boolean(), false),
        caseInsensitive: z._default(z.boolean(), true),
        pattern: z._default(
          z.string().check(
            z.minLength(1),
            z.maxLength(512),
            z.refine((p) => compiles(p, "u"), {
              message: "must be a valid regular expression (u flag)",
            }),
          ),
          DEFAULT_TRIGGER_PATTERN,
        ),
      }),
      {},
    ),
  autoClarity: () =>
    z.prefault(
      z.strictObject({
        enabled: z._default(z.boolean(), true),
        level: z._default(z.enum(["minimal", "full"]), "full"),
        turns: z._default(z.int().check(z.minimum(1), z.maximum(MAX_AUTO_CLARITY_TURNS)), 1),
        for: z._default(
          Duration.check(z.refine((s) => (parseDuration(s) ?? Infinity) <= MAX_AUTO_CLARITY_MS, {
            message: "must be at most 1h",
          })),
          "15m",
        ),
      }),
      {},
    ),
  backend: () =>
    z.prefault(
      z.strictObject({
        url: z._default(
          z.nullable(
            z.string().check(z.refine((u) => loopbackOrigin(u) !== null, {
              message: "must be http:// on 127.0.0.1, localhost or [::1], without a path",
            })),
          ),
          null,
        ),
      }),
      {},
    ),
};

type ConfigKey = keyof typeof FIELDS;
type ConfigShape = { [K in ConfigKey]: ReturnType<typeof FIELDS[K]> };

/** The config keys in schema order. */
const CONFIG_KEYS = Object.keys(FIELDS) as ConfigKey[];

const builtFields: Partial<ConfigShape> = {};

/** The strict object schema of `keys` (in schema order), each field built once. */
function configObject<K extends ConfigKey>(keys: readonly K[]) {
  const shape: Partial<ConfigShape> = {};
  for (const key of keys) {
    const field = builtFields[key] ?? FIELDS[key]();
    (builtFields as Record<ConfigKey, unknown>)[key] = field;
    (shape as Record<ConfigKey, unknown>)[key] = field;
  }
  return z.strictObject(shape as Pick<ConfigShape, K>);
}

/**
 * The strict config schema with its defaults. Unknown keys are errors, except a top-level
 * `$schema`.
 */
export const ProseConfigSchema = z.deferred(() => configObject(CONFIG_KEYS));

/** A loaded config with every default applied. */
export type ProseConfig = z.output<typeof ProseConfigSchema>;

/**
 * The built-in defaults (what a missing or blank config means): exactly `ProseConfigSchema`'s
 * parse of `{}` (a unit test holds them equal), spelled out so that a run without a config file
 * never builds the config schema (`references/startup.md#deferred-schemas`).
 */
export function defaultConfig(): ProseConfig {
  return {
    level: "full",
    ttl: "block",
    turns: 1,
    sessionCap: "12h",
    trigger: { enabled: false, caseInsensitive: true, pattern: DEFAULT_TRIGGER_PATTERN },
    autoClarity: { enabled: true, level: "full", turns: 1, for: "15m" },
    backend: { url: null },
  };
}

/** Outcome of {@linkcode loadConfig}: the config, or the faulty field and a one-line message. */
export type ConfigResult =
  | { ok: true; config: ProseConfig }
  | { ok: false; field: string; message: string };

function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - (before.lastIndexOf("\n") + 1) + 1;
  return `${line}:${column}`;
}

/**
 * `ProseConfigSchema.safeParse(value)`, building only the fields `value` sets: an object is parsed
 * by the strict object of its known keys, and every key it leaves out takes its default, which is
 * what the whole schema gives a missing key (`defaultConfig` is held equal to the parse of `{}`).
 * Unknown keys are unknown to both, and issues come in the same order (`config_test.ts` compares
 * the two on a corpus of valid and broken configs).
 */
function parseFields(value: unknown): ReturnType<typeof ProseConfigSchema.safeParse> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return ProseConfigSchema.safeParse(value);
  }
  const parsed = configObject(CONFIG_KEYS.filter((key) => Object.hasOwn(value, key)))
    .safeParse(value);
  if (!parsed.success) return parsed;
  const data: Record<string, unknown> = parsed.data;
  const defaults: Record<string, unknown> = defaultConfig();
  const config: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) {
    if (Object.hasOwn(data, key)) config[key] = data[key];
    else if (Object.hasOwn(defaults, key)) config[key] = defaults[key];
  }
  return { success: true, data: config as ProseConfig };
}

/** The deepest nesting of arrays and objects a config may have (the schema needs two levels). */
const MAX_CONFIG_DEPTH = 64;

/**
 * The offset of the first `[` or `{` that opens a level past {@linkcode MAX_CONFIG_DEPTH}, or -1.
 * jsonc-parser recurses once per level, so a config a few thousand levels deep (well under the
 * size cap) overflows its stack: this linear scan runs first (`references/prose.md#config`). It
 * reads strings and comments as jsonc-parser's scanner does (a string ends at `"` or a line
 * break, `\` takes the next character; `//` runs to a line break, `/*` to `*\/`), and a closer
 * only closes a level of its own kind (the parser skips the other kind while recovering), so the
 * depth it counts is never below the parser's.
 */
function tooDeepAt(text: string): number {
  const open: number[] = []; // the closer each open level waits for, innermost last
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) { // [ {
      if (open.length === MAX_CONFIG_DEPTH) return i;
      open.push(c + 2); // ] }
    } else if (c === 0x5d || c === 0x7d) {
      if (open.at(-1) === c) open.pop();
    } else if (c === 0x22) { // a string
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x22) break;
        if (d === 0x0a || d === 0x0d) {
          i--; // the line break is not part of the string
          break;
        }
        if (d === 0x5c) i++; // `\` takes the next character, whatever it is
      }
    } else if (c === 0x2f && text.charCodeAt(i + 1) === 0x2f) { // a line comment
      while (i < text.length && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d) i++;
    } else if (c === 0x2f && text.charCodeAt(i + 1) === 0x2a) { // a block comment
      const end = text.indexOf("*/", i + 2);
      if (end === -1) return -1;
      i = end + 1;
    }
  }
  return -1;
}

/**
 * Parse config text (JSONC: comments and trailing commas allowed). Blank text means defaults;
 * nesting deeper than {@linkcode MAX_CONFIG_DEPTH} levels is the syntax error `NestingTooDeep`.
 */
export function parseConfigText(text: string, path: string): ConfigResult {
  const shown = sanitize(path);
  const body = text.startsWith("\ufeff") ? text.slice(1) : text;
  if (body.trim() === "") return { ok: true, config: defaultConfig() };
  const deep = tooDeepAt(body);
  if (deep !== -1) {
    return {
      ok: false,
      field: "(syntax)",
      message: `${shown}:${lineColumn(body, deep)}: NestingTooDeep`,
    };
  }
  const errors: ParseError[] = [];
  let value: unknown;
  try {
    // Most configs are plain JSON, which the runtime parses faster and to the same value; only
    // JSONC (comments, trailing commas) and broken text go to jsonc-parser, which names the spot.
    value = JSON.parse(body);
  } catch {
    value = parse(body, errors, { allowTrailingComma: true, disallowComments: false });
  }
  if (errors.length > 0) {
    const e = errors[0];
    return {
      ok: false,
      field: "(syntax)",
      message: `${shown}:${lineColumn(body, e.offset)}: ${printParseErrorCode(e.error)}`,
    };
  }
  const parsed = parseFields(value);
  if (parsed.success) {
    // A repetition nested in a repeated group can hold a prompt for minutes in a backtracking
    // engine: refused here, naming it (references/prose.md#trigger).
    const nested = nestedRepetition(parsed.data.trigger.pattern);
    if (nested === null) return { ok: true, config: parsed.data };
    return {
      ok: false,
      field: "trigger.pattern",
      message: `${shown}: ${
        sanitize(nested, 64)
      } repeats a group that repeats inside it, which can take minutes on one prompt; write it without the nested repetition`,
    };
  }
  const issue = parsed.error.issues[0];
  // Key names stay raw (clamped): the field is escaped where it is printed.
  const parts = issue.path.map((p) => clampPoints(String(p), 64));
  let message = sanitizeMessage(issue.message);
  if (issue.code === "unrecognized_keys") {
    parts.push(clampPoints(String(issue.keys[0]), 64));
    message = "unknown key";
  }
  return {
    ok: false,
    field: parts.length === 0 ? "(root)" : parts.join("."),
    message: `${shown}: ${message}`,
  };
}

/**
 * Load `D/config.json` (it may be a symlink; at most 64 KiB). Missing or blank means defaults.
 * Never throws on filesystem state.
 */
export function loadConfig(opts: ProseOptions = {}): ConfigResult {
  const path = resolvePaths(opts).config;
  const failed = (why: string): ConfigResult => ({
    ok: false,
    field: "(file)",
    message: `${sanitize(path)}: ${why}`,
  });
  let bytes: Uint8Array;
  try {
    bytes = readRegular(path, { maxBytes: MAX_CONFIG_BYTES });
  } catch (e) {
    rethrowPermission(e);
    if (e instanceof ReadRefusedError) {
      if (e.refusal === "too-large") return failed("larger than 64 KiB");
      return failed(e.refusal === "not-regular" ? "not a file" : "cannot be read (changed)");
    }
    const code = errorCode(e);
    if (code === "ENOENT") return { ok: true, config: defaultConfig() };
    return failed(`cannot be read (${code ?? "error"})`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return failed("not valid UTF-8");
  }
  return parseConfigText(text, path);
}
