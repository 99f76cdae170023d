#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-env --allow-run=git
/**
 * `context-scan` — inventory every file that could enter a Claude Code model context and print one
 * JSON document. Contract: `references/context-scan.md`; the command line is `lib/scan/cli.ts`.
 *
 * @module
 */
import { runMain } from "../lib/_cli/run.ts";
import { selfOf } from "../lib/_cli/self.ts";
import { scanMain } from "../lib/scan/cli.ts";
// Every other module of the static import graph, named here so that from source Deno loads them
// all in one round: it finds a module's imports only once it has loaded that module, and each
// level of a deep graph costs a round trip (references/startup.md#flat-import-graph).
// tests/startup_graph_test.ts holds this list exactly equal to that graph.
import "../lib/_cli/args.ts";
import "../lib/_cli/output.ts";
import "../lib/_cli/suggest.ts";
import "../lib/_fs/errors.ts";
import "../lib/_fs/inspect.ts";
import "../lib/_fs/read.ts";
import "../lib/_fs/sha256.ts";
import "../lib/errors.ts";
import "../lib/git.ts";
import "../lib/json.ts";
import "../lib/paths.ts";
import "../lib/scan/discovery.ts";
import "../lib/scan/document.ts";
import "../lib/scan/files.ts";
import "../lib/scan/measure.ts";
import "../lib/scan/read_memo.ts";
import "../lib/scan/roots.ts";
import "../lib/scan/scan.ts";
import "../lib/scan/walk.ts";
import "../lib/sort.ts";
import "../lib/text.ts";

const self = selfOf(import.meta, "context-scan");
Deno.exit(await runMain(() => scanMain(Deno.args, self)));
