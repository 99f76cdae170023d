/**
 * The listing budget (`references/context-scan.md#loaded-figures`): its size, and which entries keep
 * their description when the whole listing, Claude Code's built-in skills included, is over it.
 *
 * @module
 */

import { LISTING_BUDGET } from "../loading_rules.ts";
import type { Entry } from "./listing.ts";
import { utf8 } from "./source.ts";

/** The listing budget in UTF-16 units. */
export function listingBudget(override: string | undefined): number {
  if (override !== undefined && /^[0-9]+$/.test(override.trim()) && Number(override) > 0) {
    return Number(override);
  }
  return LISTING_BUDGET.chars;
}

/**
 * Apply the listing budget to the user entries, as Claude Code applies it to the whole listing
 * (its built-in skills counted whole): when everything fits, nothing changes; otherwise each entry
 * counts as its name, and in listing order an entry keeps its description while what is left of
 * the budget covers it.
 */
export function applyBudget(entries: readonly Entry[], budget: number): string[] {
  const builtin = LISTING_BUDGET.builtin;
  const competing = builtin.competing.map((b) => ({
    full: b.chars,
    nameOnly: `- ${b.name}`.length,
  }));
  const count = entries.length + builtin.entries + competing.length;
  const sum = (f: (e: { full: number; nameOnly: number }) => number) =>
    entries.reduce((n, e) => n + f({ full: e.full.length, nameOnly: e.nameOnly.length }), 0) +
    competing.reduce((n, c) => n + f(c), 0) + builtin.chars + count - 1;
  if (sum((e) => e.full) <= budget) return [];
  let left = budget - sum((e) => e.nameOnly);
  for (const e of entries) {
    const extra = e.full.length - e.nameOnly.length;
    if (extra <= left) {
      left -= extra;
      continue;
    }
    e.source.loaded = utf8(`${e.nameOnly}\n`);
    e.source.limits.add("listing-budget");
  }
  // The competing built-ins come last; the names of those cut to their name.
  const cut: string[] = [];
  builtin.competing.forEach((b, i) => {
    const extra = competing[i].full - competing[i].nameOnly;
    if (extra <= left) left -= extra;
    else cut.push(b.name);
  });
  return cut;
}
