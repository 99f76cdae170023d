import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";

import {
  errorCode,
  firstLine,
  isAbsent,
  isPermissionError,
  isSandboxRefusal,
  osReason,
  rethrowPermission,
  sandboxRefusedPath,
} from "./errors.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

/** The error `fn` throws. */
function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error("did not throw");
}

Deno.test("errorCode, osReason and isAbsent read a real I/O error like strerror", () => {
  const dir = makeTempDir("ctxkit-fserr-");
  writeFileSync(`${dir}/file`, "");
  const missing = caught(() => Deno.readFileSync(`${dir}/absent`));
  const notDir = caught(() => Deno.readFileSync(`${dir}/file/below`));
  const isDir = caught(() => Deno.readFileSync(dir));
  assert.deepEqual([errorCode(missing), osReason(missing), isAbsent(missing)], [
    "ENOENT",
    "No such file or directory",
    true,
  ]);
  assert.deepEqual([errorCode(notDir), osReason(notDir), isAbsent(notDir)], [
    "ENOTDIR",
    "Not a directory",
    true,
  ]);
  assert.deepEqual([errorCode(isDir), osReason(isDir), isAbsent(isDir)], [
    "EISDIR",
    "Is a directory",
    false,
  ]);
  // A code without a reason text is named by its code; no code at all: the first line, trimmed.
  assert.equal(osReason({ code: "EWHATEVER" }), "EWHATEVER");
  assert.equal(osReason({ code: "EPIPE" }), "Broken pipe");
  assert.equal(osReason(new Error("  boom  \n    at stack")), "boom");
  assert.equal(osReason("plain"), "plain");
  assert.equal(errorCode({ code: 13 }), undefined);
  assert.equal(errorCode(null), undefined);
  assert.equal(isAbsent({ code: "EACCES" }), false);
  assert.equal(firstLine(new Error("one\ntwo")), "one");
});

Deno.test("a path Deno refuses under any grant is a sandbox refusal naming the path, not a missing grant", () => {
  const sandbox = new Deno.errors.NotCapable(
    'Requires all access to "/proc/self/environ", run again with the --allow-all flag',
  );
  const grant = new Deno.errors.NotCapable(
    'Requires read access to "/etc/hostname", run again with the --allow-read flag',
  );
  assert.equal(isSandboxRefusal(sandbox), true);
  assert.equal(isPermissionError(sandbox), false);
  assert.equal(sandboxRefusedPath(sandbox), "/proc/self/environ");
  assert.equal(osReason(sandbox), "Operation not permitted (refused by the Deno sandbox)");
  assert.equal(isSandboxRefusal(grant), false);
  assert.equal(isPermissionError(grant), true);
  assert.equal(sandboxRefusedPath(grant), undefined);
  // An OS-level EACCES is the file system speaking: neither.
  const eacces = Object.assign(
    new Deno.errors.PermissionDenied("Permission denied (os error 13)"),
    {
      code: "EACCES",
    },
  );
  assert.equal(isPermissionError(eacces), false);
  assert.equal(isSandboxRefusal(eacces), false);
  assert.equal(osReason(eacces), "Permission denied");
  // rethrowPermission passes only the missing grant on.
  assert.throws(() => rethrowPermission(grant), (e: unknown) => e === grant);
  rethrowPermission(sandbox);
  rethrowPermission(eacces);
  rethrowPermission(new Error("other"));
});

Deno.test("the runtime's own refusals classify the same way under narrow grants", () => {
  const dir = makeTempDir("ctxkit-fserr-");
  const script = `${dir}/probe.ts`;
  writeFileSync(
    script,
    `import { isPermissionError, isSandboxRefusal, sandboxRefusedPath } from ${
      JSON.stringify(new URL("./errors.ts", import.meta.url).href)
    };\n` +
      `for (const p of Deno.args) {\n` +
      `  try { Deno.readFileSync(p); console.log("read"); } catch (e) {\n` +
      `    console.log(JSON.stringify([isSandboxRefusal(e), isPermissionError(e), sandboxRefusedPath(e) ?? null]));\n` +
      `  }\n}\n`,
  );
  const probe = (grants: string[], paths: string[]) => {
    const r = new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", ...grants, script, ...paths],
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
    return new TextDecoder().decode(r.stdout).trim().split("\n");
  };
  assert.deepEqual(probe([`--allow-read=${dir}`], ["/proc/self/environ", `${dir}/probe.ts`]), [
    "[false,true,null]",
    "read",
  ]);
  assert.deepEqual(probe(["--allow-read"], ["/proc/self/environ"]), [
    '[true,false,"/proc/self/environ"]',
  ]);
});
