/**
 * Publish JSON Schemas of ctxkit's on-disk documents, generated from their zod schemas (zod 4
 * `toJSONSchema` of the installed package), as `references/schemas/<name>.schema.json`.
 *
 * Table-driven: add a document by adding a row to {@linkcode SCHEMAS}. `tests/schemas_test.ts`
 * fails when a committed file is stale.
 *
 *   deno run -A scripts/schemas.ts           write every schema
 *   deno run -A scripts/schemas.ts --check   exit 1 naming each stale or missing file
 *
 * @module
 */

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type * as z from "../lib/_zod.ts";
// From the installed package: only this script renders schemas, so the tools' vendored build
// leaves toJSONSchema out (it reads the schemas' definitions, whichever build made them).
import { toJSONSchema } from "zod/mini";
import { writeFileAtomic } from "../lib/_fs/write.ts";
import { GuardResultSchema } from "../lib/guard/json_report.ts";
import { WrittenManifestSchema } from "../lib/guard/manifest.ts";
import { StateDocumentSchema, StateDropSchema } from "../lib/guard/state/document.ts";
import { ScanDocumentSchema } from "../lib/scan/schema.ts";
import {
  ErrorBodySchema,
  ProseFlagSchema,
  ServeRecordSchema,
  StatusDocumentSchema,
  ToggleRequestSchema,
  ToggleResponseSchema,
} from "../lib/prose/schema.ts";
import { ProseConfigSchema } from "../lib/prose/config.ts";

/** One published document. */
export interface SchemaEntry {
  /** File stem: `references/schemas/<name>.schema.json`. */
  name: string;
  /** `title` of the JSON Schema. */
  title: string;
  /** `description` of the JSON Schema. */
  description: string;
  /** The document's zod schema (its single definition). */
  schema: z.ZodMiniType;
}

/** Every published document. */
export const SCHEMAS: readonly SchemaEntry[] = [
  {
    name: "manifest",
    title: "context-guard manifest.json",
    description:
      "The manifest context-guard snapshot writes into each run dir (<backups>/<ts>-<layer>_context-slim/manifest.json); contract: references/context-guard.md#the-manifest.",
    schema: WrittenManifestSchema,
  },
  {
    name: "state",
    title: "context-slim ratchet state.json",
    description:
      "The ratchet state context-guard state writes (<root>/.claude/brewtools/context-slim/state.json); contract: references/context-guard.md#ratchet-state.",
    schema: StateDocumentSchema,
  },
  {
    name: "scan",
    title: "context-scan output",
    description:
      "The JSON document context-scan prints on stdout; contract: references/context-scan.md#output-document. Consumers stop on a non-zero exit or a non-empty scan_issues. The optional keys (loaded_bytes, loaded_tokens, limits on rows; loaded on totals) appear only with --loaded (references/context-scan.md#loaded-figures).",
    schema: ScanDocumentSchema,
  },
  {
    name: "guard-result",
    title: "context-guard / text-guard --json output",
    description:
      "The one JSON document every context-guard and text-guard command prints on stdout with --json, instead of its result lines (exit code and stderr unchanged); contract: references/context-guard.md#json.",
    schema: GuardResultSchema,
  },
  {
    name: "ledger-row",
    title: "context-slim ledger row",
    description:
      "One row of the drop ledger (TSV: path<TAB>line-range<TAB>survivor<TAB>reason) as state.json records it in drops[]; contract: references/context-guard.md#drop-ledger (format) and #ratchet-state (drops).",
    schema: StateDropSchema,
  },
  {
    name: "prose-flag",
    title: "prose override flag (~/.cellm/prose/.active)",
    description:
      "The flag file, compact JSON + newline, at most 1024 bytes. Cross-field rules (expiresAt > activatedAt, null for explicit; auto-clarity limits) are enforced by ctxkit beyond this schema; contract: references/prose.md#flag.",
    schema: ProseFlagSchema,
  },
  {
    name: "prose-config",
    title: "prose config (~/.cellm/prose/config.json, JSONC)",
    description:
      "The optional JSONC config with its defaults; contract: references/prose.md#config.",
    schema: ProseConfigSchema,
  },
  {
    name: "prose-status",
    title: "prose status document",
    description:
      "`prose status --json` and GET /api/prose/status; contract: references/prose.md#status-document.",
    schema: StatusDocumentSchema,
  },
  {
    name: "prose-toggle-request",
    title: "POST /api/prose/toggle request body",
    description:
      "The strict body the prose backend accepts; contract: references/prose.md#post-apiprosetoggle.",
    schema: ToggleRequestSchema,
  },
  {
    name: "prose-toggle-response",
    title: "POST /api/prose/toggle response body",
    description:
      "The prose backend's answer to a successful toggle; contract: references/prose.md#post-apiprosetoggle.",
    schema: ToggleResponseSchema,
  },
  {
    name: "prose-error",
    title: "prose backend error body",
    description:
      "Every non-2xx answer of the prose backend; contract: references/prose.md#http-checks.",
    schema: ErrorBodySchema,
  },
  {
    name: "prose-serve",
    title: "prose backend token record (~/.cellm/prose/serve.json)",
    description:
      "Written 0600 by prose serve while it runs: the 127.0.0.1 port it bound, its pid, and the token every request but GET /health must carry as Authorization: Bearer <token>; contract: references/prose.md#authentication.",
    schema: ServeRecordSchema,
  },
];

/** Repository root. */
export const REPO_ROOT: string = dirname(dirname(fileURLToPath(import.meta.url)));

/** Path of a schema file. */
export function schemaPath(entry: SchemaEntry): string {
  return join(REPO_ROOT, "references", "schemas", `${entry.name}.schema.json`);
}

/** The file text of one schema: 2-space JSON, title and description first, final `\n`. */
export function renderSchema(entry: SchemaEntry): string {
  const generated = toJSONSchema(entry.schema, { target: "draft-2020-12" }) as Record<
    string,
    unknown
  >;
  const { $schema, ...rest } = generated;
  const doc = { $schema, title: entry.title, description: entry.description, ...rest };
  return JSON.stringify(doc, null, 2) + "\n";
}

/** Names of the entries whose committed file differs from a fresh rendering (or is missing). */
export function staleSchemas(entries: readonly SchemaEntry[] = SCHEMAS): string[] {
  return entries.filter((entry) => {
    try {
      return readFileSync(schemaPath(entry), "utf8") !== renderSchema(entry);
    } catch {
      return true;
    }
  }).map((entry) => entry.name);
}

if (import.meta.main) {
  if (Deno.args.includes("--check")) {
    const stale = staleSchemas();
    for (const name of stale) console.error(`stale: references/schemas/${name}.schema.json`);
    Deno.exit(stale.length === 0 ? 0 : 1);
  }
  for (const entry of SCHEMAS) {
    writeFileAtomic(schemaPath(entry), renderSchema(entry), { mode: 0o644 });
    console.log(`wrote references/schemas/${entry.name}.schema.json`);
  }
}
