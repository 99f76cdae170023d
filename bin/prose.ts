#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-write --allow-env --allow-net=127.0.0.1,localhost,[::1] --allow-run=git
/**
 * `prose` — the per-user prose override flag (contract: references/prose.md).
 *
 * @module
 */
import { runMain } from "../lib/_cli/run.ts";
import { scriptPathOf } from "../lib/_cli/self.ts";
import { proseErrorFormat, proseMain } from "../lib/prose/cli.ts";

// The running script (source or bundle): install-hooks writes it into the git hooks.
const scriptPath = scriptPathOf(import.meta);

Deno.exit(await runMain(() => proseMain(Deno.args, { scriptPath }), proseErrorFormat));
