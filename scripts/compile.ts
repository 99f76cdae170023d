/**
 * `deno task compile [target…]`: standalone binaries in `dist/bin/<target>/<tool>` (`.exe` on
 * Windows) for the five `deno compile` targets (default: all), each compiled from its bundle
 * `dist/<tool>.js`, which this task first builds with `deno task bundle` — so a binary carries the
 * commit its bundle was stamped with, which its `--version` prints (`references/cli.md#version`).
 * Needs the Deno runtime download for each target, which ctxkit's own build machines cannot reach —
 * run it where the download works (see README and `.github/workflows/binaries.yml`).
 *
 * `deno task compile --stand-in`: for machines without that download, writes a stand-in for the
 * host target instead — a shell script per tool that runs the bundle with this Deno — so the CLI
 * suite's binary mode (`CTXKIT_TEST_TARGET=binary`) can be exercised. It is not standalone and must
 * never be shipped.
 *
 * @module
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { shellCommand } from "../lib/shell.ts";
import { COMPILE_TARGETS, type CompileTarget, run, type Tool, TOOLS } from "./tools.ts";

/** The repository root: every path below is relative to it, whatever the caller's directory. */
export const ROOT: string = dirname(dirname(fileURLToPath(import.meta.url)));

/** Where `deno task compile` puts the binaries of `target`, relative to {@linkcode ROOT}. */
export function binaryDir(target: string): string {
  return join("dist", "bin", target);
}

/** The file name of `tool`'s binary on `os`: `deno compile` appends `.exe` on Windows. */
export function binaryFileName(tool: Tool, os: typeof Deno.build.os = Deno.build.os): string {
  return os === "windows" ? `${tool}.exe` : tool;
}

/**
 * The `deno compile` arguments (after the deno executable) that build `tool` for `target`, run in
 * {@linkcode ROOT}. `tests/compile_test.ts` runs this very task, so what it checks is what ships.
 *
 * The entry is the bundle, not `bin/<tool>.ts`: compiling the sources embeds the whole
 * `node_modules` (192 MB, the Deno binary itself included), because `deno compile` ships every
 * package a local `node_modules` holds. `--no-config` is needed as well: with the repository's
 * `deno.json` and `package.json` in effect, even the bundle drags `node_modules` in.
 */
export function compileArgs(tool: Tool, target: string): string[] {
  return [
    "compile",
    "-A",
    "--no-config",
    "--target",
    target,
    "-o",
    join(binaryDir(target), tool),
    join("dist", `${tool}.js`),
  ];
}

/** The `deno compile` target this Deno runs on (the only one a stand-in can serve). */
export function hostTarget(): string {
  return Deno.build.target;
}

/**
 * The marker line every stand-in carries, followed by the absolute bundle it runs: how
 * {@linkcode standInBundle} tells a stand-in from a compiled binary (whose printed commands differ).
 */
export const STAND_IN_MARKER = "# ctxkit-stand-in-bundle: ";

/**
 * The bundle the stand-in at `path` runs (its {@linkcode STAND_IN_MARKER} line), or `undefined` for
 * a compiled binary: a stand-in is a script (`#!`), a binary is not.
 */
export function standInBundle(path: string): string | undefined {
  const head = readFileSync(path).subarray(0, 1024);
  if (head[0] !== 0x23 || head[1] !== 0x21) return undefined; // no "#!": a real executable
  const line = new TextDecoder().decode(head).split("\n").find((l) =>
    l.startsWith(STAND_IN_MARKER)
  );
  return line?.slice(STAND_IN_MARKER.length);
}

/**
 * A stand-in for the compiled `tool`: a shell script that runs the bundle at `bundle` with the Deno
 * at `deno`, permissions and config as `deno compile` bakes them in (`-A`, `--no-config`). `exec`
 * keeps the pid, so signals a test sends reach Deno itself, as they would a binary.
 */
export function standInScript(tool: Tool, deno: string, bundle: string): string {
  return [
    "#!/bin/sh",
    `# Stand-in for a compiled ${tool} (scripts/compile.ts --stand-in): NOT a standalone binary.`,
    `# It runs the bundle with a local Deno so the CLI suite's binary mode can run offline.`,
    `${STAND_IN_MARKER}${bundle}`,
    `exec ${shellCommand([deno, "run", "-A", "--no-config", bundle])} "$@"`,
    "",
  ].join("\n");
}

/** Build the bundles with the bundle task (`deno task bundle`), so a binary embeds today's code. */
function bundle(): void {
  run([Deno.execPath(), "run", "-A", join("scripts", "bundle.ts")], { cwd: ROOT });
}

function usage(message: string): never {
  console.error(`compile: ${message}`);
  console.error(`usage: deno task compile [--stand-in] [target…]; targets: ${COMPILE_TARGETS}`);
  Deno.exit(2);
}

function main(args: string[]): void {
  const standIn = args.includes("--stand-in");
  const rest = args.filter((a) => a !== "--stand-in");
  for (const a of rest) {
    if (!(COMPILE_TARGETS as readonly string[]).includes(a)) usage(`unknown target ${a}`);
  }
  if (standIn) {
    if (Deno.build.os === "windows") usage("--stand-in writes POSIX shell scripts: not on Windows");
    if (rest.some((t) => t !== hostTarget())) usage(`--stand-in serves the host only`);
  }
  bundle();
  if (standIn) {
    const dir = join(ROOT, binaryDir(hostTarget()));
    mkdirSync(dir, { recursive: true });
    for (const tool of TOOLS) {
      const path = join(dir, tool);
      writeFileSync(path, standInScript(tool, Deno.execPath(), join(ROOT, "dist", `${tool}.js`)));
      chmodSync(path, 0o755);
      console.log(`${join(binaryDir(hostTarget()), tool)} (stand-in, not a compiled binary)`);
    }
    return;
  }
  const targets: readonly CompileTarget[] = rest.length > 0
    ? rest as CompileTarget[]
    : COMPILE_TARGETS;
  for (const target of targets) {
    for (const tool of TOOLS) {
      // showStderr: deno compile lists the embedded files there, the proof of what ships.
      run([Deno.execPath(), ...compileArgs(tool, target)], { cwd: ROOT, showStderr: true });
      console.log(join(binaryDir(target), tool));
    }
  }
}

if (import.meta.main) main(Deno.args);
