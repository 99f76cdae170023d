/**
 * Public API of the guard tool (re-exported by the root `mod.ts`).
 *
 * @module
 */

export {};
