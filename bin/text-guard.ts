#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-write --allow-env --allow-run=git
/**
 * `text-guard` — preservation guard for in-place text optimization
 * (`references/context-guard.md#text-guard`).
 *
 * @module
 */
import { runMain } from "../lib/_cli/run.ts";
import { selfOf } from "../lib/_cli/self.ts";
import { GUARD_ERROR_FORMAT } from "../lib/guard/cli_shared.ts";
import { textGuardMain } from "../lib/guard/text_guard_cli.ts";
// Every other module of the static import graph, named here so that from source Deno loads them
// all in one round: it finds a module's imports only once it has loaded that module, and each
// level of a deep graph costs a round trip (references/startup.md#flat-import-graph).
// tests/startup_graph_test.ts holds this list exactly equal to that graph.
import "../lib/_cli/args.ts";
import "../lib/_cli/output.ts";
import "../lib/_cli/suggest.ts";
import "../lib/_fs/errors.ts";
import "../lib/_fs/read.ts";
import "../lib/_fs/sha256.ts";
import "../lib/errors.ts";
import "../lib/git.ts";
import "../lib/guard/errors.ts";
import "../lib/guard/force_command.ts";
import "../lib/guard/report.ts";
import "../lib/guard/tokens.ts";
import "../lib/guard/tokens_ext.ts";
import "../lib/paths.ts";
import "../lib/shell.ts";
import "../lib/sort.ts";
import "../lib/text.ts";

const self = selfOf(import.meta, "text-guard");
Deno.exit(await runMain(() => textGuardMain(Deno.args, self), GUARD_ERROR_FORMAT));
