/**
 * context-scan benchmark: builds a synthetic monorepo (≥ 9,000 files: 220 skills with nested
 * references, 160 agents, 60 rules, memory, hooks, a big node_modules) in a temp dir and, in the same
 * run, times the in-process scan against a floor — a bare recursive walk (same prune list) that
 * reads the same `.md`/`.mjs` files. Prints both times, the ratio (target ≤ 2×), and the wall time
 * and peak RSS (VmHWM) of the real CLI run as a child (target < 100 MiB). With 12 installed plugins
 * in the global root (as `claude plugin install` leaves them), it also times `--loaded --global`
 * against the plain `--global` scan of the same tree (target ≤ 1.5×, the median of paired runs'
 * CPU-time ratios; the wall-clock one is printed too). Exits 1 when a target is
 * missed. `--build DIR` only builds the synthetic tree (for profiling).
 *
 * `deno run -A bench/scan_bench.ts` (or `deno task bench scan`).
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { renderScanDocument } from "../lib/scan/document.ts";
import { scanContext } from "../lib/scan/mod.ts";
import { PRUNE_NAMES } from "../lib/scan/walk.ts";
import { median } from "./_common.ts";

const RATIO_TARGET = 2;
const MEMORY_TARGET_MIB = 100;
/** `--loaded` against the plain scan of the same roots (`references/context-scan.md#performance`). */
const LOADED_RATIO_TARGET = 1.5;
const INSTALLED_PLUGINS = 12;

function write(root: string, rel: string, content: string): void {
  const path = join(root, rel);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
}

/** Build the synthetic monorepo; returns the number of files written. */
function buildMonorepo(root: string): number {
  let n = 0;
  const put = (rel: string, content: string) => {
    write(root, rel, content);
    n++;
  };
  const body = (i: number, lines: number) =>
    Array.from({ length: lines }, (_, k) => `Line ${k} of document ${i}: guidance text here.`).join(
      "\n",
    ) + "\n";
  put("CLAUDE.md", body(0, 40));
  put("AGENTS.md", body(1, 20));
  for (let i = 0; i < 60; i++) {
    const scoped = i % 3 === 0 ? `---\npaths: ["src/${i}/**"]\n---\n` : "";
    put(`.claude/rules/${i % 4 === 0 ? "nested/" : ""}rule-${i}.md`, scoped + body(i, 15));
  }
  for (let i = 0; i < 10; i++) put(`.claude/convention/conv-${i}.txt`, body(i, 5));
  for (let i = 0; i < 60; i++) {
    put(`.claude/memory/${i % 5 === 0 ? "topics/" : ""}m-${i}.md`, body(i, 6));
  }
  put(".claude/memory/MEMORY.md", body(0, 30));
  for (let i = 0; i < 160; i++) {
    const dir = i % 2 === 0
      ? ".claude/agents"
      : `packages/p${i % 8}/agents/${i % 3 === 0 ? "deep/" : ""}`;
    put(
      `${dir}/agent-${i}.md`,
      `---\nname: a${i}\ndescription: |\n  Agent ${i} does things.\n  More.\n---\n${body(i, 30)}`,
    );
  }
  for (let i = 0; i < 40; i++) {
    put(
      `packages/p${i % 8}/hooks/lib/h-${i}.mjs`,
      `export const REMINDER_${i} = "text ${i}";\nconst LIMIT_${i} = ${i};\n${body(i, 20)}`,
    );
  }
  for (let s = 0; s < 220; s++) {
    const dir = `packages/p${s % 8}/skills/skill-${s}`;
    put(`${dir}/SKILL.md`, `---\nname: skill-${s}\ndescription: Skill ${s}\n---\n${body(s, 40)}`);
    for (let r = 0; r < 6; r++) {
      put(`${dir}/references/${r >= 3 ? `part-${r % 2}/` : ""}ref-${r}.md`, body(r, 25));
    }
    put(`${dir}/scripts/run-${s}.sh`, "#!/bin/sh\necho hi\n");
  }
  for (let i = 0; i < 1200; i++) {
    put(`packages/p${i % 8}/src/mod${i % 40}/file-${i}.ts`, `export const x${i} = ${i};\n`);
  }
  for (let i = 0; i < 5600; i++) {
    put(
      `node_modules/pkg-${i % 250}/lib/${i % 7}/f-${i}.${i % 10 === 0 ? "md" : "js"}`,
      "module.exports = 1;\n",
    );
  }
  for (let i = 0; i < 200; i++) put(`.git/objects/${i % 16}/o-${i}`, "blob\n");
  return n;
}

