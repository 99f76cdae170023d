#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-write --allow-env --allow-run=git
/**
 * `context-guard` — snapshot / verify / rollback / restore / state for context-slim
 * (`references/context-guard.md#context-guard`).
 *
 * @module
 */
import { runMain } from "../lib/_cli/run.ts";
import { scriptPathOf } from "../lib/_cli/self.ts";
import { GUARD_ERROR_FORMAT } from "../lib/guard/cli_shared.ts";
import { contextGuardMain } from "../lib/guard/context_guard_cli.ts";

const scriptPath = scriptPathOf(import.meta);
Deno.exit(await runMain(() => contextGuardMain(Deno.args, { scriptPath }), GUARD_ERROR_FORMAT));
