/**
 * ctxkit — the library behind the context-scan, context-guard, text-guard and prose scripts.
 *
 * @module
 */

export { CtxkitError } from "./lib/exit.ts";
export * from "./lib/scan/mod.ts";
export * from "./lib/guard/mod.ts";
export * from "./lib/prose/mod.ts";
