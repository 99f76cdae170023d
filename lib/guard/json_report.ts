/**
 * `--json` for every context-guard and text-guard command (`references/context-guard.md#json`): one
 * document on stdout instead of the result lines, built from those very lines — each is matched by
 * its template (the literal parts of its {@linkcode Text}), its values taken exactly as the command
 * passed them — so the document can never say something the lines would not. stderr, the exit code
 * and the exit line stay as they are. Schema: `references/schemas/guard-result.schema.json`
 * ({@linkcode GuardResultSchema}).
 *
 * @module
 */

import * as z from "../_zod.ts";
import { CtxkitError } from "../errors.ts";
import { firstLine, isPermissionError, isSandboxRefusal } from "../_fs/errors.ts";
import { escapeUnsafeJson, plain, splitLines, type Text, type TextValue } from "../text.ts";
import { writeOut } from "../_cli/output.ts";
import { errorText } from "./errors.ts";
import type { Reporter } from "./report.ts";

const LedgeredSchema = z.strictObject({
  token: z.string(),
  row: z.int(),
  range: z.string(),
  survivor: z.string(),
});

const FileOutcomeSchema = z.strictObject({
  path: z.string(),
  run_dir: z.optional(z.string()),
  snapshotted: z.optional(z.literal(true)),
  checkpointed: z.optional(z.literal(true)),
  missing: z.optional(z.array(z.string())),
  ledgered: z.optional(z.array(LedgeredSchema)),
  uncovered: z.optional(z.array(z.string())),
  gate: z.optional(z.enum(["pass", "ledgered", "fail"])),
  action: z.optional(z.enum(["kept", "restored", "refused"])),
  restored: z.optional(z.literal(true)),
  displaced_to: z.optional(z.string()),
  refused: z.optional(z.literal(true)),
  current: z.optional(z.string()),
  original: z.optional(z.string()),
  force_command: z.optional(z.string()),
  problem: z.optional(z.enum(["missing-from-snapshot", "snapshot-damaged", "checksum-mismatch"])),
  would: z.optional(z.enum(["overwrite", "create", "keep", "refuse", "delete"])),
});

const RunDirSchema = z.strictObject({
  run_dir: z.string(),
  manifest: z.optional(z.string()),
  result: z.optional(z.enum(["ok", "failed"])),
  label: z.optional(z.string()),
  mismatches: z.optional(z.int()),
  message: z.optional(z.string()),
});

/** The document `--json` prints (`references/context-guard.md#json`). */
export const GuardResultSchema = z.deferred(() =>
  z.strictObject({
    schema: z.literal("ctxkit.guard-result/1"),
    tool: z.enum(["context-guard", "text-guard"]),
    command: z.string(),
    exit_code: z.int(),
    ok: z.boolean(),
    error: z.optional(z.string()),
    root: z.optional(z.string()),
    run_dirs: z.array(RunDirSchema),
    files: z.array(FileOutcomeSchema),
    pruned: z.array(z.string()),
    state: z.optional(z.strictObject({ status: z.string(), path: z.string() })),
    runs: z.optional(
      z.array(z.strictObject({ name: z.string(), files: z.int(), layer: z.string() })),
    ),
    summary: z.strictObject({
      snapshot_files: z.optional(z.int()),
      files_failed: z.optional(z.int()),
      rollback_result: z.optional(z.enum(["ok", "FAILED"])),
      layers: z.optional(z.int()),
      run: z.optional(z.string()),
      merged: z.optional(z.string()),
      dry_run: z.optional(z.enum(["ok", "refused", "damaged"])),
    }),
    lines: z.array(z.strictObject({ stream: z.enum(["stdout", "stderr"]), text: z.string() })),
  })
);

/** The `--json` document. */
export type GuardResult = z.infer<typeof GuardResultSchema>;
type FileOutcome = GuardResult["files"][number];
type RunDirOutcome = GuardResult["run_dirs"][number];

/** A line's template: its literal parts, the values marked. */
function templateOf(line: Text): string {
  return line.strings.join("\u0001");
}

function str(v: TextValue | undefined): string {
  return v === undefined
    ? ""
    : typeof v === "string"
    ? v
    : typeof v === "number"
    ? String(v)
    : "verbatim" in v
    ? v.verbatim
    : plain(v);
}

function num(v: TextValue | undefined): number {
  return typeof v === "number" ? v : Number(str(v));
}

/** Builds the document from the lines a command prints, in order. */
class DocumentBuilder {
  readonly doc: Omit<GuardResult, "exit_code" | "ok">;
  #runDir: string | undefined;

