/** TRANSITION(issue 11): moved to `lib/_cli/args.ts`; removed when every tool is migrated. @module */
export { ArgCursor } from "./_cli/args.ts";
