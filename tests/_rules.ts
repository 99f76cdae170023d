/**
 * Rules and the fixtures that observe them, held to each other: every rule names fixtures that
 * exist (`a-*` names a prefix), every fixture observes a rule, and no two fixtures share a name.
 * Used by the differential suites (`loading_rules.ts` and `tier_rules.ts`).
 *
 * @module
 */

/**
 * What is wrong between `rules` (each naming its fixtures in `test`, comma-separated) and the
 * fixture `names`, one line each (empty: they agree).
 */
export function rulesAndFixtures(
  rules: readonly { readonly rule: string; readonly test: string }[],
  names: readonly string[],
): string[] {
  const matches = (pattern: string, name: string) =>
    pattern.endsWith("*") ? name.startsWith(pattern.slice(0, -1)) : name === pattern;
  const problems: string[] = [];
  const covered = new Set<string>();
  for (const rule of rules) {
    for (const pattern of rule.test.split(", ")) {
      const hit = names.filter((n) => matches(pattern, n));
      if (hit.length === 0) problems.push(`${rule.rule.slice(0, 40)}…: no fixture ${pattern}`);
      for (const n of hit) covered.add(n);
    }
  }
  for (const n of names) if (!covered.has(n)) problems.push(`fixture ${n} observes no rule`);
  if (new Set(names).size !== names.length) problems.push("fixture names are not unique");
  return problems;
}
