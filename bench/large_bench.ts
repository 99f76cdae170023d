/**
 * Large inputs (reliability suite): a 50 MB instruction file, 10,000 snapshot targets, a
 * 100,000-file tree, each run through the real CLIs as child processes at two sizes (1/4 and full),
 * and a 3 GiB (sparse) target and rule files (one path-scoped, one whose frontmatter never closes),
 * scanned with and without `--loaded`, whose peak RSS must stay at most 150 MiB.
 * Prints, per step, the wall time, the time per item with Deno's start-up subtracted, the ratio of
 * the per-item times (full ÷ quarter: ~1 is linear, ~4 would be quadratic; target ≤ 2) and the peak
 * RSS (VmHWM) of the child (targets: ≤ 12× the instruction file's size and < 512 MiB for the many-file
 * steps). Exits 1 when a target is missed.
 *
 * `deno run -A bench/large_bench.ts` (or `deno task bench large`); `--quick` divides every size by 10.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const RATIO_TARGET = 2;
const FILE_PEAK_FACTOR = 12;
const MANY_PEAK_MIB = 512;
const QUICK = Deno.args.includes("--quick");
const scale = (n: number) => QUICK ? Math.floor(n / 10) : n;

/** This process's peak RSS in KiB (VmHWM on Linux, else the current RSS). */
function peakRssKib(): number {
  try {
    const match = readFileSync("/proc/self/status", "utf8").match(/^VmHWM:\s+(\d+) kB/m);
    if (match) return Number(match[1]);
  } catch { /* not Linux */ }
  return Math.round(Deno.memoryUsage().rss / 1024);
}

const PEAK_FILE = Deno.env.get("CTXKIT_BENCH_PEAK_FILE");
const BIN = Deno.env.get("CTXKIT_BENCH_BIN");

interface Step {
  ms: number;
  peakMib: number;
  stdout: string;
}

