/**
 * What an I/O error means: its OS code, its reason text, and whether it is the Deno sandbox
 * speaking (a missing grant, or a path Deno refuses under any grant) rather than the file system.
 *
 * @module
 */

const REASONS: Readonly<Record<string, string>> = {
  EACCES: "Permission denied",
  EPERM: "Operation not permitted",
  ENOENT: "No such file or directory",
  ENOTDIR: "Not a directory",
  EISDIR: "Is a directory",
  ELOOP: "Too many levels of symbolic links",
  EIO: "Input/output error",
  ENAMETOOLONG: "File name too long",
  EMFILE: "Too many open files",
  ENFILE: "Too many open files in system",
  ENOSPC: "No space left on device",
  EROFS: "Read-only file system",
  EEXIST: "File exists",
  ENOTEMPTY: "Directory not empty",
  EXDEV: "Invalid cross-device link",
  EBADF: "Bad file descriptor",
  EPIPE: "Broken pipe",
};

/** The OS error code of an I/O error (`ENOENT`…), or `undefined`. */
export function errorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** The OS reason text of an error, like `strerror` (`Permission denied`). */
export function osReason(e: unknown): string {
  if (isSandboxRefusal(e)) return "Operation not permitted (refused by the Deno sandbox)";
  const code = errorCode(e);
  if (code !== undefined) return REASONS[code] ?? code;
  return firstLine(e);
}

/** True for "nothing is there": not found, or a component is not a directory. */
export function isAbsent(e: unknown): boolean {
  const code = errorCode(e);
  return code === "ENOENT" || code === "ENOTDIR";
}

/** The first line of an error's message, trimmed: never a stack trace. */
export function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split("\n")[0].trim();
}

function isNotCapable(e: unknown): boolean {
  const ctor = (Deno.errors as unknown as Record<string, unknown>).NotCapable;
  return typeof ctor === "function" && e instanceof (ctor as new () => Error);
}

/**
 * True when Deno refuses a path that the granted permissions cover: special paths such as
 * `/proc/self/environ` need `--allow-all` whatever `--allow-read` says. Such a refusal is a
 * property of the path, reported like an OS error, never as a missing grant.
 */
export function isSandboxRefusal(e: unknown): boolean {
  return isNotCapable(e) && /Requires all access to/.test(firstLine(e));
}

/** The path a sandbox refusal names (`Requires all access to "<path>"`), or `undefined`. */
export function sandboxRefusedPath(e: unknown): string | undefined {
  if (!isSandboxRefusal(e)) return undefined;
  return /Requires all access to "(.*)"/.exec(firstLine(e))?.[1];
}

/**
 * True when `e` is Deno's missing-permission error for a grant the command line could add
 * (`NotCapable`, or `PermissionDenied` naming a grant on old Deno), not a sandbox refusal.
 */
export function isPermissionError(e: unknown): boolean {
  if (isNotCapable(e)) return !isSandboxRefusal(e);
  const denied = (Deno.errors as unknown as Record<string, unknown>).PermissionDenied;
  return typeof denied === "function" && e instanceof (denied as new () => Error) &&
    /Requires .* access|--allow-/.test(firstLine(e));
}

/**
 * Rethrow a missing-grant error (a problem of the command line, reported as such by the bin);
 * every other error is the caller's to classify.
 */
export function rethrowPermission(e: unknown): void {
  if (isPermissionError(e)) throw e;
}
