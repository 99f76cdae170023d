/**
 * The real public repositories the observed suites read (`CTXKIT_REAL_REPOS`: a folder of
 * `<owner>+<name>` checkouts fetched beforehand, never committed) and the plugins each holds.
 *
 * @module
 */

/** The real repositories under `CTXKIT_REAL_REPOS` (`<owner>+<name>` folders), or the skip reason. */
export function realRepos(): string[] | string {
  const dir = Deno.env.get("CTXKIT_REAL_REPOS");
  if (dir === undefined || dir === "") {
    return "CTXKIT_REAL_REPOS is not set (a folder of <owner>+<name> checkouts, fetched beforehand)";
  }
  try {
    const repos = [...Deno.readDirSync(dir)].filter((e) => e.isDirectory && e.name.includes("+"))
      .map((e) => `${dir}/${e.name}`).sort();
    return repos.length > 0 ? repos : `no <owner>+<name> folder in ${dir}`;
  } catch (e) {
    return `CTXKIT_REAL_REPOS cannot be read: ${e}`;
  }
}

/** A repository's marketplace catalog entries with a folder source, or none. */
export function catalogOf(repo: string): { name: string; source: string; version?: string }[] {
  try {
    const catalog = JSON.parse(
      Deno.readTextFileSync(`${repo}/.claude-plugin/marketplace.json`),
    ) as { plugins?: { name: string; source: unknown; version?: string }[] };
    return (catalog.plugins ?? []).filter((p) => typeof p.source === "string")
      .map((p) => ({ name: p.name, source: p.source as string, version: p.version }));
  } catch {
    return [];
  }
}

/**
 * The plugins a repository holds: its marketplace catalog's folders, else the folders (itself, or
 * one level down) with a `.claude-plugin/plugin.json`; the repository itself when none.
 */
export function pluginsOf(repo: string): string[] {
  const listed = catalogOf(repo).map((p) => new URL(p.source, `file://${repo}/`).pathname);
  if (listed.length > 0) return [...new Set(listed.map((d) => d.replace(/\/$/, "")))];
  const has = (dir: string) => {
    try {
      return Deno.statSync(`${dir}/.claude-plugin/plugin.json`).isFile;
    } catch {
      return false;
    }
  };
  if (has(repo)) return [repo];
  const below = [...Deno.readDirSync(repo)].filter((e) => e.isDirectory && has(`${repo}/${e.name}`))
    .map((e) => `${repo}/${e.name}`).sort();
  return below.length > 0 ? below : [repo];
}
