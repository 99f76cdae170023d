#!/usr/bin/env -S deno run -A
/** `context-scan` — placeholder until its issue lands. */
import { CtxkitError, runMain } from "../lib/exit.ts";

await runMain(() => {
  throw new CtxkitError(2, "❌ context-scan is not implemented yet");
});
