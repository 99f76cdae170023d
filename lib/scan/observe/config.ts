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
import { existsNoFollow } from "../../_fs/inspect.ts";
import { ClaudeSettingsSchema } from "../claude_schema.ts";
import { type LoadingModel, memoryFolder } from "../claude_model.ts";
import { placesOf } from "../model/places.ts";
import { memorySlugs } from "../roots.ts";

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

/** What the private copy holds besides {@linkcode COPIED_ENTRIES}, and what it leaves out. */
export interface CopyPlan {
  /** The per-project memory folders to copy (`projects/<slug>/memory`). */
  readonly memorySlugs: readonly string[];
  /** More paths relative to the global root a plain run reads (a global file's imports). */
  readonly extra?: readonly string[];
  /** Entries of {@linkcode COPIED_ENTRIES} to leave out (read through the project instead). */
  readonly omit?: readonly string[];
}

/**
 * What to copy for a run in `root` with the global root `global`, so the observation sees what a
 * plain run sees (`references/context-scan.md#what-an-observation-touches`): the memory folders of
 * both of `root`'s slugs and of the slug Claude Code uses (its git root's or main checkout's, from
 * the physical path); every file the loading model reads below the global root; and, when the global
 * root is a `.claude` folder of `root` or a parent (HOME opened as the project), not its
 * `CLAUDE.md` and `rules/`: a plain run reads those once, through the project.
 */
export function copyPlan(root: string, global: string, model: LoadingModel): CopyPlan {
  const realGlobal = realOrUndefined(global) ?? global;
  const places = placesOf(root);
  const slug = memoryFolder(global, places).slice(`${global}/projects/`.length, -"/memory".length);
  const extra: string[] = [];
  for (const path of model.instructionFiles) {
    const real = realOrUndefined(path) ?? path;
    if (inside(real, realGlobal) && real !== realGlobal) {
      extra.push(real.slice(realGlobal.length + 1));
    }
  }
  const ownDotClaude = places.dirs.some((d) =>
    realOrUndefined(`${d === "/" ? "" : d}/.claude`) === realGlobal
  );
  return {
    memorySlugs: [...new Set([...memorySlugs(root), slug])],
    extra,
    omit: ownDotClaude ? ["CLAUDE.md", "rules"] : [],
  };
}

/**
 * Copy what shapes loading from `global` (the real global root, which may be absent) into a fresh
 * temporary directory, as `plan` says. A link is followed only when its target lies inside the real
 * global root; anything else that is not a regular file or a directory is skipped. Absolute
 * `claudeMdExcludes` naming the global root are made to name the copy too.
 */
export function makePrivateConfig(global: string, plan: CopyPlan): PrivateConfig {
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
      const omit = new Set(plan.omit ?? []);
      const entries = [
        ...COPIED_ENTRIES.filter((e) => !omit.has(e)),
        ...plan.memorySlugs.map((slug) => `projects/${slug}/memory`),
        ...(plan.extra ?? []).filter((e) => !omit.has(e.split("/")[0])),
      ];
      for (const entry of entries) {
        // Each path once (an import inside a copied folder is there already).
        if (existsNoFollow(`${dir}/${entry}`)) continue;
        const slash = entry.lastIndexOf("/");
        if (slash !== -1) Deno.mkdirSync(`${dir}/${entry.slice(0, slash)}`, { recursive: true });
        copy(`${global}/${entry}`, `${dir}/${entry}`, new Set());
      }
      excludesInCopy(`${dir}/settings.json`, [global, realGlobal], dir);
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

/**
 * The copied `settings.json` with every absolute `claudeMdExcludes` pattern below one of `roots`
 * (the global root as given and its real path) also written for the copy `dir`: Claude Code reads
 * the copy's files by the copy's paths. Nothing else of the file changes; a file that cannot be read
 * as settings is left as it is.
 */
function excludesInCopy(path: string, roots: readonly string[], dir: string): void {
  let text: string;
  try {
    text = new TextDecoder().decode(readRegular(path));
  } catch {
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return;
  }
  const parsed = ClaudeSettingsSchema.safeParse(value);
  const patterns = parsed.success ? parsed.data.claudeMdExcludes : undefined;
  if (patterns === undefined) return;
  const added = patterns.flatMap((p) =>
    roots.flatMap((r) => (p === r || p.startsWith(`${r}/`) ? [`${dir}${p.slice(r.length)}`] : []))
  );
  if (added.length === 0) return;
  const rewritten = {
    ...(value as Record<string, unknown>),
    claudeMdExcludes: [...patterns, ...added],
  };
  Deno.removeSync(path);
  createFileExclusive(
    path,
    new TextEncoder().encode(JSON.stringify(rewritten)),
    0o600,
    true,
    false,
  );
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
