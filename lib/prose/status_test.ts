import assert from "node:assert/strict";
import type { FlagRead } from "./flag_io.ts";
import type { ProseFlag } from "./schema.ts";
import { statusDocument, StatusDocumentSchema, statusLine, statusSentence } from "./status.ts";

const NOW = 1_800_000_000_000;

function active(patch: Partial<ProseFlag>): FlagRead {
  const flag: ProseFlag = {
    level: "full",
    ttl: { unit: "turn", value: 1 },
    expiresAt: null,
    activatedAt: NOW,
    source: "manual",
    ...patch,
  };
  return { state: "active", flag, reason: null, field: null, path: "/r/prose/.active", raw: null };
}

Deno.test("sentences", () => {
  assert.equal(
    statusSentence(active({})),
    "Prose override active: level full, 1 response left, no time limit.",
  );
  assert.equal(
    statusSentence(
      active({ level: "minimal", ttl: { unit: "session", value: 0 }, expiresAt: NOW + 1000 }),
    ),
    `Prose override active: level minimal, until the session ends, expires ${
      new Date(NOW + 1000).toISOString()
    }.`,
  );
  assert.match(statusSentence(active({ level: "off" })), /^Prose override paused \(level off\)/);
  const invalid: FlagRead = {
    state: "invalid",
    flag: null,
    reason: "schema",
    field: "level",
    path: "/p",
    raw: new TextEncoder().encode("{}"),
  };
  assert.match(statusSentence(invalid), /run `prose off`/);
  assert.equal(
    statusLine(invalid),
    "PROSE: state=invalid level=- effective=off ttl=- expiresAt=- activatedAt=- source=- reason=schema field=level",
  );
});

Deno.test("status document parses with its own schema and hides invalid content", () => {
  const doc = statusDocument(active({ ttl: { unit: "block", value: 0 } }), "filesystem", NOW);
  assert.equal(StatusDocumentSchema.safeParse(doc).success, true);
  assert.equal(doc.effectiveLevel, "full");
  const hidden = statusDocument(
    {
      state: "invalid",
      flag: null,
      reason: "too-large",
      field: null,
      path: "/p\x1b[2J",
      raw: null,
    },
    "filesystem",
    NOW,
  );
  assert.equal(hidden.flag, null);
  assert.equal(hidden.flagPath, "/p");
  assert.equal(StatusDocumentSchema.safeParse(hidden).success, true);
});
