#!/usr/bin/env -S deno run -A
/** `prose` — placeholder until its issue lands. */
import { CtxkitError, runMain } from "../lib/exit.ts";

await runMain(() => {
  throw new CtxkitError(2, "❌ prose is not implemented yet");
});
