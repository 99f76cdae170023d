/**
 * `deno task bundle`: one self-contained `dist/<tool>.js` per tool (works offline once the npm
 * packages are installed; `deno bundle` fetches its esbuild from the npm registry on first use).
 *
 * Each bundle is minified, then rewritten so that the functions its training runs call are
 * compiled with the script and land in Deno's code cache (`scripts/_eager.ts`,
 * `references/startup.md#eager-functions`). The rewrite is checked: the rewritten bundle runs the
 * training steps again in a fresh fixture and must exit and print exactly as the plain one did.
 * `--no-eager` leaves the minified bundles as esbuild wrote them.
 *
 * Run a bundle as `./dist/<tool>.js …` (its shebang: the bin's least privileges and `--no-config`,
 * `scripts/_bundle_file.ts`), or `deno run <flags> --no-config dist/<tool>.js …`.
 */
import { calledFunctions, eagerCompile, readCoverage } from "./_eager.ts";
import { type StepOutcome, train } from "./_training.ts";
import { type Tool, TOOLS } from "./tools.ts";
import { writeFileAtomic } from "../lib/_fs/write.ts";
import { BUNDLE_MODE, bundleTool } from "./_bundle_file.ts";

function same(a: StepOutcome[], b: StepOutcome[]): string | undefined {
  for (let i = 0; i < a.length; i++) {
    if (a[i].code !== b[i]?.code || a[i].stdout !== b[i]?.stdout) {
      return `${a[i].args.join(" ")}: exit ${a[i].code} → ${b[i]?.code}\n` +
        `--- plain\n${a[i].stdout}--- eager\n${b[i]?.stdout}`;
    }
  }
  return undefined;
}

/** Rewrite `dist/<tool>.js` for eager compilation of what its training runs call. */
async function makeEager(tool: Tool): Promise<string> {
  const script = Deno.realPathSync(`dist/${tool}.js`);
  const covDir = Deno.makeTempDirSync({ prefix: "ctxkit-coverage-" });
  try {
    const plain = await train(tool, script, [`--coverage=${covDir}`]);
    const failed = plain.find((s) => s.code !== 0);
    if (failed) throw new Error(`training run ${failed.args.join(" ")} exited ${failed.code}`);
    const source = Deno.readTextFileSync(script);
    const result = eagerCompile(
      source,
      calledFunctions(readCoverage(covDir, script), source.length),
    );
    writeFileAtomic(script, result.source, { mode: BUNDLE_MODE, exactMode: true });
    const mismatch = same(plain, await train(tool, script));
    if (mismatch !== undefined) {
      writeFileAtomic(script, source, { mode: BUNDLE_MODE, exactMode: true });
      throw new Error(`the eager ${tool} bundle behaves differently:\n${mismatch}`);
    }
    return `${result.wrapped} wrapped, ${result.hoisted} hoisted`;
  } finally {
    Deno.removeSync(covDir, { recursive: true });
  }
}

const eager = !Deno.args.includes("--no-eager");
Deno.mkdirSync("dist", { recursive: true });
for (const tool of TOOLS) {
  // Runnable as ./dist/<tool>.js: the bin's least-privilege shebang plus --no-config, mode 0755.
  try {
    bundleTool(Deno.cwd(), tool, `dist/${tool}.js`);
  } catch (e) {
    console.error(`❌ ${e instanceof Error ? e.message : String(e)}`);
    Deno.exit(1);
  }
  if (!eager) {
    console.log(`dist/${tool}.js`);
    continue;
  }
  try {
    console.log(`dist/${tool}.js (eager: ${await makeEager(tool)})`);
  } catch (e) {
    console.error(`❌ ${e instanceof Error ? e.message : String(e)}`);
    Deno.exit(1);
  }
}
