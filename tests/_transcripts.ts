/**
 * The transcripts of the docs, run as printed (`references/reliability.md#the-docs-run-as-printed`):
 * a `console` block marked `<!-- transcript: <name> -->` is a shell session — each `$ ` line (with
 * its `\` continuation lines) a command, the lines up to the next `$ ` what it prints, stdout and
 * stderr as a terminal interleaves them. A test runs every command of a block, in order, in one
 * `bash` started in a copy of this checkout (the working tree as a fresh git repository,
 * `node_modules` linked: what a user's clone is after the README's `npm ci`), with a fresh HOME
 * holding that copy as `~/ctxkit`, and compares each command's output with the printed lines.
 *
 * The printed lines spell HOME `/home/you` (so the clone is `/home/you/ctxkit`, and Claude Code's
 * memory folder for it `-home-you-ctxkit`); timestamps compare as placeholders. With
 * `CTXKIT_TRANSCRIPTS_WRITE=1` the test writes what the commands printed into the markdown
 * instead (HOME spelled back to `/home/you`), for a reviewer to read in the diff.
 *
 * @module
 */

import { cpSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type DocBlock, docBlocks, docFiles } from "./_docs.ts";
import { git, lines, makeTempDir, REPO, runnersDenoDir } from "./_helpers.ts";

/** How the docs spell the reader's home directory. */
export const DOC_HOME = "/home/you";

/** The real folder the clones' `node_modules` links to (a program there prints its real path). */
const NODE_MODULES = realpathSync(join(REPO, "node_modules"));

/** One command of a transcript and what the docs say it prints. */
export interface TranscriptStep {
  /** The command as typed (continuation lines joined by `\n`, without the `$ ` prompt). */
  command: string;
  /** The printed lines, each ending with `\n`. */
  expected: string;
}

/** A transcript block of the docs. */
export interface Transcript {
  /** Its name (`<!-- transcript: <name> -->`). */
  name: string;
  /** The block it was read from. */
  block: DocBlock;
  /** Its commands, in order. */
  steps: TranscriptStep[];
}

/** Split a block's body into commands and their printed lines. */
export function parseTranscript(body: string): TranscriptStep[] {
  const steps: TranscriptStep[] = [];
  const all = lines(body);
  for (let i = 0; i < all.length; i++) {
    if (!all[i].startsWith("$ ")) {
      throw new Error(`a transcript starts with a "$ " command line, not: ${all[i]}`);
    }
    const command = [all[i].slice(2)];
    while (command.at(-1)!.endsWith("\\") && i + 1 < all.length) command.push(all[++i]);
    let expected = "";
    while (i + 1 < all.length && !all[i + 1].startsWith("$ ")) expected += `${all[++i]}\n`;
    steps.push({ command: command.join("\n"), expected });
  }
  return steps;
}

/** Every transcript of README.md and references/*.md, in document order. */
export function transcripts(): Transcript[] {
  return docFiles().flatMap(docBlocks).flatMap((block) => {
    const name = block.mark?.startsWith("transcript: ") ? block.mark.slice(12) : undefined;
    return name === undefined ? [] : [{ name, block, steps: parseTranscript(block.body) }];
  });
}

/** The transcript called `name`; throws when there is not exactly one. */
export function transcript(name: string): Transcript {
  const found = transcripts().filter((t) => t.name === name);
  if (found.length !== 1) {
    throw new Error(`expected one transcript "${name}", found ${found.length}`);
  }
  return found[0];
}

/** A user's machine for one transcript: a HOME and the clone in it. */
export interface TranscriptPlace {
  /** The fresh HOME. */
  home: string;
  /** `<home>/ctxkit`: the working tree as a fresh git repository, `node_modules` linked. */
  clone: string;
}

/**
 * A fresh HOME holding a copy of this checkout's working tree (tracked and untracked files, not
 * ignored ones) as `~/ctxkit`, committed as a fresh git repository with `node_modules` linked in.
 */
export function transcriptPlace(): TranscriptPlace {
  const home = makeTempDir("ctxkit-transcript-");
  const clone = join(home, "ctxkit");
  mkdirSync(clone);
  // node_modules is linked in below, whatever it is here (a folder npm made, or a link to one).
  const files = git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    .split("\0")
    .filter((f) => f !== "" && f !== "node_modules" && !f.startsWith("node_modules/"));
  for (const file of new Set(files)) {
    try {
      mkdirSync(dirname(join(clone, file)), { recursive: true });
      cpSync(join(REPO, file), join(clone, file), { verbatimSymlinks: true });
    } catch (e) {
      // A tracked file deleted in the working tree is not part of the copy.
      if (!(e instanceof Error && "code" in e && e.code === "ENOENT")) throw e;
    }
  }
  symlinkSync(NODE_MODULES, join(clone, "node_modules"));
  git(clone, "init", "-q", "-b", "main");
  git(clone, "add", "-A");
  git(clone, "commit", "-q", "-m", "the working tree, for the transcripts");
  return { home, clone };
}

