/**
 * prose's bin imports every module of its static import graph itself, so that from source Deno
 * loads the whole hook path in one round (`references/startup.md#flat-import-graph`): the list in
 * `bin/prose.ts` must be complete (nothing deeper than one import from the bin) and exact (it adds
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

Deno.test("bin/prose.ts imports its whole static graph directly, and nothing the code does not load", () => {
  const bin = pathToFileURL(join(REPO, "bin", "prose.ts")).href;
  const imports = staticImports(bin);
  const direct = new Set(imports.get(bin));
  const graph = staticGraph(imports, bin);
  graph.delete(bin);
  assert.deepEqual(
    relative([...graph].filter((m) => !direct.has(m))),
    [],
    "not imported by the bin",
  );
  // What the three modules the bin calls load by themselves, without the list.
  const needed = new Set<string>();
  for (const entry of ["lib/_cli/run.ts", "lib/_cli/self.ts", "lib/prose/cli.ts"]) {
    const url = pathToFileURL(join(REPO, entry)).href;
    for (const m of staticGraph(staticImports(url), url)) needed.add(m);
  }
  assert.deepEqual(relative(graph), relative(needed), "the bin's list differs from the graph");
  assert.ok(graph.size > 20);
});
