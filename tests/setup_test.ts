/**
 * `npm ci` is the README's set-up command and must be warning-free on a fresh machine: npm warns
 * about every installed package whose install scripts `package.json`'s `allowScripts` does not
 * cover, so every such package must be listed there (approved or denied).
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { REPO } from "./_helpers.ts";

const Manifest = z.object({
  name: z.string().optional(),
  scripts: z.record(z.string(), z.string()).optional(),
  allowScripts: z.record(z.string(), z.boolean()).optional(),
});

function readManifest(path: string): z.infer<typeof Manifest> {
  return Manifest.parse(JSON.parse(readFileSync(path, "utf8")));
}

function installedPackages(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith(".")) continue;
    if (entry.startsWith("@")) {
      for (const scoped of readdirSync(join(dir, entry))) out.push(join(dir, entry, scoped));
    } else out.push(join(dir, entry));
  }
  return out.filter((p) => existsSync(join(p, "package.json")));
}

Deno.test("npm ci: every installed package with install scripts is covered by allowScripts", () => {
  const allowed = Object.keys(readManifest(join(REPO, "package.json")).allowScripts ?? {});
  const withScripts = installedPackages(join(REPO, "node_modules"))
    .map((p) => readManifest(join(p, "package.json")))
    .filter((m) => ["preinstall", "install", "postinstall"].some((s) => m.scripts?.[s]))
    .map((m) => m.name ?? "?");
  assert.ok(withScripts.includes("deno"), "deno ships a postinstall script");
  for (const name of withScripts) {
    assert.ok(allowed.some((a) => a === name || a.startsWith(`${name}@`)), name);
  }
});