/** Claude Code's memory-folder name of a project path: each character but [A-Za-z0-9] as `-`. */
function slug(path: string): string {
  return path.replace(/[^A-Za-z0-9]/g, "-");
}

/** Output made comparable: the place's HOME spelled as the docs do, timestamps as placeholders. */
export function normalise(text: string, place: TranscriptPlace): string {
  return stamps(spellHome(text, place));
}

/**
 * `text` with the place's HOME (and the clone's memory-folder name) spelled as the docs do, and
 * the linked `node_modules` as the clone's own (`deno` on `PATH` prints its real path).
 */
function spellHome(text: string, place: TranscriptPlace): string {
  return text
    .replaceAll(NODE_MODULES, join(place.clone, "node_modules"))
    .replaceAll(slug(place.clone), slug(`${DOC_HOME}/ctxkit`))
    .replaceAll(place.home, DOC_HOME);
}

/** Timestamps (run folders, ISO times) as placeholders. */
function stamps(text: string): string {
  return text
    .replace(/\b\d{8}-\d{6}(-\d+)?\b/g, "<YYYYMMDD-HHMMSS>")
    .replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\b/g, "<ISO-TIME>");
}

/** What each command of a transcript printed, in order (HOME not yet spelled as the docs do). */
export interface TranscriptRun {
  /** One output per step. */
  outputs: string[];
  /** The exit status of the shell (the last command's). */
  code: number;
}

const MARK = "\x1eCTXKIT-TRANSCRIPT-STEP\x1e\n";

/**
 * Run `t`'s commands in one `bash` in the clone, stdout and stderr together, with exactly `env`
 * added to a plain environment (PATH, HOME, NO_COLOR, the Deno cache of whoever runs the tests).
 */
export function runTranscript(
  t: Transcript,
  place: TranscriptPlace,
  env: Record<string, string> = {},
): TranscriptRun {
  const script = ["exec 2>&1"];
  for (const step of t.steps) {
    script.push(`printf '%s' '${MARK.replace("\n", "")}'; echo`, step.command);
  }
  const out = new Deno.Command("bash", {
    args: ["-c", script.join("\n")],
    cwd: place.clone,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: place.home,
      LANG: "C.UTF-8",
      NO_COLOR: "1",
      npm_config_update_notifier: "false",
      DENO_DIR: runnersDenoDir(),
      ...env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const text = new TextDecoder().decode(out.stdout);
  const outputs = text.split(MARK).slice(1);
  return { outputs, code: out.code };
}

/**
 * Compare a run with the printed lines: the failures, one per step whose output differs
 * (expected and actual, normalised), or none.
 */
export function transcriptMismatches(
  t: Transcript,
  run: TranscriptRun,
  place: TranscriptPlace,
  mask: (text: string) => string = (s) => s,
): string[] {
  return t.steps.flatMap((step, i) => {
    const actual = mask(normalise(run.outputs[i] ?? "<no output: the shell stopped>\n", place));
    const expected = mask(stamps(step.expected));
    return actual === expected ? [] : [
      `${t.block.file}:${t.block.line} $ ${step.command}\n--- printed\n${expected}--- ran\n${actual}`,
    ];
  });
}

/** Whether a test writes the transcripts instead of checking them (CTXKIT_TRANSCRIPTS_WRITE=1). */
export const WRITE_TRANSCRIPTS = Deno.env.get("CTXKIT_TRANSCRIPTS_WRITE") === "1";

/** Write what `run` printed into `t`'s block of the markdown (HOME spelled as the docs do). */
export function writeTranscript(t: Transcript, run: TranscriptRun, place: TranscriptPlace): void {
  const body = t.steps.map((step, i) => {
    const printed = spellHome(run.outputs[i] ?? "", place);
    return `$ ${step.command}\n${printed}`;
  }).join("");
  // Read afresh: an earlier write may have moved the block.
  const { block } = transcript(t.name);
  const path = join(REPO, block.file);
  const text = readFileSync(path, "utf8").split("\n");
  // The body follows the opening fence (1-based line `block.line`, so 0-based index of the body).
  text.splice(block.line, lines(block.body).length, ...lines(body));
  writeFileSync(path, text.join("\n"));
}
