/**
 * The context-scan command line: the one place that parses arguments, prints (help, warnings, the
 * document) and turns a scan into an exit code. Contract:
 * `references/context-scan.md#command-line` and `references/context-scan.md#exit-codes-and-stderr`.
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import { printed, text, verbatim } from "../text.ts";
import { type OptionDecl, type OptionTable, readCommandLine } from "../_cli/args.ts";
import { answer, type Self } from "../_cli/self.ts";
import { writeErr, writeOutRaw } from "../_cli/output.ts";
import { renderScanDocument, withObserved } from "./document.ts";
import { type ScanOptions, scanProject, type ScanResult } from "./scan.ts";
import type { ScanDocument, TierFilter } from "./schema.ts";
import { envValue, globalRoot, logicalCwd } from "../paths.ts";
import { resolvePluginDirs } from "./roots.ts";

// A plain list, not the zod enum: the CLI parses no JSON, so the bundle needs no zod.
// Kept here, not imported from observe/run.ts: a plain scan must not load the observation code.
const OBSERVE_CHILD_ARG = "__observe-child";

const TIER_FILTERS: readonly string[] = ["all", "always-on", "per-spawn", "per-invocation"];

/**
 * The help text printed by `--help`, `-h` and `help` (24 lines), naming `program` — the name the
 * tool runs by (`references/cli.md#the-form-it-runs-as`).
 */
export function scanHelp(program: string): string {
  return `context-scan - discover potential context inventory and byte-size proxies.

  ${program} [--root PATH] [--global] [--tier T] [--loaded] [--observe] [--format F] [--budget N] [--json] [--help] [--version]

  --root PATH   project root to scan (default: CLAUDE_PROJECT_DIR, else git toplevel, else cwd)
  --global      also scan the global root (CLAUDE_CONFIG_DIR when set, else $HOME/.claude)
  --tier T      always-on | per-spawn | per-invocation | all   (default: all)
  --loaded      add a MODEL of what Claude Code loads, from rules observed on it (as of Claude
                Code 2.1.332): loaded_bytes, loaded_tokens, limits; ~/.claude only with --global
  --observe     run the real claude once, offline, and report what it sent (observed: measured,
                not modelled); needs --allow-run --allow-net=127.0.0.1 --allow-write=<tmp dir>
  --claude PATH / --observe-timeout S (60) / --observe-hooks (run SessionStart hooks) /
  --observe-tiers (also invoke each skill and command, spawn each agent, read a file per
  rule) / --observe-unsandboxed   options of --observe; --plugin-dir DIR (repeatable) for both
  --format F    json (default; also --json) | table (a report a person can read; alias: report)
  --budget N    exit 1 when tokens exceed N: the observed total with --observe, else the --tier
                tier's total (always-on for all; loaded with --loaded); names the top contributors
  --version     print the version and commit. Options take --opt V or --opt=V; -- ends them

Tiers are inventory buckets, not observed loading: always-on includes conditional/imported
instructions and memory; per-spawn inventories agent files; per-invocation inventories skills
and lazy references. Totals are potential sizes; --loaded's are modelled; only --observe measures.

Exit: 0 complete inventory | 1 over --budget | 2 usage/state/discovery/observation error (partial JSON has scan_issues; no project writes).
`;
}

/** The scan a command line asks for: `global` and `tier` always set, `root` only when given. */
export type ScanArgs = ScanOptions & { global: boolean; tier: TierFilter };

/** `--format` values: `json` (the default) or the table report (`table`, alias `report`). */
export type OutputFormat = "json" | "table";

/** `--observe` and its options (`references/context-scan.md#observe`). */
export interface ObserveArgs {
  /** `--claude PATH`: the executable to run (default: `claude` on `PATH`). */
  claude?: string;
  /** `--observe-timeout S`: the deadline in seconds (default 60). */
  timeoutSeconds: number;
  /** `--observe-unsandboxed`: run without a network namespace, and despite redirecting settings. */
  unsandboxed: boolean;
  /** `--observe-hooks`: let SessionStart hooks run and report what they injected. */
  hooks: boolean;
  /** `--observe-tiers`: drive a scripted session through every skill, agent and rule. */
  tiers: boolean;
}

/**
 * A parsed command line: a question (`--help`, `--version`), or what to scan and how to print it.
 * `loaded`, `observe`, `format` and `budget` are present only when their option was given
 * (`--format json` and `--json` leave the default); `pluginDirs` holds every `--plugin-dir` value in
 * order.
 */