function runBin(
  bin: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
  expectCode = 0,
): Step {
  const peakFile = join(cwd, ".peak");
  const start = performance.now();
  const out = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, ...args],
    env: { ...env, CTXKIT_BENCH_PEAK_FILE: peakFile, CTXKIT_BENCH_BIN: bin, CTXKIT_EXIT_LINE: "0" },
    cwd,
    clearEnv: true,
  }).outputSync();
  const ms = performance.now() - start;
  const stdout = new TextDecoder().decode(out.stdout);
  if (out.code !== expectCode) {
    throw new Error(
      `${bin} ${args.slice(0, 3).join(" ")}…: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  const peakMib = Number(readFileSync(peakFile, "utf8")) / 1024;
  rmSync(peakFile);
  return { ms, peakMib, stdout };
}

function write(path: string, content: string | Uint8Array): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
}

/** Instruction text of about `bytes` bytes: rule lines full of tokens, plus one 1 MB line. */
function instructionText(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = i % 5000 === 4999
      ? "x".repeat(Math.min(1 << 20, bytes - size)) + "\n" // a long line without any anchor
      : `Rule ${i}: use Node 20.11 and run scripts/build-${i % 97}.sh; NEVER skip step ${i}.\n`;
    parts.push(line);
    size += line.length;
  }
  return parts.join("");
}

let failed = false;
function report(
  label: string,
  small: number,
  big: number,
  unit: string,
  a: Step,
  b: Step,
  startupMs: number,
) {
  if (a.ms - startupMs < 25) {
    // The work hides in start-up noise (e.g. context-scan only stats the file): no ratio to take.
    console.log(
      `${label}: ${small} ${unit} ${a.ms.toFixed(0)} ms, ${big} ${unit} ${b.ms.toFixed(0)} ms ` +
        `(work below start-up noise, no ratio); peak RSS ${a.peakMib.toFixed(0)} → ${
          b.peakMib.toFixed(0)
        } MiB`,
    );
    return;
  }
  const perSmall = Math.max(a.ms - startupMs, 0.001) / small;
  const perBig = Math.max(b.ms - startupMs, 0.001) / big;
  const ratio = perBig / perSmall;
  const ok = ratio <= RATIO_TARGET;
  if (!ok) failed = true;
  console.log(
    `${label}: ${small} ${unit} ${a.ms.toFixed(0)} ms, ${big} ${unit} ${b.ms.toFixed(0)} ms; ` +
      `per ${unit.replace(/s$/, "")} ${(perSmall * 1000).toFixed(1)} → ${
        (perBig * 1000).toFixed(1)
      } µs, ratio ${ratio.toFixed(2)} (target <= ${RATIO_TARGET}) ${ok ? "ok" : "FAIL"}; ` +
      `peak RSS ${a.peakMib.toFixed(0)} → ${b.peakMib.toFixed(0)} MiB`,
  );
}

function checkPeak(label: string, peakMib: number, limitMib: number): void {
  const ok = peakMib <= limitMib;
  if (!ok) failed = true;
  console.log(
    `${label}: peak RSS ${peakMib.toFixed(0)} MiB (target <= ${limitMib.toFixed(0)} MiB) ${
      ok ? "ok" : "FAIL"
    }`,
  );
}

if (PEAK_FILE !== undefined && BIN !== undefined) {
  // Child: run the real bin (it exits through Deno.exit, which fires `unload`) and record the peak.
  globalThis.addEventListener("unload", () => writeFileSync(PEAK_FILE, String(peakRssKib())));
  await import(`../bin/${BIN}.ts`);
} else {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "ctxkit-large-bench-")));
  try {
    const env = (proj: string): Record<string, string> => ({
      HOME: `${base}/home`,
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      CLAUDE_PROJECT_DIR: proj,
      NO_COLOR: "1",
    });
    mkdirSync(`${base}/home`);
    // Start-up is subtracted from every step: the fastest of five runs that do no work.
    const startup = Math.min(
      ...Array.from({ length: 5 }, () => runBin("context-guard", ["help"], env(base), base).ms),
    );
    console.log(`deno start-up (context-guard help, fastest of 5): ${startup.toFixed(0)} ms`);

    // 1. A 50 MB instruction file: snapshot, verify (base and ext), scan.
    const mb = scale(50);
    const sizes = [mb / 4, mb];
    const fileSteps: Record<string, Step[]> = {
      snapshot: [],
      verify: [],
      "verify ext": [],
      scan: [],
    };
    for (const size of sizes) {
      const proj = `${base}/file-${size}`;
      write(`${proj}/CLAUDE.md`, instructionText(size * 1024 * 1024));
      const snap = runBin("context-guard", ["snapshot", "CLAUDE.md"], env(proj), proj);
      fileSteps.snapshot.push(snap);
      const runDir = snap.stdout.match(/^RUN_DIR: (.*)$/m)![1];
      fileSteps.verify.push(
        runBin("context-guard", ["verify", "--run-dir", runDir, "CLAUDE.md"], env(proj), proj),
      );
      fileSteps["verify ext"].push(
        runBin(
          "context-guard",
          ["verify", "--tokens=ext", "--run-dir", runDir, "CLAUDE.md"],
          env(proj),
          proj,
        ),
      );
      fileSteps.scan.push(runBin("context-scan", ["--root", proj], env(proj), proj));
    }
    for (const [name, [a, b]] of Object.entries(fileSteps)) {
      report(`instruction file, ${name}`, sizes[0], sizes[1], "MB", a, b, startup);
      checkPeak(`instruction file, ${name} (${mb} MB)`, b.peakMib, 200 + FILE_PEAK_FACTOR * mb);
    }

    // 2. 10,000 snapshot targets: snapshot, checkpoint-free restore (already original), list.
    const targets = scale(10_000);
    const counts = [targets / 4, targets];
    const manySteps: Record<string, Step[]> = { snapshot: [], restore: [] };
    for (const n of counts) {
      const proj = `${base}/targets-${n}`;
      const rels = Array.from({ length: n }, (_, i) => `docs/d${i % 100}/f${i}.md`);
      for (const rel of rels) write(`${proj}/${rel}`, `# ${rel}\nUse Node 20.11.\n`);
      const snap = runBin("context-guard", ["snapshot", ...rels], env(proj), proj);
      manySteps.snapshot.push(snap);
      const runDir = snap.stdout.match(/^RUN_DIR: (.*)$/m)![1];
      manySteps.restore.push(
        runBin("context-guard", ["restore", "--run-dir", runDir], env(proj), proj),
      );
    }
    for (const [name, [a, b]] of Object.entries(manySteps)) {
      report(`snapshot targets, ${name}`, counts[0], counts[1], "files", a, b, startup);
      checkPeak(`snapshot targets, ${name} (${targets} files)`, b.peakMib, MANY_PEAK_MIB);
    }

    // 3. A 100,000-file tree: context-scan walks it (rules and skills among plain source files).
    const treeFiles = scale(100_000);
    const trees = [treeFiles / 4, treeFiles];
    const scans: Step[] = [];
    for (const n of trees) {
      const proj = `${base}/tree-${n}`;
      write(`${proj}/CLAUDE.md`, "# Tree\n");
      for (let i = 0; i < n; i++) {
        const rel = i % 50 === 0
          ? `.claude/rules/r${i % 7}/rule-${i}.md`
          : i % 50 === 1
          ? `packages/p${i % 13}/skills/s${i}/SKILL.md`
          : `src/m${i % 200}/sub${i % 9}/file-${i}.ts`;
        write(`${proj}/${rel}`, i % 50 === 1 ? `---\nname: s${i}\n---\nSkill ${i}\n` : `x${i}\n`);
      }
      scans.push(runBin("context-scan", ["--root", proj], env(proj), proj));
      rmSync(proj, { recursive: true, force: true });
    }
    report("file tree, context-scan", trees[0], trees[1], "files", scans[0], scans[1], startup);
    checkPeak(`file tree, context-scan (${treeFiles} files)`, scans[1].peakMib, MANY_PEAK_MIB);

    // 4. A 3 GiB target (sparse: no disk for the original, 3 GiB for each copy): snapshot streams
    // it, the token gate refuses it, restore streams it back; context-scan stats a 3 GiB rule file.
    // Memory must not grow with the file (references/reliability.md#large-inputs).
    const huge = QUICK ? 300 * 1024 * 1024 : 3 * 1024 * 1024 * 1024;
    const hugeProj = `${base}/huge`;
    write(`${hugeProj}/CLAUDE.md`, "# huge\n");
    Deno.truncateSync(`${hugeProj}/CLAUDE.md`, huge);
    write(`${hugeProj}/.claude/rules/huge.md`, '---\npaths: ["src/**"]\n---\n');
    Deno.truncateSync(`${hugeProj}/.claude/rules/huge.md`, huge);
    const label = `${(huge / 1024 ** 3).toFixed(1)} GiB`;
    const hugeSnap = runBin("context-guard", ["snapshot", "CLAUDE.md"], env(hugeProj), hugeProj);
    checkPeak(`${label} target, snapshot (${hugeSnap.ms.toFixed(0)} ms)`, hugeSnap.peakMib, 150);
    const hugeRun = hugeSnap.stdout.match(/^RUN_DIR: (.*)$/m)![1];
    const gate = runBin(
      "context-guard",
      ["verify", "--run-dir", hugeRun, "CLAUDE.md"],
      env(hugeProj),
      hugeProj,
      2,
    );
    checkPeak(`${label} target, verify refused (${gate.ms.toFixed(0)} ms)`, gate.peakMib, 150);
    Deno.truncateSync(`${hugeProj}/CLAUDE.md`, 0); // the optimizer's rewrite
    runBin(
      "text-guard",
      ["checkpoint", "--run-dir", hugeRun, "CLAUDE.md"],
      env(hugeProj),
      hugeProj,
    );
    const hugeRestore = runBin(
      "context-guard",
      ["restore", "--run-dir", hugeRun],
      env(hugeProj),
      hugeProj,
    );
    checkPeak(
      `${label} target, restore (${hugeRestore.ms.toFixed(0)} ms)`,
      hugeRestore.peakMib,
      150,
    );
    rmSync(hugeRun, { recursive: true, force: true });
    // A second rule whose frontmatter never closes is streamed to EOF; `--loaded` streams every
    // auto-loaded file again (comments, imports): memory stays one chunk either way.
    write(`${hugeProj}/.claude/rules/open.md`, "---\nname: open\n");
    Deno.truncateSync(`${hugeProj}/.claude/rules/open.md`, huge);
    const hugeScan = runBin("context-scan", ["--root", hugeProj], env(hugeProj), hugeProj);
    checkPeak(
      `${label} rule file, context-scan (${hugeScan.ms.toFixed(0)} ms)`,
      hugeScan.peakMib,
      150,
    );
    const hugeLoaded = runBin(
      "context-scan",
      ["--root", hugeProj, "--loaded", "--format", "table"],
      env(hugeProj),
      hugeProj,
    );
    checkPeak(
      `${label} rule file, context-scan --loaded (${hugeLoaded.ms.toFixed(0)} ms)`,
      hugeLoaded.peakMib,
      150,
    );
    rmSync(hugeProj, { recursive: true, force: true });
    console.log(failed ? "FAIL" : "PASS");
    if (failed) Deno.exitCode = 1;
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
