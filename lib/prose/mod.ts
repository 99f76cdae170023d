/**
 * Public API of the prose tool (re-exported by the root `mod.ts`).
 *
 * @module
 */

export {};
