/**
 * The wrapper script `deno task install-skill` writes in place of a skill's bash script
 * (`references/migration.md#what-the-installer-changes`): `scripts/<tool>.sh`, POSIX `sh`, that runs
 * the bundle `<tool>.js` beside it with the first runtime it finds — a compiled binary `<tool>`
 * beside it, `deno` on `PATH`, `npx --yes deno@<pinned>` where npm is installed — or says in one
 * line what to install and exits 127. The skill's `bash "$S/<tool>.sh" …` calls, exit codes and
 * lines stay as they are.
 *
 * @module
 */

import { shellQuote } from "../lib/shell.ts";
import type { Tool } from "./tools.ts";

/** The first line of every wrapper the installer writes: how a re-install knows its own files. */
export const WRAPPER_MARK = "# ctxkit wrapper, written by `deno task install-skill`";

/** What a wrapper is made of. */
export interface WrapperSpec {
  /** The tool. */
  tool: Tool;
  /** ctxkit's version (`deno.json`), recorded in the wrapper. */
  version: string;
  /** The Deno version `npx` runs (`package.json`'s pinned `deno`). */
  denoVersion: string;
  /** The bundle's least-privilege `deno run` flags (its shebang's, `--no-config` included). */
  flags: readonly string[];
  /**
   * The skill never checkpoints its writes (a released skill): its runs are snapshot-trust
   * (`references/context-guard.md#snapshot-trust`). Only the guards take runs.
   */
  snapshotTrust: boolean;
}

/** The `deno run` flags of a bundle's shebang (`#!/usr/bin/env -S deno run <flags>`). */
export function shebangFlags(bundle: string): string[] {
  const first = bundle.slice(0, bundle.indexOf("\n"));
  const prefix = "#!/usr/bin/env -S deno run ";
  if (!first.startsWith(prefix)) throw new Error(`not a ctxkit bundle: ${first.slice(0, 80)}`);
  return first.slice(prefix.length).split(" ").filter((w) => w !== "");
}

/**
 * The wrapper's text. It uses no program but `sh`'s own builtins until it execs the runtime, so it
 * runs on any `PATH`; without a runtime it prints what to install, the exit line, and exits 127.
 */
export function wrapperScript(spec: WrapperSpec): string {
  const { tool, version, denoVersion } = spec;
  const trusting = spec.snapshotTrust && (tool === "context-guard" || tool === "text-guard");
  const flags = spec.flags.includes("--no-config") ? spec.flags : [...spec.flags, "--no-config"];
  const run = ["run", ...flags].map((w) => shellQuote(w)).join(" ");
  const trust = trusting
    ? [
      "# This skill never checkpoints its writes: its runs are snapshot-trust, so a failed gate,",
      "# rollback and restore put the snapshot back and keep the replaced bytes in the run's",
      "# displaced/ (references/context-guard.md#snapshot-trust).",
      "CTXKIT_GUARD_TRUST=snapshot",
      "export CTXKIT_GUARD_TRUST",
    ]
    : [];
  return [
    "#!/bin/sh",
    WRAPPER_MARK,
    `# ${tool}: ctxkit ${version}. Runs ${tool}.js beside this file with the first runtime found:`,
    `# a compiled binary ${tool} beside it, deno on PATH, or npx --yes deno@${denoVersion}.`,
    ...trust,
    "# --help and --version name this wrapper (references/cli.md#the-form-it-runs-as).",
    'CTXKIT_INVOKED_AS="$0"',
    "export CTXKIT_INVOKED_AS",
    "here=${0%/*}",
    '[ "$here" = "$0" ] && here=.',
    `if [ -f "$here/${tool}" ] && [ -x "$here/${tool}" ]; then exec "$here/${tool}" "$@"; fi`,
    `set -- ${run} "$here/${tool}.js" "$@"`,
    'if command -v deno >/dev/null 2>&1; then exec deno "$@"; fi',
    "if command -v npx >/dev/null 2>&1; then",
    "  NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_LOGLEVEL=error",
    "  export NPM_CONFIG_UPDATE_NOTIFIER NPM_CONFIG_FUND NPM_CONFIG_LOGLEVEL",
    `  exec npx --yes deno@${denoVersion} "$@"`,
    "fi",
    `echo "❌ ${tool} needs a runtime: install Deno 2 (https://deno.com) or Node.js with npm (npx then runs deno@${denoVersion})" >&2`,
    '[ "${CTXKIT_EXIT_LINE:-1}" = 0 ] || echo "❌ FAILED EXIT:127" >&2',
    "exit 127",
    "",
  ].join("\n");
}
