/**
 * Public API of the prose tool (re-exported by the root `mod.ts`): what a skill author needs to
 * honour the per-user prose override flag (`references/prose.md#library-api`).
 *
 * Every call is synchronous and never throws because of file-system state (a relative `root` is a
 * `TypeError`: misuse). Each takes `{root?, now?}`: `root` replaces `$CELLM_DIR`/`$HOME/.cellm`,
 * `now` injects the clock (epoch-ms) for deterministic TTLs.
 *
 * Consumer contract: call {@linkcode readProseFlag}, then {@linkcode resolveLevel}, before
 * rendering; when the flag is `turn`-scoped, call {@linkcode consumeTurn} after the response.
 * Write the flag only through {@linkcode writeProseFlag} and {@linkcode clearProseFlag}.
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

export type { FlagState, ProseFlag, ProseLevel, ReasonCode } from "./schema.ts";
export {
  clearProseFlag,
  type FlagRead,
  type IoFailure,
  type ProseOptions,
  readProseFlag,
  resolveLevel,
  writeProseFlag,
} from "./flag.ts";
export { type ConsumeResult, consumeTurn } from "./ops.ts";
