#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-write --allow-env --allow-run=git
/**
 * `context-guard` — snapshot / verify / rollback / restore / state for context-slim
 * (`references/context-guard.md#context-guard`).
 *
 * @module
 */
import { runMain } from "../lib/_cli/run.ts";
import { selfOf } from "../lib/_cli/self.ts";
import { GUARD_ERROR_FORMAT } from "../lib/guard/cli_shared.ts";
import { contextGuardMain } from "../lib/guard/context_guard_cli.ts";
// Every other module of the static import graph, named here so that from source Deno loads them
// all in one round: it finds a module's imports only once it has loaded that module, and each
// level of a deep graph costs a round trip (references/startup.md#flat-import-graph).
// tests/startup_graph_test.ts holds this list exactly equal to that graph.
import "../lib/_cli/args.ts";
import "../lib/_cli/output.ts";
import "../lib/_cli/suggest.ts";
import "../lib/_fs/dirs.ts";
import "../lib/_fs/errors.ts";
import "../lib/_fs/inspect.ts";
import "../lib/_fs/owner.ts";
import "../lib/_fs/read.ts";
import "../lib/_fs/sha256.ts";
import "../lib/_fs/sweep.ts";
import "../lib/_fs/write.ts";
import "../lib/_vendor/zod_mini.js";
import "../lib/_zod.ts";
import "../lib/errors.ts";
import "../lib/faults.ts";
import "../lib/git.ts";
import "../lib/guard/errors.ts";
import "../lib/guard/force_command.ts";
import "../lib/guard/manifest.ts";
import "../lib/guard/report.ts";
import "../lib/guard/roots.ts";
import "../lib/guard/run_dir.ts";
import "../lib/guard/run_owner.ts";
import "../lib/guard/runs.ts";
import "../lib/guard/selection.ts";
import "../lib/guard/tokens.ts";
import "../lib/guard/tokens_ext.ts";
import "../lib/json.ts";
import "../lib/paths.ts";
import "../lib/random.ts";
import "../lib/shell.ts";
import "../lib/sort.ts";
import "../lib/text.ts";

const self = selfOf(import.meta, "context-guard");
Deno.exit(await runMain(() => contextGuardMain(Deno.args, self), GUARD_ERROR_FORMAT));
