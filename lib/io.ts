/** TRANSITION(issue 11): moved to `lib/_cli/output.ts`; removed when every tool is migrated. @module */
export { writeErr, writeOut, writeOutRaw } from "./_cli/output.ts";
