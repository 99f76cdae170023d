/**
 * `deno task bench`: runs every `bench/*_bench.ts` in its own process, one after another, so each
 * measures its own peak memory. Pass names to run a subset: `deno task bench scan guard`.
 */
import { readdirSync } from "node:fs";

const only = Deno.args;
const benches = readdirSync(new URL(".", import.meta.url))
  .filter((name) => name.endsWith("_bench.ts"))
  .filter((name) => only.length === 0 || only.some((o) => name.startsWith(o)))
  .sort();
let failed = 0;
for (const name of benches) {
  console.log(`\n=== ${name}`);
  const { code } = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(name, import.meta.url).pathname],
    stdout: "inherit",
    stderr: "inherit",
  }).outputSync();
  if (code !== 0) failed++;
}
Deno.exit(failed === 0 ? 0 : 1);
