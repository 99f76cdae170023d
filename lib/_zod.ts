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

/**
 * A schema built the first time it is used. zod builds a schema eagerly, and on the hook path
 * (one short process per prompt) building every schema a module defines costs milliseconds that
 * a command mostly never needs (`references/startup.md#deferred-schemas`). The returned proxy
 * forwards every operation to the schema, so it is used exactly like one: `S.safeParse(x)`,
 * `z.pick(S, …)`, `z.infer<typeof S>`, nested in another schema.
 *
 * @example
 * ```ts ignore
 * import * as z from "./_zod.ts";
 * export const FlagSchema = z.deferred(() => z.strictObject({ level: z.string() }));
 * FlagSchema.safeParse({ level: "full" }); // built here, once
 * ```
 */
export function deferred<T extends object>(build: () => T): T {
  let built: T | undefined;
  const schema = (): T => (built ??= build());
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(schema(), key),
    set: (_, key, value) => Reflect.set(schema(), key, value),
    has: (_, key) => Reflect.has(schema(), key),
    ownKeys: () => Reflect.ownKeys(schema()),
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(schema(), key);
      // A proxy may not report a property of its (empty) target as non-configurable.
      return d === undefined ? undefined : { ...d, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(schema()),
  });
}
