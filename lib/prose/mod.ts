/**
 * Public API of the prose tool (re-exported by the root `mod.ts`): the per-user prose override flag
 * that quantization-aware skills check before rendering.
 *
 * The API is synchronous and never throws because of filesystem state (only `TypeError` on misuse,
 * such as a relative `root`). Every call takes `{root?, now?}`: `root` replaces
 * `$CELLM_DIR`/`$HOME/.cellm`, `now` injects the clock (epoch-ms) for deterministic TTLs.
 *
 * Consumer contract: call {@linkcode readProseFlag}, then {@linkcode resolveLevel}, before
 * rendering; when the flag is `turn`-scoped, call {@linkcode consumeTurn} after the response.
 *
 * @example
 * ```ts ignore
 * import { consumeTurn, readProseFlag, resolveLevel } from "./mod.ts";
 * const read = readProseFlag();
 * const level = resolveLevel(read); // "off" → default quantization
 * // … render the response at `level` …
 * if (read.state === "active" && read.flag?.ttl.unit === "turn") consumeTurn();
 * ```
 *
 * @module
 */

export {
  FLAG_STATES,
  type FlagState,
  isExpired,
  issueField,
  LEVELS,
  MAX_FLAG_BYTES,
  type ParseOutcome,
  type ParseSchema,
  type ProseFlag,
  ProseFlagSchema,
  type ProseLevel,
  type ProseSource,
  type ProseTtl,
  type ReasonCode,
  type SchemaIssue,
  serializeFlag,
  SOURCES,
  TTL_UNITS,
  type TtlUnit,
} from "./schema.ts";
export { type ProseOptions, type ProsePaths, ProseRootError, resolvePaths } from "./paths.ts";
export { renderValue, sanitize } from "./sanitize.ts";
export {
  clearProseFlag,
  type ClearResult,
  type FlagRead,
  type IoFailure,
  readProseFlag,
  type WriteOptions,
  writeProseFlag,
  type WriteResult,
} from "./flag_io.ts";
export {
  type ConfigResult,
  DEFAULT_TRIGGER_PATTERN,
  defaultConfig,
  loadConfig,
  loopbackOrigin,
  parseDuration,
  type ProseConfig,
  ProseConfigSchema,
} from "./config.ts";
export { matchTrigger, type TriggerMatch } from "./trigger.ts";
export {
  activate,
  type ActivateParams,
  type ActivationPlan,
  type ConsumeResult,
  consumeTurn,
  deactivate,
  endBlock,
  endSession,
  type OpOptions,
  type OpResult,
  type OpResultWord,
  planActivation,
  resolveLevel,
  setLevel,
} from "./ops.ts";
export {
  type MirrorKeyName,
  type MirrorReport,
  STATUS_SCHEMA_ID,
  type StatusDocument,
  statusDocument,
  StatusDocumentSchema,
  statusLine,
  statusSentence,
} from "./status.ts";
// --- backend (prose serve, spec §9) ---
export {
  type ErrorBody,
  ErrorBodySchema,
  MAX_BODY_BYTES,
  type ToggleRequest,
  ToggleRequestSchema,
  type ToggleResponse,
  ToggleResponseSchema,
} from "./server_protocol.ts";
export {
  type DriftResult,
  expectedMirror,
  MIRROR_DEFAULTS,
  MIRROR_KEYS,
  mirrorDrift,
  type MirrorKey,
  type MirrorRows,
  type MirrorSource,
  type MirrorValues,
} from "./mirror.ts";
