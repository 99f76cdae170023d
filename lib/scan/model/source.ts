/**
 * The loading model's vocabulary (`references/context-scan.md#loaded-figures`): one source of the
 * start-up context, where the model looks, and the model's answer.
 *
 * @module
 */

import type { LimitCode, LoadedCategory, Loading, RootLabel, RowKind } from "../schema.ts";

/** Files above this size are not read whole: their shown bytes are estimated by streaming. */
export const LARGE_FILE_BYTES = 8 * 1024 * 1024;

/** One source of the start-up context, as the model sees it. */
export interface LoadedSource {
  /** The file the source comes from. */
  readonly path: string;
  /** Which root it belongs to. */
  readonly root: RootLabel;
  /** The `/context` group it counts in. */
  readonly category: LoadedCategory;
  /** Row kind: `file` for an instruction file, `field:description` for a listing entry. */
  readonly kind: RowKind;
  /** The `loading` a new row for it carries. */
  readonly loading: Loading;
  /** Potential bytes: the file's size, or a listing entry's bytes before any cut. */
  readonly potential: number;
  /** Bytes Claude Code sends for it. */
  loaded: number;
  /** The limits that shaped `loaded`. */
  readonly limits: Set<LimitCode>;
  /** A listing entry's name as the listing writes it. */
  readonly name?: string;
  /** An import: the file that imported it. */
  readonly importedBy?: string;
  /** Part of the user's own configuration (an installed plugin's): reported with `--global`. */
  readonly userLevel?: boolean;
  /** The size of the file it was read from, when the model read that file whole. */
  readonly fileBytes?: number;
  /** An instruction file found as a rule (whatever its real path). */
  readonly rule?: boolean;
}

/** A file of a plugin that takes effect later: a skill's body (per invocation), an agent's (per spawn). */
export interface PluginFile {
  /** The `SKILL.md` or agent file. */
  readonly path: string;
  /** What it is. */
  readonly kind: "skill" | "agent";
  /** The plugin's folder (`${CLAUDE_PLUGIN_ROOT}`). */
  readonly dir: string;
  /** The plugin's data folder (`${CLAUDE_PLUGIN_DATA}`). */
  readonly dataDir: string;
  /** An installed plugin's (reported with `--global`). */
  readonly userLevel: boolean;
  /** Its size, when the model read it (else the row stats it). */
  readonly size?: number;
}

/** Where the model looks. */
export interface ModelRoots {
  /** The project root `R` (Claude Code's working directory). */
  readonly project: string;
  /** The global root `G` (`CLAUDE_CONFIG_DIR`). */
  readonly global: string;
  /** Whether global sources are reported (`--global`); auto-memory always is. */
  readonly includeGlobal: boolean;
  /** `~` for `@~/…` imports. */
  readonly home: string | undefined;
  /** `--plugin-dir` folders, resolved. */
  readonly pluginDirs: readonly string[];
  /** `SLASH_COMMAND_TOOL_CHAR_BUDGET`, when set (a settings file's `env` wins over it). */
  readonly budgetOverride?: string;
  /** The managed policy folder (default: the platform's, `/etc/claude-code` on Linux). */
  readonly managed?: string;
}

/** The model's answer: the sources, and facts the rows of the inventory need. */
export interface LoadingModel {
  /** Every source, in request order. */
  readonly sources: readonly LoadedSource[];
  /** True when AGENTS.md stood in for a missing CLAUDE.md. */
  readonly agentsMdLoaded: boolean;
  /** The auto-memory folder Claude Code reads. */
  readonly memoryDir: string;
  /** Every `SKILL.md` and command file Claude Code read for its listing (listed or not). */
  readonly listingFiles: ReadonlySet<string>;
  /** Every instruction file Claude Code reads, whether it sends any text or not. */
  readonly instructionFiles: ReadonlySet<string>;
  /** Every instruction file `claudeMdExcludes` kept out. */
  readonly excludedFiles: ReadonlySet<string>;
  /** The start directory's physical path: every source is named from it. */
  readonly project: string;
  /** Every plugin's skill and agent files, in plugin order. */
  readonly pluginFiles: readonly PluginFile[];
  /** Claude Code's own built-in skills the budget cuts to their name (no row of ours). */
  readonly builtinsCut: readonly string[];
}

const encoder = new TextEncoder();
// deno-lint-ignore no-control-regex
const ASCII = /^[\x00-\x7f]*$/;
/**
 * UTF-8 bytes of `s`: what a source weighs in the request. ASCII text (nearly every source) is
 * counted without encoding it: one byte a character.
 */
export const utf8 = (s: string): number => ASCII.test(s) ? s.length : encoder.encode(s).length;
