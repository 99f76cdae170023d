/**
 * Each bin imports every module of its static import graph itself, so that from source Deno loads
 * a tool's start-up path in one round (`references/startup.md#flat-import-graph`): the list in
 * `bin/<tool>.ts` must be complete (nothing deeper than one import from the bin) and exact (it adds
 * no module the code itself does not load).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO } from "./_helpers.ts";
import * as z from "../lib/_zod.ts";

const Info = z.object({
  roots: z.array(z.string()),
  modules: z.array(z.looseObject({
    specifier: z.string(),
    dependencies: z.optional(z.array(z.looseObject({
      code: z.optional(z.looseObject({ specifier: z.string() })),
      isDynamic: z.optional(z.boolean()),
    }))),
  })),
});

/** `deno info --json` of `file`: the direct static imports of each local module. */
function staticImports(file: string): Map<string, string[]> {
  const out = new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--config", join(REPO, "deno.json"), file],
    stdout: "piped",
    stderr: "inherit",
  }).outputSync();
  assert.equal(out.code, 0);
  const info = Info.parse(JSON.parse(new TextDecoder().decode(out.stdout)));
  const imports = new Map<string, string[]>();
  for (const m of info.modules) {
    if (!m.specifier.startsWith("file:")) continue;
    imports.set(
      m.specifier,
      (m.dependencies ?? []).flatMap((d) =>
        d.isDynamic || d.code === undefined || !d.code.specifier.startsWith("file:")
          ? []
          : [d.code.specifier]
      ),
    );
  }
  return imports;
}

/** Every local module `root` loads statically, `root` included. */
function staticGraph(imports: Map<string, string[]>, root: string): Set<string> {
  const seen = new Set([root]);
  const todo = [root];
  for (let next = todo.pop(); next !== undefined; next = todo.pop()) {
    for (const child of imports.get(next) ?? []) {
      if (!seen.has(child)) {
        seen.add(child);
        todo.push(child);
      }
    }
  }
  return seen;
}

function relative(specifiers: Iterable<string>): string[] {
  const base = pathToFileURL(REPO).href + "/";
  return [...specifiers].map((s) => s.slice(base.length)).sort();
}

/** What each bin calls: the modules it imports for names, whose graphs are the whole list. */
const ENTRIES: Record<string, string[]> = {
  "context-scan": ["lib/_cli/run.ts", "lib/scan/cli.ts"],
  "context-guard": ["lib/_cli/run.ts", "lib/_cli/self.ts", "lib/guard/context_guard_cli.ts"],
  "text-guard": ["lib/_cli/run.ts", "lib/guard/text_guard_cli.ts"],
  prose: ["lib/_cli/run.ts", "lib/_cli/self.ts", "lib/prose/cli.ts"],
};

for (const [tool, entries] of Object.entries(ENTRIES)) {
  Deno.test(`bin/${tool}.ts imports its whole static graph directly, and nothing its code does not load`, () => {
    const bin = pathToFileURL(join(REPO, "bin", `${tool}.ts`)).href;
    const imports = staticImports(bin);
    const direct = new Set(imports.get(bin));
    const graph = staticGraph(imports, bin);
    graph.delete(bin);
    const missing = relative([...graph].filter((m) => !direct.has(m)));
    assert.deepEqual(
      missing,
      [],
      `add to bin/${tool}.ts: ${missing.map((m) => `import "../${m}";`)}`,
    );
    // What the modules the bin calls load by themselves, without the list.
    const needed = new Set<string>();
    for (const entry of entries) {
      const url = pathToFileURL(join(REPO, entry)).href;
      for (const m of staticGraph(staticImports(url), url)) needed.add(m);
    }
    assert.deepEqual(
      relative(graph),
      relative(needed),
      `bin/${tool}.ts lists a module its code does not load`,
    );
  });
}
