/**
 * Synchronous, complete writes to stdout and stderr.
 *
 * Scripts interleave stdout and stderr lines and exit right after; synchronous writes keep the order
 * a reader of both streams sees and guarantee nothing is lost at exit (even into a full pipe).
 *
 * @module
 */

import { writeSync } from "node:fs";

const encoder = new TextEncoder();

function writeAll(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (e) {
      // A non-blocking pipe may refuse for a moment; anything else (EPIPE) ends output quietly.
      if ((e as { code?: string }).code === "EAGAIN") continue;
      return;
    }
  }
}

/** Write `text` to stdout as-is (no newline added). */
export function writeOutRaw(text: string | Uint8Array): void {
  writeAll(1, typeof text === "string" ? encoder.encode(text) : text);
}

/** Write each line to stdout, each followed by `\n`. */
export function writeOut(...lines: string[]): void {
  if (lines.length > 0) writeOutRaw(lines.join("\n") + "\n");
}

/** Write each line to stderr, each followed by `\n`. */
export function writeErr(...lines: string[]): void {
  if (lines.length > 0) writeAll(2, encoder.encode(lines.join("\n") + "\n"));
}
