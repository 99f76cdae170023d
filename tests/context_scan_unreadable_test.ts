/**
 * context-scan with unreadable directories and files (issues and warnings, D5). Tests run as root, where chmod 000
 * stops nothing, so the tool runs as an unprivileged user through `runToolAsUser`.
 */
import assert from "node:assert/strict";
import { chmodSync } from "node:fs";
import {
  makeSharedTempDir,
  runToolAsUser,
  skipWithoutUnprivilegedUser,
  writeTree,
} from "./_helpers.ts";
import { slugOf } from "./context_scan_fixtures.ts";
import { type ScanDocument, ScanDocumentSchema } from "../lib/scan/schema.ts";

interface Run {
  code: number;
  stderr: string;
  doc: ScanDocument;
}

function scanAsUser(args: string[], home: string): Run {
  const r = runToolAsUser("context-scan", args, { env: { HOME: home } });
  return { code: r.code, stderr: r.stderr, doc: ScanDocumentSchema.parse(JSON.parse(r.stdout)) };
}

function rel(doc: ScanDocument, base: string): string[] {
  return doc.files.map((f) => `${f.path.slice(base.length + 1)} ${f.kind}`);
}

Deno.test("Unreadable dir in memory walk and rules walk; unreadable agent and rule file → issue, full JSON, exit 2, no crash", () => {
  if (skipWithoutUnprivilegedUser()) return;
  const t = makeSharedTempDir("ctxkit-scan-locked-");
  const root = `${t}/proj`;
  const home = `${t}/home`;
  writeTree(t, {
    "proj/CLAUDE.md": "hi\n",
    "proj/.claude/memory/ok.md": "mem\n",
    "proj/.claude/memory/locked/hidden.md": "x\n",
    "proj/.claude/rules/ok.md": "rule\n",
    "proj/.claude/rules/locked/hidden.md": "x\n",
    "proj/.claude/rules/secret.md": "rule secret\n",
    "proj/agents/ok.md": "---\ndescription: fine\n---\n",
    "proj/agents/secret.md": "---\ndescription: hidden\n---\n",
    [`home/.claude/projects/${slugOf(root)}/memory/ok.md`]: "pm\n",
    [`home/.claude/projects/${slugOf(root)}/memory/locked/x.md`]: "pm\n",
  });
  for (
    const path of [
      `${root}/.claude/memory/locked`,
      `${root}/.claude/rules/locked`,
      `${root}/.claude/rules/secret.md`,
      `${root}/agents/secret.md`,
      `${home}/.claude/projects/${slugOf(root)}/memory/locked`,
    ]
  ) chmodSync(path, 0);

  const r = scanAsUser(["--root", root], home);
  assert.equal(r.code, 2);
  // the memory/rules directories are also met by the root walk: those only warn
  assert.equal(
    r.stderr,
    [
      `⚠️ skipped unreadable directory: ${root}/.claude/memory/locked`,
      `⚠️ skipped unreadable directory: ${root}/.claude/rules/locked`,
      "❌ FAILED EXIT:2",
      "",
    ].join("\n"),
  );
  assert.deepEqual(rel(r.doc, t), [
    "proj/CLAUDE.md file",
    "proj/.claude/rules/ok.md file",
    "proj/.claude/memory/ok.md file",
    "proj/agents/ok.md file",
    "proj/agents/ok.md field:description",
    `home/.claude/projects/${slugOf(root)}/memory/ok.md file`,
  ]);
  const memory = `${home}/.claude/projects/${slugOf(root)}/memory`;
  assert.deepEqual(r.doc.scan_issues.map((i) => [i.root, i.path, i.detail]), [
    [
      "project",
      `${root}/.claude/rules`,
      `'${root}/.claude/rules/locked': Permission denied`,
    ],
    [
      "project",
      `${root}/.claude/rules/secret.md`,
      `'${root}/.claude/rules/secret.md': Permission denied`,
    ],
    [
      "project",
      `${root}/.claude/memory`,
      `'${root}/.claude/memory/locked': Permission denied`,
    ],
    ["project", `${root}/agents/secret.md`, `'${root}/agents/secret.md': Permission denied`],
    ["project", memory, `'${memory}/locked': Permission denied`],
  ]);
  assert.ok(
    r.doc.scan_issues.every((i) => i.kind === "discovery-incomplete" && i.exit_status === 1),
  );
  assert.deepEqual(r.doc.totals.grand, { files: 6, bytes: 46, tokens: 9 });
});

Deno.test("Unreadable dir in the root walk → ⚠️ skipped unreadable directory: <path> on stderr, exit unchanged (0 on an otherwise clean tree)", () => {
  if (skipWithoutUnprivilegedUser()) return;
  const t = makeSharedTempDir("ctxkit-scan-rootwalk-");
  const root = `${t}/proj`;
  writeTree(t, {
    "proj/agents/a.md": "agent\n",
    "proj/db-data/pg/agents/x.md": "never seen\n",
    "proj/cache/agents/y.md": "never seen\n",
    "home/.keep": "",
  });
  chmodSync(`${root}/db-data/pg`, 0);
  chmodSync(`${root}/cache`, 0o311); // enterable, not listable
  const r = scanAsUser(["--root", root], `${t}/home`);
  assert.equal(r.code, 0);
  // one warning per directory, sorted by path, then the exit line
  assert.equal(
    r.stderr,
    `⚠️ skipped unreadable directory: ${root}/cache\n` +
      `⚠️ skipped unreadable directory: ${root}/db-data/pg\n✅ EXIT:0\n`,
  );
  assert.ok(r.stderr.endsWith("✅ EXIT:0\n"));
  assert.deepEqual(rel(r.doc, root), ["agents/a.md file"]);
  assert.deepEqual(r.doc.scan_issues, []);
});

Deno.test("Unreadable probed file and unreadable .claude directory → one issue per probe/root, full JSON, exit 2 (D5)", () => {
  if (skipWithoutUnprivilegedUser()) return;
  const t = makeSharedTempDir("ctxkit-scan-probe-");
  const root = `${t}/proj`;
  writeTree(t, {
    "proj/CLAUDE.md": "secret\n",
    "proj/AGENTS.md": "open\n",
    "proj/.claude/AGENTS.md": "x\n",
    "proj/skills/s/SKILL.md": "locked skill\n",
    "home/.keep": "",
  });
  chmodSync(`${root}/CLAUDE.md`, 0);
  chmodSync(`${root}/skills/s/SKILL.md`, 0);
  chmodSync(`${root}/.claude`, 0);
  const r = scanAsUser(["--root", root], `${t}/home`);
  assert.equal(r.code, 2);
  assert.deepEqual(rel(r.doc, root), ["AGENTS.md file"]);
  assert.deepEqual(r.doc.scan_issues.map((i) => i.path.slice(root.length + 1)), [
    "CLAUDE.md",
    ".claude/AGENTS.md",
    ".claude/rules",
    ".claude/convention",
    ".claude/memory",
    "skills/s/SKILL.md",
  ]);
  assert.ok(r.doc.scan_issues.every((i) => i.detail.endsWith(": Permission denied")));
  assert.equal(r.stderr, `⚠️ skipped unreadable directory: ${root}/.claude\n❌ FAILED EXIT:2\n`);
});
