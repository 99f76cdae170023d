#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-env --allow-run=git
/**
 * `context-scan` — inventory every file that could enter a Claude Code model context and print one
 * JSON document. Contract: `references/context-scan.md`; the command line is `lib/scan/cli.ts`.
 *
 * @module
 */
import { runMain } from "../lib/_cli/run.ts";
import { scanMain } from "../lib/scan/cli.ts";

Deno.exit(await runMain(() => scanMain(Deno.args)));
