// Every token class is linear, post-processing included (references/context-guard.md#extraction, GUIDE: "every regex is
// linear on adversarial input"): each base and ext class runs on 1 MB lines built to make a
// backtracking pattern retry at every position — a run of one class character without the
// class's anchor, or an anchor repeated without its tail. A linear class takes milliseconds on
// such a line; a quadratic one takes tens of minutes (400,000 digits took 172 s in `ver:`). The
// extraction runs in a worker, so a quadratic class is stopped at the generous bound and named,
// instead of hanging the suite.
import assert from "node:assert/strict";

const MB = 1_000_000;
/** Far above what a linear pass over 1 MB takes on a busy machine, far below a quadratic one. */
const BOUND_MS = 60_000;

const fill = (unit: string, prefix = "", suffix = "") =>
  prefix + unit.repeat(Math.ceil((MB - prefix.length - suffix.length) / unit.length)) + suffix;

/** Adversarial lines, each about 1 MB, named for the failure message. */
const LINES: Record<string, string> = {
  "digits (ver:, num:, cmp:)": fill("0"),
  "digits then a dot (ver:)": fill("0", "", "."),
  "digit-dot pairs (ver:, num:)": fill("1."),
  "version then a dangling suffix (ver:)": fill("1.", "", "+"),
  "lowercase letters (file:, slug:, path:, glob:, lneg:)": fill("a"),
  "uppercase letters (env:, kw:)": fill("A"),
  "letter-underscore pairs (env:)": fill("A_"),
  "digit blocks before a capital (env: lookbehind)": fill("0000000000A"),
  "capital then digits (env:)": fill("0", "A"),
  "letter-dot pairs (file:)": fill("a."),
  "dots (file:, path:, glob:)": fill("."),
  "letter-hyphen pairs (slug:)": fill("a-"),
  "digit-hyphen pairs (slug:)": fill("0-"),
  "hyphens (slug:, path:)": fill("-"),
  "underscores (env:, file:)": fill("_"),
  "slashes (path:)": fill("/"),
  "path characters without a slash (path:)": fill("a@b.c_d-"),
  "stars (glob:)": fill("*"),
  "braces (glob:)": fill("{}"),
  "one open backtick (tick:)": fill("a", "`"),
  "backticks (tick:)": fill("`"),
  "a comparison without a number (cmp:)": fill(" ", "<"),
  "comparisons without numbers (cmp:)": fill("< "),
  "a URL without an end (url:)": fill("a", "http://"),
  "URL schemes (url:)": fill("http:/"),
  "inequalities (neg:)": fill("!="),
  "keyword prefixes (kw:, lneg:)": fill("NEVE"),
  "word fragments (lneg:)": fill("neve "),
  "Cyrillic (cyr:)": fill("ж"),
  // Post-processing too: a run of strip characters that does not end the token (issue 29 item 10).
  "a slash, dots, then a letter (path: strip)": fill(".", "a/", "x"),
  "a slash, mixed punctuation, then a letter (path: strip)": fill(".,;:", "a/", "x"),
  "!=, dots, then a letter (neg: strip)": fill(".", "!=", "x"),
  "a URL, dots, then a letter (url: strip)": fill(".", "http://h", "x"),
};

const WORKER = `
import { extractBaseTokens } from ${JSON.stringify(new URL("./tokens.ts", import.meta.url).href)};
import { extractExtendedTokens } from ${
  JSON.stringify(new URL("./tokens_ext.ts", import.meta.url).href)
};
self.onmessage = (e) => {
  const line = e.data;
  self.postMessage(extractBaseTokens(line).length + extractExtendedTokens(line).length);
};
`;

Deno.test("every token class is linear: each 1 MB adversarial line is done well within the bound", async () => {
  const url = URL.createObjectURL(new Blob([WORKER], { type: "application/javascript" }));
  // One worker for every line: under `deno test`'s type check each new worker checks tokens.ts
  // again (about 1.3 s of CPU each, 45 s for the file); a worker is replaced only when a line hit
  // the bound (it is still busy with that line).
  let worker: Worker | undefined;
  try {
    for (const [name, line] of Object.entries(LINES)) {
      assert.ok(line.length >= MB, name);
      const current = worker ??= new Worker(url, { type: "module" });
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        const result = await Promise.race([
          new Promise<number>((resolve, reject) => {
            current.onmessage = (e: MessageEvent<number>) => resolve(e.data);
            current.onerror = (e) => reject(new Error(e.message));
            current.postMessage(line);
          }),
          new Promise<"bound">((resolve) => {
            timer = setTimeout(() => resolve("bound"), BOUND_MS);
          }),
        ]);
        if (result === "bound") {
          current.terminate();
          worker = undefined;
        }
        assert.notEqual(result, "bound", `not linear: ${name} took over ${BOUND_MS} ms`);
      } finally {
        clearTimeout(timer);
      }
    }
  } finally {
    worker?.terminate();
    URL.revokeObjectURL(url);
  }
});
