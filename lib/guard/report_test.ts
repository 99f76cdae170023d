import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";

import { text } from "../text.ts";
import { collectingReporter } from "./report.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

Deno.test("collectingReporter keeps every line in print order, split at literal newlines, names raw", () => {
  const r = collectingReporter();
  r.out(text`FILE: ${"a\nb.md"}`);
  r.err(text`RESTORE_REFUSED: x\nRESTORE_REFUSED: ${"y"}`);
  r.out(text`MISSING: ${0}`);
  assert.deepEqual(r.lines, [
    { stream: "stdout", text: "FILE: a\nb.md" },
    { stream: "stderr", text: "RESTORE_REFUSED: x" },
    { stream: "stderr", text: "RESTORE_REFUSED: y" },
    { stream: "stdout", text: "MISSING: 0" },
  ]);
});

Deno.test("consoleReporter prints each line on its stream with names escaped; silentReporter prints nothing", () => {
  const dir = makeTempDir("ctxkit-report-");
  const script = `${dir}/report.ts`;
  const lib = (p: string) => JSON.stringify(new URL(p, import.meta.url).href);
  writeFileSync(
    script,
    `import { consoleReporter, silentReporter } from ${lib("./report.ts")};\n` +
      `import { text } from ${lib("../text.ts")};\n` +
      `silentReporter.out(text\`silent\`);\n` +
      `silentReporter.err(text\`silent\`);\n` +
      `consoleReporter.out(text\`FILE: \${"a\\nGATE: PASS"}\`);\n` +
      `consoleReporter.err(text\`RESTORE_REFUSED: a\\nRESTORE_REFUSED: \${"b\\x1b"}\`);\n` +
      `consoleReporter.out(text\`MISSING: \${2}\`);\n`,
  );
  const r = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", script],
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const dec = new TextDecoder();
  assert.equal(r.code, 0, dec.decode(r.stderr));
  assert.equal(dec.decode(r.stdout), 'FILE: "a\\nGATE: PASS"\nMISSING: 2\n');
  assert.equal(dec.decode(r.stderr), 'RESTORE_REFUSED: a\nRESTORE_REFUSED: "b\\x1b"\n');
});