export type ScanCommand =
  | { asks: "help" | "version" }
  | {
    asks?: undefined;
    scan: ScanArgs;
    pluginDirs: string[];
    loaded?: true;
    observe?: ObserveArgs;
    format?: "table";
    budget?: number;
  };

/** The default `--observe-timeout`, in seconds. */
export const DEFAULT_OBSERVE_TIMEOUT_SECONDS = 60;

const WHOLE_NUMBER = /^[0-9]+$/;
const MAX_OBSERVE_TIMEOUT_SECONDS = 3600;

const VALUE = { value: true } as const;

/** A value option whose value must be one of `values`, else `unknown <what>: <value>`. */
function oneOf(values: readonly string[], what: string): OptionDecl {
  return {
    value: true,
    empty: true,
    check: (value) => {
      if (!values.includes(value)) throw new UsageError(text`unknown ${verbatim(what)}: ${value}`);
    },
  };
}

/** context-scan's options (`references/context-scan.md#command-line`), each value checked as read. */
export const SCAN_OPTIONS: OptionTable = {
  "--root": VALUE,
  "--global": {},
  "--tier": oneOf(TIER_FILTERS, "tier"),
  "--json": {},
  "--format": oneOf(["json", "table", "report"], "format"),
  "--loaded": {},
  "--budget": {
    value: true,
    empty: true,
    check: (value) => {
      if (!WHOLE_NUMBER.test(value) || !Number.isSafeInteger(Number(value))) {
        throw new UsageError(text`--budget needs a whole number of tokens: ${value}`);
      }
    },
  },
  "--observe": {},
  "--claude": VALUE,
  "--observe-timeout": {
    value: true,
    empty: true,
    check: (value) => {
      const seconds = Number(value);
      if (!WHOLE_NUMBER.test(value) || seconds < 1 || seconds > MAX_OBSERVE_TIMEOUT_SECONDS) {
        throw new UsageError(
          text`--observe-timeout needs a whole number of seconds (1 to 3600): ${value}`,
        );
      }
    },
  },
  "--observe-unsandboxed": {},
  "--observe-hooks": {},
  "--observe-tiers": {},
  "--plugin-dir": VALUE,
};

/** The options that mean something only with `--observe`. */
const OBSERVE_ONLY: readonly string[] = [
  "--claude",
  "--observe-timeout",
  "--observe-unsandboxed",
  "--observe-hooks",
  "--observe-tiers",
];

/**
 * Parse context-scan's arguments by the one grammar (`references/cli.md`); throws a
 * {@linkcode UsageError} with the exact message of `references/context-scan.md#command-line`. A
 * repeated option's last value wins; context-scan takes no positionals.
 *
 * @example
 * ```ts
 * import { parseScanArgs } from "./cli.ts";
 * parseScanArgs(["--root", "--global"]);
 * // { scan: { global: false, tier: "all", root: "--global" }, pluginDirs: [] }
 * ```
 */
export function parseScanArgs(argv: readonly string[]): ScanCommand {
  const line = readCommandLine(argv, {
    options: SCAN_OPTIONS,
    noPositionals: true,
    helpWord: true,
  });
  if (line.asks !== undefined) return { asks: line.asks };
  const scan: ScanArgs = { global: false, tier: "all" };
  const command: ScanCommand & { asks?: undefined } = { scan, pluginDirs: [] };
  let observeAsked = false;
  let needsObserve: string | undefined;
  const observe: Omit<ObserveArgs, "timeoutSeconds"> & { timeoutSeconds?: number } = {
    unsandboxed: false,
    hooks: false,
    tiers: false,
  };
  for (const word of line.words) {
    if (word.kind !== "option") continue; // no positionals: the grammar refused them
    const value = word.value ?? "";
    if (OBSERVE_ONLY.includes(word.name)) needsObserve ??= word.name;
    switch (word.name) {
      case "--root":
        scan.root = value;
        break;
      case "--global":
        scan.global = true;
        break;
      case "--tier":
        scan.tier = value as TierFilter;
        break;
      case "--json":
        delete command.format;
        break;
      case "--format":
        if (value === "json") delete command.format;
        else command.format = "table";
        break;
      case "--loaded":
        command.loaded = true;
        break;
      case "--budget":
        command.budget = Number(value);
        break;
      case "--observe":
        observeAsked = true;
        break;
      case "--claude":
        observe.claude = value;
        break;
      case "--observe-timeout":
        observe.timeoutSeconds = Number(value);
        break;
      case "--observe-unsandboxed":
        observe.unsandboxed = true;
        break;
      case "--observe-hooks":
        observe.hooks = true;
        break;
      case "--observe-tiers":
        observe.tiers = true;
        break;
      case "--plugin-dir":
        command.pluginDirs.push(value);
        break;
    }
  }
  if (observeAsked) {
    command.observe = {
      ...observe,
      timeoutSeconds: observe.timeoutSeconds ?? DEFAULT_OBSERVE_TIMEOUT_SECONDS,
    };
  } else if (needsObserve !== undefined) {
    throw new UsageError(text`${needsObserve} needs --observe`);
  }
  if (command.pluginDirs.length > 0 && !observeAsked && command.loaded !== true) {
    throw new UsageError(text`--plugin-dir needs --observe or --loaded`);
  }
  // The --loaded model reads the same plugins --observe passes through to claude.
  if (command.pluginDirs.length > 0) scan.pluginDirs = [...command.pluginDirs];
  return command;
}

