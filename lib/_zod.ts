/**
 * zod/mini, the one validator every JSON document read from disk goes through: runtime from the
 * tree-shaken build in `lib/_vendor/zod_mini.js` (`scripts/vendor.ts`), types from the
 * installed `zod/mini` itself. Import it as `import * as z from "../_zod.ts"`.
 *
 * Only the functions listed in `scripts/vendor.ts` (`ZOD_NAMES`) exist at run time; `tests/vendor_test.ts`
 * fails when code calls one that is not there. Why vendored: `references/startup.md#vendored-builds`.
 *
 * @module
 */

// @ts-types="zod/mini"
export * from "./_vendor/zod_mini.js";