/**
 * `INSTALLED_PLUGINS` plugins installed and enabled in the global root `global`, each with skills
 * (and references), commands, agents and hooks: the marketplace checkout, the cache copies, the two
 * lists and `enabledPlugins`, as `claude plugin install` leaves them.
 */
function installPlugins(global: string): void {
  const records: Record<string, unknown> = {};
  const enabled: Record<string, boolean> = {};
  const entries: unknown[] = [];
  for (let p = 0; p < INSTALLED_PLUGINS; p++) {
    const name = `plugin-${p}`;
    const dir = `plugins/cache/bench/${name}/1.0.0`;
    write(global, `${dir}/.claude-plugin/plugin.json`, JSON.stringify({ name, version: "1.0.0" }));
    for (let s = 0; s < 8; s++) {
      write(
        global,
        `${dir}/skills/s${s}/SKILL.md`,
        `---\ndescription: ${name} skill ${s}\n---\nbody\n`,
      );
      write(global, `${dir}/skills/s${s}/references/r.md`, "reference\n".repeat(20));
    }
    for (let c = 0; c < 5; c++) {
      write(global, `${dir}/commands/c${c}.md`, `---\ndescription: ${name} command ${c}\n---\nx\n`);
      write(
        global,
        `${dir}/agents/a${c}.md`,
        `---\nname: a${c}\ndescription: agent ${c}\n---\nx\n`,
      );
    }
    write(
      global,
      `${dir}/hooks/hooks.json`,
      JSON.stringify({
        hooks: { SessionStart: [{ hooks: [{ type: "command", command: "echo ok" }] }] },
      }),
    );
    entries.push({ name, source: `./plugins/${name}` });
    records[`${name}@bench`] = [{
      scope: "user",
      installPath: `${global}/${dir}`,
      version: "1.0.0",
    }];
    enabled[`${name}@bench`] = true;
  }
  write(
    global,
    "plugins/marketplaces/bench/.claude-plugin/marketplace.json",
    JSON.stringify({ name: "bench", owner: { name: "bench" }, plugins: entries }),
  );
  write(global, "plugins/installed_plugins.json", JSON.stringify({ version: 2, plugins: records }));
  write(
    global,
    "plugins/known_marketplaces.json",
    JSON.stringify({
      bench: {
        source: { source: "github", repo: "bench/bench" },
        installLocation: `${global}/plugins/marketplaces/bench`,
      },
    }),
  );
  write(global, "settings.json", JSON.stringify({ enabledPlugins: enabled }));
}

/**
 * The floor: one recursive walk with the same prune list and the same (fastest) Deno fs calls,
 * reading every `.md`/`.mjs` file.
 */
function floorWalk(root: string): number {
  let bytes = 0;
  const visit = (dir: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) {
        if (!PRUNE_NAMES.has(entry.name)) visit(path);
      } else if (entry.isFile && (entry.name.endsWith(".md") || entry.name.endsWith(".mjs"))) {
        bytes += Deno.readFileSync(path).length;
      }
    }
  };
  visit(root);
  return bytes;
}