  constructor(tool: GuardResult["tool"], command: string) {
    this.doc = {
      schema: "ctxkit.guard-result/1",
      tool,
      command,
      run_dirs: [],
      files: [],
      pruned: [],
      summary: {},
      lines: [],
    };
  }

  /** The run dir later lines belong to (listed once). */
  runDir(dir: string): RunDirOutcome {
    this.#runDir = dir;
    for (const f of this.doc.files) if (f.run_dir === undefined) f.run_dir = dir;
    let entry = this.doc.run_dirs.find((r) => r.run_dir === dir);
    if (entry === undefined) {
      entry = { run_dir: dir };
      this.doc.run_dirs.push(entry);
    }
    return entry;
  }

  /** The outcome of `path` in the current run dir (made on first mention). */
  file(path: string): FileOutcome {
    const dir = this.#runDir;
    let f = this.doc.files.find((x) =>
      x.path === path && (x.run_dir === dir || x.run_dir === undefined)
    );
    if (f === undefined) {
      f = dir === undefined ? { path } : { path, run_dir: dir };
      this.doc.files.push(f);
    }
    return f;
  }

  #last: FileOutcome | undefined;

  /** Take one line a command printed. */
  take(stream: "stdout" | "stderr", line: Text): void {
    this.doc.lines.push({ stream, text: plain(line) });
    const handle = (stream === "stdout" ? STDOUT : STDERR)[templateOf(line)];
    handle?.(this, line.values);
  }

  /** The file the last `FILE:`/`RESTORE_REFUSED:` line named. */
  get last(): FileOutcome | undefined {
    return this.#last;
  }

  set last(f: FileOutcome | undefined) {
    this.#last = f;
  }
}

type Handler = (b: DocumentBuilder, v: readonly TextValue[]) => void;

const K = (...parts: string[]) => parts.join("\u0001");

const result = (ok: boolean): Handler => (b, v) => {
  const r = b.runDir(str(v[v.length - 1]));
  r.result = ok ? "ok" : "failed";
  r.label = str(v[0]);
  if (ok) r.mismatches = num(v[1]);
};

/** A `GATE:` or `ACTION:` line: the verdict on the file the last `FILE:` line named. */
const verdict = (v: Pick<FileOutcome, "gate" | "action">): Handler => (b) => {
  if (b.last !== undefined) Object.assign(b.last, v);
};

