/**
 * `deno task compile` embeds only ctxkit's own code: run offline, the task itself (bundle, then
 * `deno compile` with `compileArgs`) lists for every tool a payload under 1 MiB with nothing from
 * `node_modules` — compiling the sources embedded all of it (192 MB, the Deno binary included).
 * `DENORT_BIN=/bin/true` stands in for the runtime download (the output is not runnable, the list
 * of embedded files is real). And `deno task compile --stand-in` writes a runnable stand-in per
 * tool for the CLI suite's binary mode.
 *
 * Both run in a copy of the checkout (its `node_modules` linked), so they never rewrite the `dist/`
 * another test may be running.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { cpSync, existsSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { compileArgs, hostTarget, STAND_IN_MARKER } from "../scripts/compile.ts";
import { type Tool, TOOLS } from "../scripts/tools.ts";
import { makeTempDir, REPO } from "./_helpers.ts";

/** 1 MiB: `deno compile` counts in binary units (its "KB" is 1,024 bytes). */
const PAYLOAD_LIMIT = 1024 * 1024;

/** A copy of the checkout (no `.git`, no `dist/`) with `node_modules` linked, for build tasks. */
function stageCheckout(): string {
  const root = join(makeTempDir("ctxkit-compile-"), "repo");
  const skip = new Set([".git", "node_modules", "dist"].map((p) => join(REPO, p)));
  cpSync(REPO, root, { recursive: true, filter: (src) => !skip.has(src) });
  symlinkSync(join(REPO, "node_modules"), join(root, "node_modules"));
  return root;
}

/** Run `deno run -A scripts/compile.ts …args` in `root` with `env` added. */
function compileTask(root: string, args: string[], env: Record<string, string> = {}) {
  const out = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(root, "scripts", "compile.ts"), ...args],
    cwd: root,
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...env },
    stdin: "null",
  }).outputSync();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** One `deno compile` report: what it compiled and the files it lists as embedded. */
interface Listing {
  /** The entry named by the `Compile <entry> to <output>` line. */
  entry: string;
  /** The report, verbatim. */
  text: string;
  /** Each tree row: name and size in bytes (a collapsed `node_modules/*` row counts its total). */
  files: { name: string; bytes: number }[];
  /** `Files:` + `Metadata:` + `Remote modules:` in bytes. */
  total: number;
}

/** Bytes of a size as `deno compile` prints it (`56.44KB`, `192.63MB`, `12B`). */
function bytes(size: string): number {
  const m = size.match(/^([\d.]+)\s*(B|KB|MB|GB)$/);
  if (!m) throw new Error(`unreadable size ${JSON.stringify(size)}`);
  const unit = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }[m[2] as "B" | "KB" | "MB" | "GB"];
  return Number(m[1]) * unit;
}

/**
 * The reports in `deno compile`'s stderr (Deno 2.9): a `Compile <entry> to <out>` line, `Embedded
 * Files`, a tree of `├──`/`└──` rows `name (size)`, then `Files:`, `Metadata:` and `Remote modules:`
 * totals. Fails loudly on a shape it does not know, so a new Deno cannot make the test vacuous.
 */
function listings(stderr: string): Listing[] {
  const parts = stderr.split(/^(?=Compile )/m).filter((p) => p.startsWith("Compile "));
  return parts.map((text) => {
    const entry = text.match(/^Compile (\S+) to /)![1];
    ok(/^Embedded Files$/m.test(text), `no "Embedded Files" in:\n${text}`);
    const files = [...text.matchAll(/^[│ ]*[├└]─[─┬]\s*(.+?) \(([\d.]+\s*[KMG]?B)\b[^)]*\)$/gm)]
      .map((m) => ({ name: m[1], bytes: bytes(m[2]) }));
    const totals = ["Files", "Metadata", "Remote modules"].map((label) => {
      const m = text.match(new RegExp(`^${label}: (\\S+)$`, "m"));
      ok(m, `no "${label}:" total in:\n${text}`);
      return bytes(m[1]);
    });
    return { entry, text, files, total: totals.reduce((a, b) => a + b, 0) };
  });
}

