/**
 * Complete, synchronous writes to stdout and stderr that fail loudly.
 *
 * Scripts interleave stdout and stderr lines and exit right after; synchronous writes keep the
 * order a reader of both streams sees and lose nothing at exit. A write that fails (a full disk, a
 * reader gone, a closed descriptor) throws {@linkcode OutputError}: the command stops there and
 * never reports success. Rule: `references/output.md#write-failures`.
 *
 * @module
 */

import { OutputError } from "../errors.ts";
import { text } from "../text.ts";
import { errorCode, osReason } from "../_fs/errors.ts";

const encoder = new TextEncoder();
const pause = new Int32Array(new SharedArrayBuffer(4));

type Stream = "stdout" | "stderr";

const checked: Record<Stream, boolean> = { stdout: false, stderr: false };

/**
 * True when descriptor `fd` was closed when the process started: the runtime then puts an
 * `O_RDWR` `/dev/null` in its place, while a shell's `>/dev/null` opens it write-only. Linux only,
 * and only where Deno lets `/proc/self/fdinfo` be read (with `--allow-all`); elsewhere a closed
 * descriptor cannot be told from `/dev/null`.
 */
function wasClosed(fd: number): boolean {
  try {
    if (Deno.readLinkSync(`/proc/self/fd/${fd}`) !== "/dev/null") return false;
    const info = Deno.readTextFileSync(`/proc/self/fdinfo/${fd}`);
    const flags = /^flags:\s*([0-7]+)$/m.exec(info);
    return flags !== null && (parseInt(flags[1], 8) & 3) === 2;
  } catch {
    return false;
  }
}

function fail(stream: Stream, code: string): never {
  throw new OutputError(stream, code, text`cannot write ${stream}: ${osReason({ code })}`);
}

function writeStream(stream: Stream, bytes: Uint8Array): void {
  const target = stream === "stdout" ? Deno.stdout : Deno.stderr;
  if (!checked[stream]) {
    checked[stream] = true;
    if (wasClosed(stream === "stdout" ? 1 : 2)) fail(stream, "EBADF");
  }
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