const STDOUT: Readonly<Record<string, Handler>> = {
  [K("ROOT: ", "")]: (b, v) => b.doc.root = str(v[0]),
  [K("SNAPSHOT: ", " files")]: (b, v) => b.doc.summary.snapshot_files = num(v[0]),
  [K("  ", "")]: (b, v) => b.file(str(v[0])).snapshotted = true,
  [K("RUN_DIR: ", "")]: (b, v) => {
    const dir = str(v[0]);
    b.runDir(dir);
    for (const f of b.doc.files) if (f.snapshotted && f.run_dir === undefined) f.run_dir = dir;
  },
  [K("MANIFEST: ", "")]: (b, v) => {
    const m = str(v[0]);
    const last = b.doc.run_dirs.at(-1);
    if (last !== undefined) last.manifest = m;
  },
  [K("PRUNED: ", "")]: (b, v) => b.doc.pruned.push(str(v[0])),
  [K("CHECKPOINT: ", "")]: (b, v) => b.file(str(v[0])).checkpointed = true,
  [K("FILE: ", "")]: (b, v) => {
    b.last = b.file(str(v[0]));
    b.last.missing = [];
  },
  [K("  - ", "")]: (b, v) => b.last?.missing?.push(str(v[0])),
  [K("LEDGERED: ", " (row ", ": ", " -> ", ")")]: (b, v) => {
    if (b.last === undefined) return;
    (b.last.ledgered ??= []).push({
      token: str(v[0]),
      row: num(v[1]),
      range: str(v[2]),
      survivor: str(v[3]),
    });
  },
  [K("UNCOVERED: ", "")]: (b, v) => {
    if (b.last !== undefined) (b.last.uncovered ??= []).push(str(v[0]));
  },
  [K("GATE: PASS")]: verdict({ gate: "pass" }),
  [K("GATE: PASS (every miss ledgered)")]: verdict({ gate: "ledgered" }),
  [K("GATE: FAIL")]: verdict({ gate: "fail" }),
  [K("ACTION: kept")]: verdict({ action: "kept" }),
  [K("ACTION: restored")]: verdict({ action: "restored" }),
  [K("ACTION: kept (restore refused)")]: verdict({ action: "refused" }),
  [K("FILES_FAILED: ", "")]: (b, v) => b.doc.summary.files_failed = num(v[0]),
  [K("ROLLBACK: whole run (gate failed) ", "")]: (b, v) => b.runDir(str(v[0])),
  [K("ROLLBACK: whole run (merge unproven) ", "")]: (b, v) => b.runDir(str(v[0])),
  [K("ROLLBACK: ", "")]: (b, v) => b.runDir(str(v[0])),
  [K("DRY_RUN: ", "")]: (b, v) => b.runDir(str(v[0])),
  [K("RESTORED: ", "")]: (b, v) => b.file(str(v[0])).restored = true,
  [K("DISPLACED: ", " -> ", "")]: (b, v) => b.file(str(v[0])).displaced_to = str(v[1]),
  [K("", ": ", " mismatches, 0 missing from snapshot (", ")")]: result(true),
  [K("RUN: FAILED - every file of ", " is back at its pre-edit bytes")]: (b, v) =>
    b.doc.summary.run = `FAILED - every file of ${str(v[0])} is back at its pre-edit bytes`,
  [K("ROLLBACK_RESULT: ", " layer(s), ", "")]: (b, v) => {
    b.doc.summary.layers = num(v[0]);
    b.doc.summary.rollback_result = str(v[1]) === "ok" ? "ok" : "FAILED";
  },
  [K("MERGED_VERIFIED: ", " -> ", "")]: (b, v) => b.doc.summary.merged = str(v[0]),
  [K("STATE: ", " ", "")]: (b, v) => b.doc.state = { status: str(v[0]), path: str(v[1]) },
  [K("STATE: written ", "")]: (b, v) => b.doc.state = { status: "written", path: str(v[0]) },
  [K("STATE: restored ", "")]: (b, v) => b.doc.state = { status: "restored", path: str(v[0]) },
  [K("STATE: removed ", "")]: (b, v) => b.doc.state = { status: "removed", path: str(v[0]) },
  [K("| ", " | ", " | ", " |")]: (b, v) =>
    (b.doc.runs ??= []).push({ name: str(v[0]), files: num(v[1]), layer: str(v[2]) }),
  [K("| Backup | Files | Layer |")]: (b) => b.doc.runs ??= [],
  [K("WOULD_OVERWRITE: ", "")]: (b, v) => b.file(str(v[0])).would = "overwrite",
  [K("WOULD_OVERWRITE: ", " (current bytes kept in ", ")")]: (b, v) => {
    const f = b.file(str(v[0]));
    f.would = "overwrite";
    f.displaced_to = str(v[1]);
  },
  [K("WOULD_CREATE: ", "")]: (b, v) => b.file(str(v[0])).would = "create",
  [K("WOULD_KEEP: ", " (already at its snapshot bytes)")]: (b, v) =>
    b.file(str(v[0])).would = "keep",
  [K("WOULD_KEEP: ", " (changed since this run wrote it)")]: (b, v) =>
    b.file(str(v[0])).would = "keep",
  [K("WOULD_KEEP: ", " (refusing to write through ", ")")]: (b, v) =>
    b.file(str(v[0])).would = "keep",
  [K("WOULD_DELETE: ", " (the ratchet state this run wrote)")]: (b, v) =>
    b.file(str(v[0])).would = "delete",
  [K("WOULD_REFUSE: ", " (current bytes lack matching draft ownership)")]: (b, v) =>
    b.file(str(v[0])).would = "refuse",
  [K("DRY_RUN_RESULT: ", " (", ")")]: (b, v) => {
    const r = b.runDir(str(v[1]));
    const verdict = str(v[0]);
    r.result = verdict === "ok" ? "ok" : "failed";
    if (verdict === "ok" || verdict === "refused" || verdict === "damaged") {
      b.doc.summary.dry_run = b.doc.summary.dry_run === undefined || verdict !== "ok"
        ? verdict
        : b.doc.summary.dry_run;
    }
  },
};

const failedRunDir: Handler = (b, v) => {
  const r = b.runDir(str(v[v.length - 1]));
  r.result = "failed";
  r.label = str(v[0]);
};