function time(fn: () => unknown, runs: number): number {
  fn(); // warm the page cache and the JIT
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

/** This process's CPU time so far (user + system), in ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** One paired timing: wall-clock and CPU time (ms) of `a` and of `b`. */
interface Pair {
  readonly a: number;
  readonly b: number;
  readonly cpuA: number;
  readonly cpuB: number;
}

/**
 * `n` alternating timings of `a` and `b` (each warmed once first), as pairs. Both runs are
 * synchronous file-system work on a warm page cache, so their CPU time (user + system) is their
 * wall time on an idle machine — and, unlike the wall time, not stretched by waiting for a core on
 * a busy one.
 */
function paired(a: () => unknown, b: () => unknown, n: number): Pair[] {
  a();
  b();
  const out: Pair[] = [];
  for (let i = 0; i < n; i++) {
    const startA = performance.now();
    const cpuStartA = cpuMs();
    a();
    const startB = performance.now();
    const cpuStartB = cpuMs();
    b();
    out.push({
      a: startB - startA,
      b: performance.now() - startB,
      cpuA: cpuStartB - cpuStartA,
      cpuB: cpuMs() - cpuStartB,
    });
  }
  return out;
}

/** This process's peak RSS in KiB (VmHWM on Linux, else the current RSS). */
function peakRssKib(): number {
  try {
    const match = readFileSync("/proc/self/status", "utf8").match(/^VmHWM:\s+(\d+) kB/m);
    if (match) return Number(match[1]);
  } catch {
    // not Linux: current RSS is the best available figure
  }
  return Math.round(Deno.memoryUsage().rss / 1024);
}

const PEAK_FILE = Deno.env.get("CTXKIT_BENCH_PEAK_FILE");
if (PEAK_FILE !== undefined) {
  // CLI child: run the real bin (it exits through Deno.exit, which fires `unload`) and record the
  // process's peak RSS on the way out.
  globalThis.addEventListener("unload", () => writeFileSync(PEAK_FILE, String(peakRssKib())));
  await import("../bin/context-scan.ts");
} else if (Deno.args[0] === "--build") {
  console.log(buildMonorepo(Deno.args[1]));
} else {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "ctxkit-scan-bench-")));
  try {
    const root = `${base}/repo`;
    const home = `${base}/home`;
    mkdirSync(home);
    Deno.env.set("HOME", home);
    Deno.env.delete("CLAUDE_CONFIG_DIR");
    const files = buildMonorepo(root);
    const runs = 7;
    const floorMs = time(() => floorWalk(root), runs);
    const scanMs = time(() => renderScanDocument(scanContext({ root }).document), runs);
    const rows = scanContext({ root }).document.files.length;
    installPlugins(`${home}/.claude`);
    const loadedDoc = scanContext({ root, global: true, loaded: true }).document;
    const pluginRows = loadedDoc.files.filter((f) => f.root === "plugin").length;
    if (pluginRows === 0) throw new Error("the installed plugins were not modelled");
    // Paired runs, alternating, so a load spike on a shared machine hits both sides alike: the
    // ratio is the median of the pairs' ratios.
    const plainRun = () => renderScanDocument(scanContext({ root, global: true }).document);
    const loadedRun = () =>
      renderScanDocument(scanContext({ root, global: true, loaded: true }).document);
    const pairs = paired(plainRun, loadedRun, 2 * runs);
    const plainMs = median(pairs.map((p) => p.a));
    const loadedMs = median(pairs.map((p) => p.b));
    const wallRatio = median(pairs.map((p) => p.b / p.a));
    const loadedRatio = median(pairs.map((p) => p.cpuB / p.cpuA));

    const peakFile = `${base}/peak`;
    const cliSamples: number[] = [];
    let peakKib = 0;
    for (let i = 0; i < 3; i++) {
      const start = performance.now();
      const out = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", new URL(import.meta.url).pathname, "--root", root],
        env: { HOME: home, CTXKIT_BENCH_PEAK_FILE: peakFile },
      }).outputSync();
      cliSamples.push(performance.now() - start);
      if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
      peakKib = Math.max(peakKib, Number(readFileSync(peakFile, "utf8")));
    }
    const ratio = scanMs / floorMs;
    const peakMib = peakKib / 1024;
    console.log(`synthetic monorepo: ${files} files, ${rows} rows`);
    console.log(`floor (bare walk + read .md/.mjs): ${floorMs.toFixed(1)} ms`);
    console.log(`scanContext (in-process, rendered): ${scanMs.toFixed(1)} ms`);
    console.log(`ratio: ${ratio.toFixed(2)}x (target <= ${RATIO_TARGET}x)`);
    console.log(
      `CLI child (deno startup + scan + print), median: ${median(cliSamples).toFixed(0)} ms`,
    );
    console.log(
      `peak RSS of the CLI child: ${peakMib.toFixed(1)} MiB (target < ${MEMORY_TARGET_MIB} MiB)`,
    );
    console.log(
      `--global scan with ${INSTALLED_PLUGINS} installed plugins: ${plainMs.toFixed(1)} ms; ` +
        `--loaded --global: ${loadedMs.toFixed(1)} ms (${pluginRows} plugin rows)`,
    );
    console.log(
      `loaded ratio (CPU time): ${loadedRatio.toFixed(2)}x (target <= ${LOADED_RATIO_TARGET}x); ` +
        `wall-clock: ${wallRatio.toFixed(2)}x`,
    );
    const ok = ratio <= RATIO_TARGET && peakMib < MEMORY_TARGET_MIB &&
      loadedRatio <= LOADED_RATIO_TARGET;
    console.log(ok ? "PASS" : "FAIL");
    if (!ok) Deno.exitCode = 1;
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
