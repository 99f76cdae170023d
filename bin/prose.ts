#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-write --allow-env --allow-net=127.0.0.1,localhost --allow-run=git
/**
 * `prose` — the per-user prose override flag (spec: references/prose.md).
 *
 * `CTXKIT_NOW_MS` (integer epoch-ms) replaces the clock; it exists for deterministic TTL tests.
 */
import { fileURLToPath } from "node:url";
import { CtxkitError, runMain } from "../lib/exit.ts";
import { internalLine, permissionLine, proseMain } from "../lib/prose/cli.ts";

function clock(): number {
  const fixed = Deno.env.get("CTXKIT_NOW_MS");
  if (fixed === undefined || fixed === "") return Date.now();
  if (!/^[1-9][0-9]{0,15}$/.test(fixed)) {
    throw new CtxkitError(
      2,
      "PROSE-ERROR: code=env field=CTXKIT_NOW_MS must be an integer epoch-ms",
    );
  }
  return Number(fixed);
}

Deno.exit(
  await runMain(
    () => proseMain(Deno.args, { scriptPath: fileURLToPath(import.meta.url), now: clock() }),
    { permissionLine, internalLine },
  ),
);
