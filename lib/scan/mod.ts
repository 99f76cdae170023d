/**
 * Public API of the scan tool (re-exported by the root `mod.ts`).
 *
 * @module
 */

export * from "./schema.ts";
