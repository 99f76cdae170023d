/**
 * `deno task drift <version>`: run the whole differential suite (`tests/context_scan_differential_test.ts`)
 * against another installed Claude Code version and print the loading rules that drifted — each rule
 * whose observing fixtures no longer agree with the model — and the version-dependent behaviour the
 * rules record as data (`references/context-scan.md#the-differential-suite`).
 *
 * Exit 0: nothing drifted; 1: some rule drifted; 2: the suite could not run (the version is not
 * installed and cannot be, no namespace, …). The version is installed into the cache on demand
 * (`scripts/claude_code.ts`).
 *
 * @module
 */

import { AGENT_NAME_CLASH, LOADING_RULES, type LoadingRule } from "../lib/scan/loading_rules.ts";
import { ensureClaudeCode } from "./claude_code.ts";

/** True when a rule's fixture pattern (`name`, or `prefix-*`) names `fixture`. */
export function patternMatches(pattern: string, fixture: string): boolean {
  return pattern.endsWith("*") ? fixture.startsWith(pattern.slice(0, -1)) : fixture === pattern;
}

/** The rules observed by any of `fixtures`, in the reference's order. */
export function driftedRules(
  fixtures: readonly string[],
  rules: readonly LoadingRule[] = LOADING_RULES,
): { rule: LoadingRule; fixtures: string[] }[] {
  return rules.flatMap((rule) => {
    const hit = fixtures.filter((f) => rule.test.split(", ").some((p) => patternMatches(p, f)));
    return hit.length > 0 ? [{ rule, fixtures: hit }] : [];
  });
}

/** The fixtures a suite run names as disagreeing (`DRIFT: <fixture>` lines). */
export function driftLines(output: string): string[] {
  return output.split("\n").flatMap((line) => {
    const m = /^DRIFT: (\S+)$/.exec(line.trim());
    return m === null ? [] : [m[1]];
  });
}

/** The report printed for `version`, one line per drifted rule and recorded behaviour. */
export function driftReport(version: string, fixtures: readonly string[]): string[] {
  const lines = driftedRules(fixtures).map(({ rule, fixtures }) =>
    `DRIFTED (observed on ${rule.observed}, fixtures ${fixtures.join(", ")}): ${rule.rule}`
  );
  const recorded = AGENT_NAME_CLASH.drift[version];
  if (recorded !== undefined) {
    lines.push(`RECORDED for ${version}: two agents of one name in one folder: ${recorded}`);
  }
  lines.push(
    fixtures.length === 0
      ? `NO DRIFT: every fixture agrees with Claude Code ${version}`
      : `${fixtures.length} fixture(s) disagree with Claude Code ${version}`,
  );
  return lines;
}

if (import.meta.main) {
  const version = Deno.args[0];
  if (version === undefined || !/^[0-9]+\.[0-9]+\.[0-9]+$/.test(version)) {
    console.error("usage: deno task drift <version>   (e.g. 2.1.332)");
    Deno.exit(2);
  }
  const got = await ensureClaudeCode(version);
  if ("skip" in got) {
    console.error(`❌ Claude Code ${version} cannot be had: ${got.skip}`);
    Deno.exit(2);
  }
  const repo = new URL("..", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "tests/context_scan_differential_test.ts", "--filter", "fixtures agree"],
    cwd: repo,
    env: { CTXKIT_CLAUDE_CODE_VERSION: version, CTXKIT_REQUIRE_OBSERVED: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!/sources compared byte for byte/.test(text)) {
    console.error(`❌ the differential suite did not run against ${version}`);
    console.error(new TextDecoder().decode(out.stderr).trim().split("\n").slice(-5).join("\n"));
    Deno.exit(2);
  }
  const fixtures = driftLines(text);
  for (const line of driftReport(version, fixtures)) console.log(line);
  Deno.exit(fixtures.length === 0 ? 0 : 1);
}
