#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-write --allow-env --allow-run=git
/**
 * `text-guard` — preservation guard for in-place text optimization
 * (`references/context-guard.md#text-guard`).
 *
 * @module
 */
import { runMain } from "../lib/_cli/run.ts";
import { GUARD_ERROR_FORMAT } from "../lib/guard/cli_shared.ts";
import { textGuardMain } from "../lib/guard/text_guard_cli.ts";

Deno.exit(await runMain(() => textGuardMain(Deno.args), GUARD_ERROR_FORMAT));