const STDERR: Readonly<Record<string, Handler>> = {
  [K("RESTORE_REFUSED: ", " (current bytes lack matching draft ownership)")]: (b, v) => {
    b.last = b.file(str(v[0]));
    b.last.refused = true;
  },
  [K("  current: ", " (kept) · original: ", "")]: (b, v) => {
    if (b.last === undefined) return;
    b.last.current = str(v[0]);
    b.last.original = str(v[1]);
  },
  [K("  to restore it anyway, keeping the current bytes in ", ": ", "")]: (b, v) => {
    if (b.last !== undefined) b.last.force_command = str(v[1]);
  },
  [K("❌ MISSING FROM SNAPSHOT: ", " (manifest lists it, ", " has no copy)")]: (b, v) =>
    b.file(str(v[0])).problem = "missing-from-snapshot",
  [K("❌ SNAPSHOT CHECKSUM MISMATCH: ", "")]: (b, v) =>
    b.file(str(v[0])).problem = "snapshot-damaged",
  [K("STATE: kept ", " (changed since this run wrote it)")]: (b, v) =>
    b.doc.state = { status: "kept", path: str(v[0]) },
  [K("STATE: kept ", " (refusing to write through ", ")")]: (b, v) =>
    b.doc.state = { status: "kept", path: str(v[0]) },
  [K("❌ CHECKSUM MISMATCH: ", "")]: (b, v) => b.file(str(v[0])).problem = "checksum-mismatch",
  [K("", ": FAILED - snapshot incomplete or damaged; current bytes preserved (", ")")]:
    failedRunDir,
  [K("", ": FAILED - restoration refused; current bytes preserved (", ")")]: failedRunDir,
  [K("", ": FAILED - restoration failed; current bytes preserved (", ")")]: failedRunDir,
  [
    K(
      "",
      ": FAILED - restoration stopped at ",
      "; ",
      " of ",
      " file(s) restored (the RESTORED: lines), every other file keeps its current bytes (",
      ")",
    )
  ]: failedRunDir,
  [K("RUN: FAILED - recovery incomplete; inspect preserved current files in ", "")]: (b, v) =>
    b.doc.summary.run = `FAILED - recovery incomplete; inspect preserved current files in ${
      str(v[0])
    }`,
  [
    K(
      "RUN: FAILED - snapshot incomplete or damaged; nothing verified, current bytes preserved (",
      ")",
    )
  ]: (b, v) =>
    b.doc.summary.run =
      `FAILED - snapshot incomplete or damaged; nothing verified, current bytes preserved (${
        str(v[0])
      })`,
};

/** The exit code the command line gives `e` (as `runMain` maps it). */
function exitCodeOf(e: unknown): number {
  if (e instanceof CtxkitError) return e.exitCode;
  return isSandboxRefusal(e) || isPermissionError(e) ? 2 : 1;
}

/** A reporter that collects a command's lines for its `--json` document. */
export interface JsonReporter extends Reporter {
  /** Name the run dir the lines that follow belong to (a command's chosen run). */
  runDir(dir: string): void;
  /** The document for a command that returned `exitCode`, or died with `error`. */
  document(outcome: { exitCode: number } | { error: unknown }): GuardResult;
  /**
   * Run the command, then print its document on stdout — also when it dies, before the error goes
   * on (the exit line and code are the command line's as always).
   */
  print(command: () => Promise<number>): Promise<number>;
}

/**
 * A reporter for `--json`: stdout lines are kept for the document (never printed); stderr lines are
 * printed through `stderr` as always, and kept too.
 */
export function jsonReporter(
  tool: GuardResult["tool"],
  command: string,
  stderr: Reporter,
): JsonReporter {
  const builder = new DocumentBuilder(tool, command);
  const reporter: JsonReporter = {
    out: (line) => {
      for (const part of splitLines(line)) builder.take("stdout", part);
    },
    err: (line) => {
      stderr.err(line);
      for (const part of splitLines(line)) builder.take("stderr", part);
    },
    runDir: (dir) => void builder.runDir(dir),
    document: (outcome) => {
      const exitCode = "exitCode" in outcome ? outcome.exitCode : exitCodeOf(outcome.error);
      const { schema, tool, command, root, run_dirs, files, pruned, state, runs, summary, lines } =
        builder.doc;
      const e = "error" in outcome ? outcome.error : undefined;
      // Key order is the document's: what happened first, then the details, then every line.
      return {
        schema,
        tool,
        command,
        exit_code: exitCode,
        ok: exitCode === 0,
        ...(e === undefined
          ? {}
          : { error: e instanceof CtxkitError ? plain(errorText(e)) : firstLine(e) }),
        ...(root === undefined ? {} : { root }),
        run_dirs,
        files,
        pruned,
        ...(state === undefined ? {} : { state }),
        ...(runs === undefined ? {} : { runs }),
        summary,
        lines,
      };
    },
    print: async (command) => {
      // One line: every name in it escaped, so no character of a name reaches a terminal raw.
      const write = (doc: GuardResult) => writeOut(escapeUnsafeJson(JSON.stringify(doc)));
      let rc: number;
      try {
        rc = await command();
      } catch (e) {
        write(reporter.document({ error: e }));
        throw e;
      }
      write(reporter.document({ exitCode: rc }));
      return rc;
    },
  };
  return reporter;
}
