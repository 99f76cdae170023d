/**
 * Complete, synchronous writes to stdout and stderr that fail loudly.
 *
 * Scripts interleave stdout and stderr lines and exit right after; synchronous writes keep the
 * order a reader of both streams sees and lose nothing at exit. A write that fails (a full disk, a
 * reader gone, an I/O error) throws {@linkcode OutputError}: the command stops there and never
 * reports success. A write to `/dev/null` succeeds, however the descriptor was opened: a parent that
 * discards the output (`>/dev/null`, Node's `stdio: "ignore"`, Python's `subprocess.DEVNULL`) and
 * a stdout closed at start-up (which the runtime replaces with `/dev/null`) are the same descriptor,
 * and no check could tell them apart. Rules: `references/output.md#write-failures`,
 * `references/output.md#discarded-output`.
 *
 * @module
 */

import { OutputError } from "../errors.ts";
import { text } from "../text.ts";
import { errorCode, osReason } from "../_fs/errors.ts";

const encoder = new TextEncoder();
const pause = new Int32Array(new SharedArrayBuffer(4));

type Stream = "stdout" | "stderr";

function fail(stream: Stream, code: string): never {
  throw new OutputError(stream, code, text`cannot write ${stream}: ${osReason({ code })}`);
}

function writeStream(stream: Stream, bytes: Uint8Array): void {
  const target = stream === "stdout" ? Deno.stdout : Deno.stderr;
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += target.writeSync(bytes.subarray(offset));
    } catch (e) {
      const code = errorCode(e) ?? "EIO";
      if (code === "EAGAIN") {
        Atomics.wait(pause, 0, 0, 1); // a non-blocking pipe is full for a moment
        continue;
      }
      fail(stream, code);
    }
  }
}

/** Write `data` to stdout as it is (no newline added). */
export function writeOutRaw(data: string | Uint8Array): void {
  writeStream("stdout", typeof data === "string" ? encoder.encode(data) : data);
}

/** Write each line to stdout, each followed by `\n`. */
export function writeOut(...lines: string[]): void {
  if (lines.length > 0) writeOutRaw(lines.join("\n") + "\n");
}

/** Write each line to stderr, each followed by `\n`. */
export function writeErr(...lines: string[]): void {
  if (lines.length > 0) writeStream("stderr", encoder.encode(lines.join("\n") + "\n"));
}
