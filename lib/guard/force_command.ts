/**
 * How the running tool spells a forced restore (`references/context-guard.md#may-restore`): each
 * guard command line registers its own at start-up, and every `RESTORE_REFUSED:` line's hint
 * (`refusal.ts`) names it. A module of its own, without imports, so registering costs the hook-path
 * commands nothing.
 *
 * @module
 */

/** A file to restore by force: its root-relative path, the path typed (or joined) and its absolute path. */
export interface ForcedFile {
  /** The argument (context-guard: the logical path under the manifest root). */
  arg: string;
  /** The absolute path (text-guard: physical, under its root). */
  abs: string;
}

/** The command that restores `target` of `runDir` anyway, for the root `root`. */
export type ForceCommand = (runDir: string, target: ForcedFile, root: string) => string;

let registered: ForceCommand | undefined;

/** Register how the running tool spells its forced restore. */
export function setForceCommand(command: ForceCommand | undefined): void {
  registered = command;
}

/** The registered spelling, when a command line registered one. */
export function forceCommand(): ForceCommand | undefined {
  return registered;
}
