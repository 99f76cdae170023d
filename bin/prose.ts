#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-write --allow-env --allow-net=127.0.0.1,localhost,[::1] --allow-run=git
/**
 * `prose` — the per-user prose override flag (contract: references/prose.md).
 *
 * @module
 */
import { runMain } from "../lib/_cli/run.ts";
import { selfOf } from "../lib/_cli/self.ts";
import { proseErrorFormat, proseMain } from "../lib/prose/cli.ts";
// Every other module of the static import graph, named here so that from source Deno loads them
// all in one round: it finds a module's imports only once it has loaded that module, and each
// level of a deep graph costs a round trip (references/startup.md#flat-import-graph).
// tests/startup_graph_test.ts holds this list exactly equal to that graph.
import "../lib/_cli/args.ts";
import "../lib/_cli/input.ts";
import "../lib/_cli/output.ts";
import "../lib/_cli/suggest.ts";
import "../lib/_fs/dirs.ts";
import "../lib/_fs/errors.ts";
import "../lib/_fs/inspect.ts";
import "../lib/_fs/read.ts";
import "../lib/_fs/sha256.ts";
import "../lib/_fs/sweep.ts";
import "../lib/_fs/write.ts";
import "../lib/_zod.ts";
import "../lib/errors.ts";
import "../lib/faults.ts";
import "../lib/git.ts";
import "../lib/paths.ts";
import "../lib/prose/cli_args.ts";
import "../lib/prose/config.ts";
import "../lib/prose/errors.ts";
import "../lib/prose/flag.ts";
import "../lib/prose/sanitize.ts";
import "../lib/prose/schema.ts";
import "../lib/prose/status.ts";
import "../lib/prose/trigger.ts";
import "../lib/random.ts";
import "../lib/sort.ts";
import "../lib/text.ts";
import "../lib/_vendor/zod_mini.js";
import "../lib/_vendor/jsonc_parser.js";

// The running script (source or bundle): install-hooks writes it into the git hooks.
const self = selfOf(import.meta, "prose");

Deno.exit(await runMain(() => proseMain(Deno.args, self), proseErrorFormat));
