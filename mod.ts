/**
 * ctxkit — the library behind the context-scan, context-guard, text-guard and prose scripts.
 *
 * @module
 */

export { CtxkitError } from "./lib/exit.ts";
