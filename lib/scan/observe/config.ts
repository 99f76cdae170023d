/**
 * What an observation lets Claude Code see of the user's global configuration, and what it checks
 * there first (`references/context-scan.md#what-an-observation-touches`):
 *
 * - a private copy of the parts of `CLAUDE_CONFIG_DIR` (or `~/.claude`) that shape loading, in a
 *   fresh 0700 temporary directory, so Claude Code's own writes (`.claude.json`, `backups/`,
 *   `sessions/`, `projects/<slug>/`, `plugins/store/`…) land there and never in the real one;
 *   size-capped, never following a link out of the real directory, removed on every path;
 * - the settings files that could send the request elsewhere, read through
 *   `ClaudeSettingsSchema`, for the run that has no network namespace.
 *
 * @module
 */

import { isAbsent, osReason } from "../../_fs/errors.ts";
import { readRegular } from "../../_fs/read.ts";
import { createFileExclusive } from "../../_fs/write.ts";
import { ClaudeSettingsSchema } from "../claude_schema.ts";

/** What of the global root is copied (relative paths; `projects/<slug>/memory` is added per slug). */
export const COPIED_ENTRIES: readonly string[] = [
  "CLAUDE.md",
  "rules",
  "skills",
  "commands",
  "agents",
  "output-styles",
  "settings.json",
  "plugins",
];

/** The most bytes the private copy holds; files beyond it are left out with a warning. */
export const MAX_COPY_BYTES = 64 * 1024 * 1024;
/** The most entries (files and directories) the private copy holds. */
export const MAX_COPY_ENTRIES = 20_000;

/** A private copy of the global root. */
export interface PrivateConfig {
  /** The directory given to Claude Code as `CLAUDE_CONFIG_DIR` (`<temp>/config`). */
  readonly dir: string;
  /** The directory given to Claude Code as `TMPDIR` (`<temp>/tmp`): it writes there too. */
  readonly tmp: string;
  /** One line per entry left out (a link leading outside, the size cap, an unreadable file). */
  readonly warnings: readonly string[];
  /** `path` with the temporary directory replaced by the real global root. */
  realPath(path: string): string;
  /** Remove the temporary directory (never throws). */
  remove(): void;
}

function realOrUndefined(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}

function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}

/**
 * Copy what shapes loading from `global` (the real global root, which may be absent) into a fresh
 * temporary directory. `memorySlugs` name the per-project memory folders to copy. A link is
 * followed only when its target lies inside the real global root; anything else that is not a
 * regular file or a directory is skipped.
 */