/** The stderr line of a warning: `⚠️ skipped unreadable directory: <path>`. */
export function warningLine(warning: ScanResult["warnings"][number]): string {
  return printed(text`⚠️ skipped unreadable directory: ${warning.path}`);
}

/** The exit code of a finished scan: 0 for a complete inventory, else 2. */
export function scanExitCode(result: ScanResult): 0 | 2 {
  return result.complete ? 0 : 2;
}

/** A number as the budget line and the report print it: `10,880`. */
export function formatNumber(n: number): string {
  return n.toLocaleString("en-US");
}

/** How many contributors the exceeded budget line names. */
export const BUDGET_TOP = 3;

/**
 * The `--budget` check and its one stderr line (`references/context-scan.md#budget`): under
 * `--observe` the observed total; otherwise the total of the `--tier` tier (`always-on` for
 * `all`), loaded with `--loaded`. Numbers are written with thousands separators; an exceeded
 * line names the top {@linkcode BUDGET_TOP} contributors (observed groups, or rows by path
 * relative to the project root, else `~/…` below `home`, else absolute).
 *
 * @example
 * ```ts ignore
 * budgetCheck(document, 8000);
 * // { exceeded: true,
 * //   line: "BUDGET: exceeded always-on 10,880 > 8,000 tokens (top: CLAUDE.md 6,000, …)" }
 * ```
 */
export function budgetCheck(
  document: ScanDocument,
  budget: number,
  home?: string,
): { exceeded: boolean; line: string } {
  let tokens: number;
  let what: string;
  let top: { name: string; tokens: number }[];
  const observed = document.observed;
  if (observed !== undefined) {
    tokens = observed.total.tokens;
    what = "observed";
    top = OBSERVED_TITLES.map(([key, title]) => ({
      name: title,
      tokens: observed.categories[key].tokens,
    }));
  } else {
    const tier = document.tier_filter === "all" ? "always-on" : document.tier_filter;
    const total = document.totals[tier];
    const loaded = total.loaded;
    tokens = loaded?.tokens ?? total.tokens;
    what = loaded === undefined ? tier : `${tier} loaded`;
    const project = `${document.roots.project}/`;
    const shown = (path: string) => {
      if (path.startsWith(project)) return path.slice(project.length);
      if (home !== undefined && home !== "/" && path.startsWith(`${home}/`)) {
        return `~/${path.slice(home.length + 1)}`;
      }
      return path;
    };
    top = document.files.filter((r) => r.tier === tier).map((r) => ({
      name: shown(r.path),
      tokens: loaded === undefined ? r.tokens : r.loaded_tokens ?? 0,
    }));
  }
  const figures = `${formatNumber(tokens)} ${tokens > budget ? ">" : "<="} ${formatNumber(budget)}`;
  if (tokens <= budget) return { exceeded: false, line: `BUDGET: ok ${what} ${figures} tokens` };
  const named = top
    .map((t, i) => ({ ...t, i }))
    .filter((t) => t.tokens > 0)
    .sort((a, b) => b.tokens - a.tokens || a.i - b.i)
    .slice(0, BUDGET_TOP)
    .map((t) => printed(text`${t.name} ${formatNumber(t.tokens)}`));
  const suffix = named.length === 0 ? "" : ` (top: ${named.join(", ")})`;
  return { exceeded: true, line: `BUDGET: exceeded ${what} ${figures} tokens${suffix}` };
}

