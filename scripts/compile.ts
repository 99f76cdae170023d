/**
 * `deno task compile [target…]`: standalone binaries in `dist/bin/<target>/<tool>` for the five
 * `deno compile` targets (default: all). Needs the Deno runtime download for each target, which
 * ctxkit's own build machines cannot reach — run it where the download works (see README).
 */
import { COMPILE_TARGETS, run, TOOLS } from "./tools.ts";

const targets = Deno.args.length > 0 ? Deno.args : [...COMPILE_TARGETS];
for (const target of targets) {
  for (const tool of TOOLS) {
    const output = `dist/bin/${target}/${tool}`;
    run([Deno.execPath(), "compile", "-A", "--target", target, "-o", output, `bin/${tool}.ts`]);
    console.log(output);
  }
}
