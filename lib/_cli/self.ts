/**
 * The command line that runs this very tool again, for every command ctxkit prints or records for
 * a user to run (a manifest's `restore_cmd`, the prose git-hook block): the absolute path of the
 * runtime in use, and of the script or bundle, so it runs as printed from any directory and any
 * `PATH` (`references/output.md#printed-commands`).
 *
 * @module
 */

/**
 * The words that run the tool at `scriptPath` with `permissions`: a compiled binary is run
 * directly; a source script or a bundle with `--no-config`. Every import of the tools is relative
 * (npm packages are vendored in `lib/_vendor`), so no configuration is needed, and none is named:
 * a vendored copy of `bin/` and `lib/` has no `deno.json`, and one found around the script or in
 * the working directory must not change how the command runs.
 *
 * @example
 * ```ts ignore
 * import { selfCommand } from "./self.ts";
 * selfCommand("/opt/ctxkit/bin/context-guard.ts", ["--allow-all"]);
 * // ["/opt/deno/bin/deno", "run", "--allow-all", "--no-config", "/opt/ctxkit/bin/context-guard.ts"]
 * ```
 */
export function selfCommand(scriptPath: string, permissions: readonly string[]): string[] {
  if (Deno.build.standalone) return [Deno.execPath()];
  return [Deno.execPath(), "run", ...permissions, "--no-config", scriptPath];
}

/**
 * The path of the running script (source or bundle) from its `import.meta`: what
 * {@linkcode selfCommand} needs. `filename` is absent for a remote module; the URL then gives the
 * path, percent-decoded.
 *
 * @example
 * ```ts ignore
 * const scriptPath = scriptPathOf(import.meta);
 * ```
 */
export function scriptPathOf(meta: { readonly url: string; readonly filename?: string }): string {
  return meta.filename ?? decodeURIComponent(new URL(meta.url).pathname);
}