// DENORT_BIN=/bin/true needs an ELF /bin/true (a Mach-O one lacks the sections deno compile writes).
Deno.test({
  name: "deno task compile: each binary embeds its bundle alone, under 1 MiB, no node_modules",
  ignore: Deno.build.os !== "linux",
}, () => {
  const root = stageCheckout();
  const target = hostTarget();
  const r = compileTask(root, [target], { DENORT_BIN: "/bin/true" });
  strictEqual(r.code, 0, r.stderr);
  const found = listings(r.stderr);
  deepStrictEqual(found.map((l) => l.entry), TOOLS.map((t) => compileArgs(t, target).at(-1)));
  for (const [i, tool] of TOOLS.entries()) {
    const l = found[i];
    console.log(`${tool}: ${l.files.map((f) => f.name).join(", ")} — ${Math.round(l.total)} B`);
    ok(!l.text.includes("node_modules"), `${tool} embeds node_modules:\n${l.text}`);
    ok(l.files.length > 0, `${tool}: no embedded files listed:\n${l.text}`);
    ok(
      l.files.some((f) => f.name === `${tool}.js`),
      `${tool}: its bundle is not listed:\n${l.text}`,
    );
    ok(l.total < PAYLOAD_LIMIT, `${tool}: payload ${l.total} B >= ${PAYLOAD_LIMIT} B:\n${l.text}`);
    ok(existsSync(join(root, compileArgs(tool, target).at(-2)!)), `${tool}: no output`);
  }
});

Deno.test("the listing parser sees what compiling the sources would embed", () => {
  // The failure the test above guards against, in the shape Deno prints it: a collapsed
  // `node_modules/*` row, so a check for `node_modules/deno` alone would pass it.
  const sample = [
    "Compile bin/text-guard.ts to x",
    "",
    "Embedded Files",
    "",
    "x",
    "├── bin/text-guard.ts (1.16KB)",
    "├─┬ lib (319.08KB)",
    "│ └── text.ts (14.49KB)",
    "├── node_modules/* (192.63MB - 101.03MB unique)",
    "└── package.json (414B)",
    "",
    "Files: 101.44MB",
    "Metadata: 2.04KB",
    "Remote modules: 12B",
    "",
  ].join("\n");
  const [l] = listings(sample);
  deepStrictEqual(l.files.map((f) => f.name), [
    "bin/text-guard.ts",
    "lib",
    "text.ts",
    "node_modules/*",
    "package.json",
  ]);
  ok(l.total > 100 * 1024 * 1024);
});

Deno.test({
  name: "deno task compile --stand-in: a runnable stand-in per tool, marked as one",
  ignore: Deno.build.os === "windows", // a stand-in is a POSIX shell script
}, () => {
  const root = stageCheckout();
  const r = compileTask(root, ["--stand-in"]);
  strictEqual(r.code, 0, r.stderr);
  for (const tool of TOOLS as readonly Tool[]) {
    const path = join(root, compileArgs(tool, hostTarget()).at(-2)!);
    ok((statSync(path).mode & 0o111) !== 0, `${tool}: not executable`);
    const marker = readFileSync(path, "utf8").split("\n").find((l) =>
      l.startsWith(STAND_IN_MARKER)
    );
    strictEqual(marker, `${STAND_IN_MARKER}${join(root, "dist", `${tool}.js`)}`);
    const help = new Deno.Command(path, { args: ["--help"], stdin: "null" }).outputSync();
    strictEqual(help.code, 0, new TextDecoder().decode(help.stderr));
    ok(new TextDecoder().decode(help.stderr).endsWith("✅ EXIT:0\n"), tool);
  }
});
