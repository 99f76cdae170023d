/**
 * Skill and command listing entries as Claude Code writes them (`references/context-scan.md#loaded-figures`):
 * `- name: description`, the description from the frontmatter (or the body's first line), capped;
 * skills one level below a `skills` folder, commands every `*.md` below a `commands` folder.
 *
 * @module
 */

import { basename, dirname } from "../../paths.ts";
import { parseFrontmatter, scalar, splitFrontmatter } from "../frontmatter.ts";
import { SKILL_LISTING } from "../loading_rules.ts";
import type { LimitCode, Loading, RootLabel } from "../schema.ts";
import { isFileToRead, listNames, markdownBelow, readText } from "./read.ts";
import { type LoadedSource, utf8 } from "./source.ts";

/**
 * The listing entry bytes of a `SKILL.md` outside Claude Code's layout, as it would be listed
 * (`- dir: description\n`, uncapped): the potential of its listing row; 0 when it lists nothing.
 */
export function skillListingPotential(path: string): number {
  const dir = basename(dirname(path));
  return listingEntry(path, dir, "project", "skill-listing", "body", true)?.source.potential ?? 0;
}

/** One listing entry before the budget. */
export interface Entry {
  readonly source: LoadedSource;
  /** `- name`. */
  readonly nameOnly: string;
  /** `- name: description` (cut at the cap). */
  readonly full: string;
}

/** The description a skill or command lists, or undefined when it lists none. */
function listedDescription(
  fields: ReadonlyMap<string, unknown>,
  body: string,
  fallback: "body" | "command" | "none",
): string | undefined {
  // Each run of tabs, carriage returns and newlines becomes one space; spaces stay as they are.
  const spaced = (s: string) => s.replace(/[\t\r\n]+/g, " ");
  const collapse = (s: string) => spaced(s).trim();
  // A list is no description (observed: skills-frontmatter-quirks).
  const written = fields.get("description");
  let description = typeof written === "string" ? collapse(written) : "";
  if (description === "" && fallback !== "none") {
    const first = body.split("\n").find((l) => l.trim() !== "");
    // Heading marks go when text follows them (`##` alone stays).
    description = first === undefined ? "" : collapse(first.replace(/^\s*#+\s+/, ""));
    // A command with neither a description nor a body (observed: commands-custom).
    if (description === "" && fallback === "command") description = "Custom command";
  }
  const when = scalar(fields.get("when_to_use") as string | string[] | undefined);
  // when_to_use keeps what a block's final newline becomes (observed: skills-frontmatter-quirks).
  const whenText = when === undefined || when.trim() === "" ? "" : spaced(when.trimStart());
  if (description === "" && whenText === "") return undefined;
  return whenText === "" ? description : `${description} - ${whenText}`;
}

function cut(description: string): { text: string; capped: boolean } {
  const max = SKILL_LISTING.maxChars;
  return description.length > max
    ? { text: `${description.slice(0, max - 1)}…`, capped: true }
    : { text: description, capped: false };
}

/**
 * Claude Code's truthy frontmatter flag: `1`, `true`, `yes` or `on`, any case (the listing and the
 * Skill tool read `disable-model-invocation` alike).
 */
export function isTrue(value: unknown): boolean {
  return typeof value === "string" &&
    ["1", "true", "yes", "on"].includes(value.trim().toLowerCase());
}

/** A listing file read once: its frontmatter fields and its body (undefined: nothing to read). */
function readListed(
  path: string,
): { fields: ReadonlyMap<string, unknown>; body: string; size: number } | undefined {
  const read = readText(path);
  if (read.kind !== "text") return undefined;
  const split = splitFrontmatter(read.text.replace(/^\uFEFF/, ""));
  return {
    fields: split.yaml === undefined ? new Map() : parseFrontmatter(split.yaml),
    body: split.body,
    size: read.size,
  };
}

function listingEntry(
  path: string,
  shownName: string | ((fields: ReadonlyMap<string, unknown>) => string),
  root: RootLabel,
  loading: Loading,
  fallback: "body" | "command" | "none",
  evenIfDisabled = false,
): Entry | undefined {
  const listed = readListed(path);
  if (listed === undefined) return undefined;
  const { fields, body } = listed;
  if (!evenIfDisabled && isTrue(fields.get("disable-model-invocation"))) return undefined;
  const description = listedDescription(fields, body, fallback);
  if (description === undefined) return undefined;
  const shown = typeof shownName === "string" ? shownName : shownName(fields);
  const capped = cut(description);
  const nameOnly = `- ${shown}`;
  const full = `${nameOnly}: ${capped.text}`;
  const limits = new Set<LimitCode>(capped.capped ? ["description-capped"] : []);
  return {
    nameOnly,
    full,
    source: {
      path,
      root,
      category: "skills",
      kind: "field:description",
      loading,
      // `- name: description\n` and `- name: shown\n`, counted in parts (not built to be counted).
      potential: utf8(nameOnly) + 2 + utf8(description) + 1,
      loaded: utf8(full) + 1,
      limits,
      name: shown,
      fileBytes: listed.size,
    },
  };
}

/**
 * The skills of a `skills` folder: `<dir>/SKILL.md`, one level (`entries`: its listing, when the
 * caller has it).
 */
export function skillFolder(
  dir: string,
  entries: readonly Deno.DirEntry[] = listNames(dir),
): { path: string; name: string }[] {
  return entries
    .filter((e) => isFileToRead(`${dir}/${e.name}/SKILL.md`))
    .map((e) => ({ path: `${dir}/${e.name}/SKILL.md`, name: e.name }));
}

/**
 * The listing entries of `skills` (each a `SKILL.md` and its folder's name), named `prefix` + the
 * folder; a frontmatter `name` other than the folder reads `folder (name)`.
 */
export function skillEntries(
  skills: readonly { path: string; name: string }[],
  root: RootLabel,
  prefix: string,
  considered: Set<string>,
): Entry[] {
  const out: Entry[] = [];
  for (const skill of skills) {
    considered.add(skill.path);
    const name = `${prefix}${skill.name}`;
    const shown = (fields: ReadonlyMap<string, unknown>) => {
      const own = scalar(fields.get("name") as string | string[] | undefined);
      return own !== undefined && own !== "" && own !== skill.name &&
          /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/.test(own)
        ? `${name} (${prefix}${own})`
        : name;
    };
    const e = listingEntry(skill.path, shown, root, "skill-listing", "body");
    if (e !== undefined) out.push(e);
  }
  return out;
}

/** The commands of a `commands` folder: every `**\/*.md`, named `a:b` for `a/b.md`. */
export function commandFiles(dir: string): { path: string; name: string }[] {
  return markdownBelow(dir).map((path) => ({
    path,
    name: path.slice(dir.length + 1, -3).replaceAll("/", ":"),
  }));
}

/** The listing entries of `files` (commands), each named `prefix` + its name. */
export function commandEntries(
  files: { path: string; name: string; root: RootLabel }[],
  prefix: string,
): Entry[] {
  const out: Entry[] = [];
  for (const f of files) {
    const name = `${prefix}${f.name}`;
    // A project or global command without a description lists its first line; a plugin's is absent.
    const e = listingEntry(
      f.path,
      name,
      f.root,
      "command-listing",
      prefix === "" ? "command" : "none",
    );
    if (e !== undefined) out.push(e);
  }
  return out;
}
