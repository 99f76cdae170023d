/**
 * One read of each file per `--loaded` run (`references/context-scan.md#performance`): inside
 * {@linkcode withOneReadEach}, the inventory's measurement of a small file keeps its text, and the
 * loading model's reads of a path are answered by the first one — each file is opened once a run,
 * and the inventory and both models see one version of it.
 *
 * @module
 */

/** A file as the loading model reads it: its text, or why there is none. */
export type TextRead =
  | { kind: "text"; text: string; size: number }
  | { kind: "large"; size: number }
  | { kind: "missing" }
  | { kind: "unreadable" };

/**
 * Files up to this size keep their text when the inventory measures them inside a run: the model
 * reads instruction files, skills, agents and commands, all far smaller; a larger file is read on
 * demand, if the model asks for it at all.
 */
export const SHARED_TEXT_BYTES = 256 * 1024;

const decoder = new TextDecoder();

/** The model's text of `bytes` (UTF-8, a leading BOM dropped, bad sequences replaced). */
export function decodeText(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** The run's small files are read into one buffer ({@linkcode scratchBuffer}) up to this size. */
const SCRATCH_BYTES = 64 * 1024;
let scratch: Uint8Array | undefined;

/**
 * One buffer, reused, for the small files a run reads whole and decodes at once: no buffer is
 * allocated (and collected) a file. A view of it is valid until the next read into it.
 */
export function scratchBuffer(): Uint8Array {
  scratch ??= new Uint8Array(SCRATCH_BYTES);
  return scratch;
}

/** The reads of the current {@linkcode withOneReadEach} run, by path. */
let memo: Map<string, TextRead> | undefined;
/** The current run's other answers ({@linkcode runTable}), by table name. */
let tables: Map<string, Map<string, unknown>> | undefined;

/**
 * `fn` run with every read of one path answered by its first read (nested runs share the outer
 * one's reads).
 */
export function withOneReadEach<T>(fn: () => T): T {
  const outer = memo;
  const outerTables = tables;
  memo ??= new Map();
  tables ??= new Map();
  try {
    return fn();
  } finally {
    memo = outer;
    tables = outerTables;
  }
}

/**
 * The current run's table `name` (one per run, empty at its start), or undefined outside a run:
 * for answers derived from the run's files alone — a parse of a text, a path's real path — so a
 * run computes each once.
 */
export function runTable<V>(name: string): Map<string, V> | undefined {
  if (tables === undefined) return undefined;
  let table = tables.get(name);
  if (table === undefined) {
    table = new Map();
    tables.set(name, table);
  }
  return table as Map<string, V>;
}

/** True inside a {@linkcode withOneReadEach} run: a measured file's text is worth keeping. */
export function sharingReads(): boolean {
  return memo !== undefined;
}

/** The run's read of `path`, if there was one. */
export function recalled(path: string): TextRead | undefined {
  return memo?.get(path);
}

/** Keep `read` as the run's read of `path` (outside a run: nothing). */
export function remember(path: string, read: TextRead): void {
  memo?.set(path, read);
}

/**
 * The current run's answers to "where does the link at this path lead" (null: it is no link), or
 * undefined outside a run: a walk that met a file records that it is none.
 */
export function linkTable(): Map<string, string | null> | undefined {
  return runTable<string | null>("link");
}
