/**
 * The published JSON Schemas (`references/schemas/*.schema.json`) must equal what
 * `scripts/schemas.ts` generates from the zod schemas, and must describe real documents.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { renderSchema, REPO_ROOT, schemaPath, SCHEMAS, staleSchemas } from "../scripts/schemas.ts";
import { renderManifest, WrittenManifestSchema } from "../lib/guard/manifest.ts";
import { StateDocumentSchema } from "../lib/guard/state/document.ts";

Deno.test("schemas: every committed schema is current (run `deno run -A scripts/schemas.ts`)", () => {
  assert.deepEqual(staleSchemas(), [], "stale schema files: regenerate with scripts/schemas.ts");
  for (const entry of SCHEMAS) {
    assert.equal(readFileSync(schemaPath(entry), "utf8"), renderSchema(entry), entry.name);
  }
});

Deno.test("schemas: no orphan schema file without a table row", () => {
  const files = readdirSync(join(REPO_ROOT, "references", "schemas")).sort();
  assert.deepEqual(files, SCHEMAS.map((e) => `${e.name}.schema.json`).sort());
});

Deno.test("schemas: staleness is detected", () => {
  const [entry] = SCHEMAS;
  const changed = { ...entry, description: entry.description + " (changed)" };
  assert.deepEqual(staleSchemas([changed]), [entry.name]);
  assert.deepEqual(staleSchemas([{ ...entry, name: "no-such-document" }]), ["no-such-document"]);
});

Deno.test("schemas: the manifest schema accepts what snapshot writes and pins its shape", () => {
  const text = renderManifest({
    timestamp: "20261012-140307",
    layer: "project",
    root: "/home/ana/proj",
    runDir: "/home/ana/.claude/backups/20261012-140307-project_context-slim",
    restoreCmd:
      "deno run --allow-all /opt/ctxkit/bin/context-guard.ts restore --project --run-dir " +
      "/home/ana/.claude/backups/20261012-140307-project_context-slim",
    created: new Date(Date.UTC(2026, 9, 12, 12, 3, 7)),
    seq: 1,
    files: [{
      path: "CLAUDE.md",
      size: 196,
      sha256: "4dfb016affccd0d26c12bc20be33f443b924adb52dd42e4b1f1abe60e5ef0ed3",
      mode: 0o644,
    }],
  });
  const doc = JSON.parse(text);
  assert.ok(WrittenManifestSchema.safeParse(doc).success);
  assert.ok(!WrittenManifestSchema.safeParse({ ...doc, files: [] }).success);
  assert.ok(!WrittenManifestSchema.safeParse({ ...doc, extra: 1 }).success);
  const json = JSON.parse(
    readFileSync(schemaPath(SCHEMAS.find((e) => e.name === "manifest")!), "utf8"),
  );
  assert.deepEqual(json.required, [
    "timestamp",
    "mode",
    "layer",
    "root",
    "run_dir",
    "restore_cmd",
    "created",
    "seq",
    "files",
  ]);
  assert.equal(json.additionalProperties, false);
  assert.deepEqual(json.properties.files.items.required, ["path", "size", "sha256", "mode"]);
});

Deno.test("schemas: the state schema pins key set and number types", () => {
  const json = JSON.parse(
    readFileSync(schemaPath(SCHEMAS.find((e) => e.name === "state")!), "utf8"),
  );
  assert.deepEqual(Object.keys(json.properties), [
    "schema",
    "timestamp",
    "mode",
    "flags",
    "totals",
    "achieved_ratio_pct",
    "files",
    "drops",
  ]);
  assert.equal(json.properties.totals.properties.before_tokens.type, "integer");
  assert.equal(json.properties.achieved_ratio_pct.type, "number");
  assert.ok(!StateDocumentSchema.safeParse({}).success);
});