export function makePrivateConfig(global: string, memorySlugs: readonly string[]): PrivateConfig {
  const top = Deno.makeTempDirSync({ prefix: "ctxkit-observe-" });
  const dir = `${top}/config`;
  const tmp = `${top}/tmp`;
  const warnings: string[] = [];
  const remove = () => {
    try {
      Deno.removeSync(top, { recursive: true });
    } catch { /* already gone */ }
  };
  let realDir = dir;
  try {
    Deno.mkdirSync(dir, { mode: 0o700 });
    Deno.mkdirSync(tmp, { mode: 0o700 });
    realDir = realOrUndefined(dir) ?? dir;
    const realGlobal = realOrUndefined(global);
    if (realGlobal !== undefined) {
      const budget = { bytes: MAX_COPY_BYTES, entries: MAX_COPY_ENTRIES };
      const copy = (from: string, to: string, seen: Set<string>) => {
        let info: Deno.FileInfo;
        try {
          info = Deno.lstatSync(from);
        } catch (e) {
          if (!isAbsent(e)) warnings.push(`not copied: ${from}: ${osReason(e)}`);
          return;
        }
        if (info.isSymlink) {
          const target = realOrUndefined(from);
          if (target === undefined) return; // dangling: Claude Code would see nothing either
          if (!inside(target, realGlobal)) {
            warnings.push(`not copied: ${from} (a link leading outside ${global})`);
            return;
          }
          info = Deno.statSync(target);
        }
        if (budget.entries-- <= 0) {
          warnings.push(`not copied: ${from} (over ${MAX_COPY_ENTRIES} entries)`);
          return;
        }
        if (info.isDirectory) {
          const real = realOrUndefined(from) ?? from;
          if (seen.has(real)) return; // a loop through links inside the global root
          Deno.mkdirSync(to, { mode: 0o700 });
          let names: string[];
          try {
            names = [...Deno.readDirSync(from)].map((e) => e.name).sort();
          } catch (e) {
            warnings.push(`not copied: ${from}: ${osReason(e)}`);
            return;
          }
          const inner = new Set(seen).add(real);
          for (const name of names) copy(`${from}/${name}`, `${to}/${name}`, inner);
        } else if (info.isFile) {
          if (info.size > budget.bytes) {
            warnings.push(`not copied: ${from} (over the ${MAX_COPY_BYTES}-byte copy cap)`);
            return;
          }
          let bytes: Uint8Array;
          try {
            bytes = readRegular(from, { follow: true });
          } catch (e) {
            warnings.push(`not copied: ${from}: ${osReason(e)}`);
            return;
          }
          budget.bytes -= bytes.length;
          createFileExclusive(to, bytes, 0o600, true, false);
        }
      };
      const entries = [
        ...COPIED_ENTRIES,
        ...memorySlugs.map((slug) => `projects/${slug}/memory`),
      ];
      for (const entry of entries) {
        const slash = entry.lastIndexOf("/");
        if (slash !== -1) Deno.mkdirSync(`${dir}/${entry.slice(0, slash)}`, { recursive: true });
        copy(`${global}/${entry}`, `${dir}/${entry}`, new Set());
      }
    }
  } catch (e) {
    remove();
    throw e;
  }
  const prefixes = [...new Set([dir, realDir])];
  return {
    dir,
    tmp,
    warnings,
    realPath(path: string): string {
      for (const prefix of prefixes) {
        if (path === prefix) return global;
        if (path.startsWith(`${prefix}/`)) return `${global}${path.slice(prefix.length)}`;
      }
      return path;
    },
    remove,
  };
}

// Variables in a settings `env` that could send the request elsewhere or authenticate it.
const REDIRECTING_ENV =
  /^(ANTHROPIC_|CLAUDE_CODE_USE_|AWS_|GOOGLE_|CLOUD_ML_|VERTEX_)|^(https?|all|no)_proxy$/i;
const HELPERS = [
  "apiKeyHelper",
  "awsAuthRefresh",
  "awsCredentialExport",
  "gcpAuthRefresh",
  "otelHeadersHelper",
] as const;

/**
 * Why the settings file at `path` could send the request somewhere other than the recorder (one
 * reason per finding, empty when it cannot): an `env` entry that sets an `ANTHROPIC_*`, cloud
 * provider or proxy variable, a credential helper, or a file that exists but cannot be read or
 * parsed (then nothing can be proven). An absent file gives none.
 */
export function redirectReasons(path: string): string[] {
  let bytes: Uint8Array;
  try {
    bytes = readRegular(path, { follow: true });
  } catch (e) {
    if (isAbsent(e)) return [];
    return [`cannot be read (${osReason(e)})`];
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return ["is not valid JSON"];
  }
  const parsed = ClaudeSettingsSchema.safeParse(value);
  if (!parsed.success) return ["is not a settings object"];
  const reasons: string[] = [];
  for (const name of Object.keys(parsed.data.env ?? {})) {
    if (REDIRECTING_ENV.test(name)) reasons.push(`sets env ${name}`);
  }
  for (const helper of HELPERS) {
    if (parsed.data[helper] !== undefined) reasons.push(`sets ${helper}`);
  }
  return reasons;
}

/**
 * The settings files Claude Code reads for a run in `root` with the global root `global`: the
 * managed file, the user's, the project's shared and local ones.
 */
export function settingsFiles(root: string, global: string): string[] {
  return [
    "/etc/claude-code/managed-settings.json",
    `${global}/settings.json`,
    `${root}/.claude/settings.json`,
    `${root}/.claude/settings.local.json`,
  ];
}