/**
 * The `/context` group titles in report order: a copy of `categories.ts`'s, which the plain scan
 * must not load (`lib/scan/cli_test.ts` holds the two equal).
 */
export const OBSERVED_TITLES: readonly [
  keyof NonNullable<ScanDocument["observed"]>["categories"],
  string,
][] = [
  ["system-prompt", "System prompt"],
  ["tools", "System tools"],
  ["memory-files", "Memory files"],
  ["skills", "Skills"],
  ["agents", "Custom agents"],
  ["hooks", "Hooks' context"],
  ["environment", "Environment"],
  ["messages", "Messages"],
  ["unattributed", "Unattributed"],
];

/**
 * The report's width: `COLUMNS` when it is a whole number, else the terminal's width when stdout
 * is a terminal, else 80.
 */
export function reportWidth(): number {
  const columns = envValue("COLUMNS");
  if (columns !== undefined && WHOLE_NUMBER.test(columns)) return Number(columns);
  try {
    if (Deno.stdout.isTerminal()) return Deno.consoleSize().columns;
  } catch { /* no console size: fall through */ }
  return 80;
}

/** Colour only on a terminal, and never when `NO_COLOR` is set (non-empty). */
export function reportColor(): boolean {
  if (envValue("NO_COLOR") !== undefined) return false;
  try {
    return Deno.stdout.isTerminal();
  } catch {
    return false;
  }
}

/**
 * Run context-scan with `args` and return its exit code: help on stdout, or the warnings on stderr
 * followed by the document (or the table report) on stdout, then the `--budget` line on stderr.
 * The loading rules and the report renderer are loaded only when asked for. Errors are thrown for
 * `runMain` to print.
 *
 * @example
 * ```ts ignore
 * import { runMain } from "../_cli/run.ts";
 * Deno.exit(await runMain(() => scanMain(Deno.args, selfOf(import.meta, "context-scan"))));
 * ```
 */
export async function scanMain(args: readonly string[], self: Self): Promise<number> {
  if (args[0] === OBSERVE_CHILD_ARG && args.length === 1) {
    // The observation child inside its namespace (references/context-scan.md#observe).
    const { observeChild } = await import("./observe/run.ts");
    writeOutRaw(`${await observeChild(Deno.env.toObject())}\n`);
    return 0;
  }
  const command = parseScanArgs(args);
  if (command.asks !== undefined) return await answer(command.asks, self, scanHelp);
  const options: ScanOptions = { ...command.scan, loaded: command.loaded === true };
  const pluginDirs = resolvePluginDirs(command.scan.pluginDirs ?? []);
  const loading = command.loaded
    ? (await import("./loading.ts")).createLoadingStep({ pluginDirs })
    : undefined;
  const result = scanProject(options, loading);
  if (command.observe !== undefined) {
    const { observeProject } = await import("./observe/observe.ts");
    const observed = await observeProject({
      root: result.document.roots.project,
      global: globalRoot(),
      ...(command.observe.claude === undefined ? {} : { claude: command.observe.claude }),
      timeoutMs: command.observe.timeoutSeconds * 1000,
      unsandboxed: command.observe.unsandboxed,
      hooks: command.observe.hooks,
      tiers: command.observe.tiers,
      pluginDirs: command.pluginDirs,
      env: Deno.env.toObject(),
      cwd: logicalCwd(),
    });
    result.document = withObserved(result.document, observed);
  }
  writeErr(...result.warnings.map(warningLine));
  if (command.format === "table") {
    const { renderReport } = await import("./report.ts");
    const report = renderReport(result.document, {
      width: reportWidth(),
      color: reportColor(),
      home: envValue("HOME"),
    });
    writeOutRaw(report);
  } else {
    writeOutRaw(renderScanDocument(result.document));
  }
  let rc: number = scanExitCode(result);
  if (command.budget !== undefined) {
    const check = budgetCheck(result.document, command.budget, envValue("HOME"));
    writeErr(check.line);
    if (check.exceeded && rc === 0) rc = 1;
  }
  return rc;
}
