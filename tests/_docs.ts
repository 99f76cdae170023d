/**
 * The shell blocks of the documentation, read from the markdown itself so that a test runs each
 * recipe and transcript exactly as printed and doc and test cannot drift
 * (`references/reliability.md#the-docs-run-as-printed`).
 *
 * A fenced block is classified by the HTML comment on the last non-blank line above it:
 * `<!-- recipe: <name> -->` (a test runs it as printed), `<!-- transcript: <name> -->` (commands
 * with what they print: `tests/_transcripts.ts` runs them and compares) or
 * `<!-- not a recipe: <why> -->` (a synopsis, a block a tool writes…). `tests/recipes_test.ts`
 * requires every shell block of `README.md` and `references/*.md` to carry one of the three, and
 * every `console` block to be a transcript.
 *
 * @module
 */

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./_helpers.ts";

/** One fenced block of a markdown file. */
export interface DocBlock {
  /** The file, relative to the repository. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's info string (`sh`, `console`…), "" when none. */
  info: string;
  /** The block's text, its indentation removed, ending with `\n`. */
  body: string;
  /** `recipe: <name>`, `transcript: <name>`, `not a recipe: <why>`, or undefined when unmarked. */
  mark?: string;
}

/** The documentation files whose shell blocks are checked: README.md and references/*.md. */
export function docFiles(): string[] {
  const refs = readdirSync(join(REPO, "references"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `references/${f}`);
  return ["README.md", ...refs];
}

/** Every fenced block of `file` (relative to the repository), in order. */
export function docBlocks(file: string): DocBlock[] {
  const lines = readFileSync(join(REPO, file), "utf8").split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)(`{3,})(.*)$/.exec(lines[i]);
    if (open === null) continue;
    const [, indent, fence, info] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      if (lines[j].trimStart().startsWith(fence) && lines[j].trim() === fence) break;
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j]);
    }
    let k = i - 1;
    while (k >= 0 && lines[k].trim() === "") k--;
    const mark = k >= 0
      ? /^\s*<!-- (recipe: .+?|transcript: .+?|not a recipe: .+?) -->\s*$/.exec(lines[k])
      : null;
    blocks.push({
      file,
      line: i + 1,
      info: info.trim(),
      body: body.join("\n") + "\n",
      mark: mark?.[1],
    });
    i = j;
  }
  return blocks;
}

/** The blocks a reader would type into a shell: `sh`, `bash`, `shell`, `zsh`, `console`. */
export function shellBlocks(): DocBlock[] {
  return docFiles().flatMap(docBlocks).filter((b) =>
    ["sh", "bash", "shell", "zsh", "console"].includes(b.info.split(/\s/)[0])
  );
}

/** The recipe named `name` (`<!-- recipe: name -->`); throws when there is not exactly one. */
export function recipe(name: string): DocBlock {
  const found = shellBlocks().filter((b) => b.mark === `recipe: ${name}`);
  if (found.length !== 1) {
    throw new Error(`expected one recipe "${name}" in the docs, found ${found.length}`);
  }
  return found[0];
}

/** The names of every recipe in the docs, in document order. */
export function recipeNames(): string[] {
  return shellBlocks().flatMap((b) => b.mark?.startsWith("recipe: ") ? [b.mark.slice(8)] : []);
}
