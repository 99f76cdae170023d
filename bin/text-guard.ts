#!/usr/bin/env -S deno run -A
/** `text-guard` — placeholder until its issue lands. */
import { CtxkitError, runMain } from "../lib/exit.ts";

await runMain(() => {
  throw new CtxkitError(2, "❌ text-guard is not implemented yet");
});
