/**
 * The command line that runs this very tool again, for every command ctxkit prints or records for
 * a user to run (a manifest's `restore_cmd`, the prose git-hook block): the absolute path of the
 * runtime in use, and of the script or bundle, so it runs as printed from any directory and any
 * `PATH` (`references/output.md#printed-commands`).
 *
 * It also knows how the tool was started — source, bundle, compiled binary or a wrapper script —
 * which `--help` and `--version` name (`references/cli.md#the-form-it-runs-as`).
 *
 * @module
 */

import { basename, isBelow, logicalCwd } from "../paths.ts";
import { printable } from "../text.ts";
import { writeOutRaw } from "./output.ts";

/**
 * The variable a wrapper script sets to the name it is run by (its `$0`), so `--help` names the
 * wrapper, not the bundle behind it (`references/cli.md#the-form-it-runs-as`). The tool removes it
 * from its own environment at start, so no child (git, claude, a hook running another tool) ever
 * reads one meant for its parent.
 */
export const INVOKED_AS_VARIABLE = "CTXKIT_INVOKED_AS";

/** The running tool: its name, its script, and how it was started. */
export interface Self {
  /** The tool's name: `context-scan`, `context-guard`, `text-guard`, `prose`. */
  readonly tool: string;
  /** Absolute path of the running script (source or bundle; for a binary, its embedded copy). */
  readonly scriptPath: string;
  /** The wrapper's name, when a wrapper started the tool (`CTXKIT_INVOKED_AS`). */
  readonly invokedAs?: string;
}

/**
 * The running tool from its bin's `import.meta`: the script path, and the wrapper's name taken out
 * of the environment (see {@linkcode INVOKED_AS_VARIABLE}).
 *
 * @example
 * ```ts ignore
 * const self = selfOf(import.meta, "context-guard");
 * ```
 */
export function selfOf(
  meta: { readonly url: string; readonly filename?: string },
  tool: string,
): Self {
  const scriptPath = scriptPathOf(meta);
  let invokedAs: string | undefined;
  try {
    invokedAs = Deno.env.get(INVOKED_AS_VARIABLE);
    if (invokedAs !== undefined) Deno.env.delete(INVOKED_AS_VARIABLE);
  } catch { /* no env permission: no wrapper's name, and no child to hide it from */ }
  return invokedAs === undefined || invokedAs === ""
    ? { tool, scriptPath }
    : { tool, scriptPath, invokedAs };
}

/** How a tool was started (`references/cli.md#the-form-it-runs-as`). */
export type Form = "source" | "bundle" | "binary" | "wrapper";

/**
 * How the running tool was started, and the name that runs it that way, as `--help` prints it: a
 * wrapper by the name it was run by; a compiled binary by its file name; a source or bundle by its
 * path — relative to the working directory when below it (`bin/context-guard.ts`,
 * `dist/context-guard.js`), else absolute.
 */
export function invocation(self: Self): { form: Form; program: string } {
  if (self.invokedAs !== undefined) return { form: "wrapper", program: self.invokedAs };
  if (Deno.build.standalone) return { form: "binary", program: basename(Deno.execPath()) };
  const form = self.scriptPath.endsWith(".ts") ? "source" : "bundle";
  let cwd: string | undefined;
  try {
    cwd = logicalCwd();
  } catch { /* no read permission on the cwd: the absolute path */ }
  const program = cwd !== undefined && isBelow(self.scriptPath, cwd)
    ? self.scriptPath.slice(cwd === "/" ? 1 : cwd.length + 1)
    : self.scriptPath;
  return { form, program };
}

/** The name that runs the tool as it was started ({@linkcode invocation}'s), printed safely. */
export function programName(self: Self): string {
  return printable(invocation(self).program);
}

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

/**
 * Answer `--help` (the text `help` gives for this tool's {@linkcode programName}) or `--version`
 * (`lib/_cli/version.ts`, loaded only then) on stdout; the exit code is 0.
 */
export async function answer(
  asks: "help" | "version",
  self: Self,
  help: (program: string) => string,
): Promise<0> {
  const out = asks === "help"
    ? help(programName(self))
    : (await import("./version.ts")).versionLine(self);
  writeOutRaw(out.endsWith("\n") ? out : `${out}\n`);
  return 0;
}
