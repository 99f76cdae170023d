import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { makeTempDir } from "../../tests/_helpers.ts";

/** Feed `input` to a script that reads stdin with a cap of 8 bytes; what it read, as JSON. */
async function readWithCap8(input: Uint8Array | null) {
  const dir = makeTempDir("ctxkit-input-");
  const script = `${dir}/read.ts`;
  writeFileSync(
    script,
    `import { readStdinCapped } from ${
      JSON.stringify(new URL("./input.ts", import.meta.url).href)
    };\n` +
      `const r = await readStdinCapped(8);\n` +
      `console.log(JSON.stringify({ text: new TextDecoder().decode(r.bytes), truncated: r.truncated }));\n`,
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script],
    stdin: input === null ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (input !== null) {
    const w = child.stdin.getWriter();
    // Two writes: the reader must gather what arrives in pieces. Past the cap the reader stops
    // and exits, so the rest of a long input may meet a closed pipe.
    try {
      await w.write(input.subarray(0, 3));
      await w.write(input.subarray(3));
      await w.close();
    } catch { /* EPIPE after the reader has what it wanted */ }
  }
  const out = await child.output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("readStdinCapped: all of an input up to the cap; past it, the first cap bytes and truncated", async () => {
  assert.deepEqual(await readWithCap8(null), { text: "", truncated: false });
  assert.deepEqual(await readWithCap8(bytes("1234567")), { text: "1234567", truncated: false });
  assert.deepEqual(await readWithCap8(bytes("12345678")), { text: "12345678", truncated: false });
  assert.deepEqual(await readWithCap8(bytes("123456789")), { text: "12345678", truncated: true });
  assert.deepEqual(await readWithCap8(bytes("x".repeat(70_000))), {
    text: "xxxxxxxx",
    truncated: true,
  });
});
