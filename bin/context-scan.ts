#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-env --allow-run=git
/**
 * `context-scan` — inventory every file that could enter a Claude Code model context and print one
 * JSON document (spec: references/context-scan.md).
 */
import { runMain } from "../lib/exit.ts";
import { writeErr, writeOutRaw } from "../lib/io.ts";
import { parseScanArgs, SCAN_HELP } from "../lib/scan/cli.ts";
import { renderScanDocument } from "../lib/scan/document.ts";
import { scanContext } from "../lib/scan/scan.ts";

Deno.exit(
  await runMain(() => {
    const command = parseScanArgs(Deno.args);
    if (command.help) {
      writeOutRaw(SCAN_HELP);
      return 0;
    }
    const result = scanContext(command);
    writeErr(...result.warnings);
    writeOutRaw(renderScanDocument(result.document));
    return result.exitCode;
  }),
);
