/**
 * Test helpers for the observed suites: the pinned Claude Code (installed on demand), the check
 * that a fresh network namespace can be made here, and one observation of a fixture through
 * context-scan's own sandboxed observer. Every `claude` a test starts goes through
 * {@linkcode observeFixture}, which always runs it inside a fresh network namespace (only
 * loopback in it) — or, for the user's own `/name` prompts, through `tests/_user_prompts.ts`, in
 * the same namespace; a test never starts `claude` any other way.
 *
 * @module
 */

import { CLAUDE_CODE_VERSION, ensureClaudeCode } from "../scripts/claude_code.ts";
import { type ObservedRequest, parseObservedRequest } from "../lib/scan/observe/request.ts";
import {
  findOnPath,
  type Observation,
  observeSandboxed,
  unshareArguments,
} from "../lib/scan/observe/run.ts";
import type { ObservePlan } from "../lib/scan/observe/script.ts";
import { baseEnv, toolArgv } from "./_helpers.ts";

let namespaceProbe: Promise<string | undefined> | undefined;

/**
 * Why no fresh network namespace can be made here (`unshare` or `ip` missing, or the kernel
 * refuses), or undefined when one can. Probed once per test file.
 */
export function namespaceSkipReason(): Promise<string | undefined> {
  namespaceProbe ??= (async () => {
    if (Deno.build.os !== "linux") return `no network namespaces on ${Deno.build.os}`;
    const unshare = findOnPath("unshare", Deno.env.get("PATH"));
    if (unshare === undefined) return "unshare (util-linux) is not on PATH";
    if (findOnPath("ip", Deno.env.get("PATH")) === undefined) {
      return "ip (iproute2) is not on PATH";
    }
    const out = await new Deno.Command(unshare, {
      args: [...unshareArguments(Deno.uid() === 0), "--", "ip", "link", "set", "lo", "up"],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!out.success) {
      return `a network namespace cannot be made here: ${
        new TextDecoder().decode(out.stderr).trim()
      }`;
    }
    return undefined;
  })();
  return namespaceProbe;
}

/**
 * Skip with `reason` (prints `SKIP: <reason>`) — unless `CTXKIT_REQUIRE_OBSERVED=1` (set by
 * `.ci/run`), where an observed test that cannot run is a failure, not a silent pass.
 */
export function skipObserved(reason: string): undefined {
  if (Deno.env.get("CTXKIT_REQUIRE_OBSERVED") === "1") {
    throw new Error(`CTXKIT_REQUIRE_OBSERVED=1, but the observed test cannot run: ${reason}`);
  }
  console.log(`SKIP: ${reason}`);
  return undefined;
}

/**
 * True when a fresh network namespace can be made here; else skips (see
 * {@linkcode skipObserved}) and returns false. For tests that run only stand-ins.
 */
export async function namespaceAvailable(): Promise<boolean> {
  const why = await namespaceSkipReason();
  if (why === undefined) return true;
  skipObserved(why);
  return false;
}

/**
 * The Claude Code version the observed tests run: the pin, or `CTXKIT_CLAUDE_CODE_VERSION` (the
 * drift task, `scripts/drift.ts`, runs the differential suite against another installed version).
 */
export function observedVersion(): string {
  const asked = Deno.env.get("CTXKIT_CLAUDE_CODE_VERSION");
  return asked === undefined || asked === "" ? CLAUDE_CODE_VERSION : asked;
}

/**
 * The pinned `claude` (or {@linkcode observedVersion}'s), or the reason a test must skip: no
 * namespace can be made (then `claude` is never started), or Claude Code cannot be installed.
 * Prints `SKIP: <reason>` when skipping (fails instead under `CTXKIT_REQUIRE_OBSERVED=1`).
 */
export async function observedClaude(): Promise<string | undefined> {
  const noNamespace = await namespaceSkipReason();
  if (noNamespace !== undefined) return skipObserved(noNamespace);
  const got = await ensureClaudeCode(observedVersion());
  if ("skip" in got) return skipObserved(got.skip);
  return got.claude;
}

/** One fixture observation: where to run, and the temp HOME / CLAUDE_CONFIG_DIR it sees. */
export interface FixtureObservation {
  /** The project directory `claude` runs in. */
  readonly root: string;
  /** A temp HOME. */
  readonly home: string;
  /** A temp CLAUDE_CONFIG_DIR. */
  readonly configDir: string;
  /** `--plugin-dir` values. */
  readonly pluginDirs?: readonly string[];
  /** Run SessionStart hooks. */
  readonly hooks?: boolean;
  /** Extra environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** A tier observation's script (the session then runs to its end). */
  readonly plan?: ObservePlan;
  /** The deadline in milliseconds (default 120 s). */
  readonly timeoutMs?: number;
  /**
   * A folder laid over `/etc` in the observation's own mount namespace (an overlay, so its
   * `claude-code/` is the managed policy Claude Code reads; the machine's `/etc` is untouched).
   */
  readonly managedOverlay?: string;
}

/**
 * The command that starts the observation child, inside a private mount namespace whose `/etc` is
 * `/etc` with `upper` laid over it (an overlay; its work folder beside `upper`).
 */
function withOverlay(upper: string, self: readonly string[]): string[] {
  const work = `${upper}.work`;
  Deno.mkdirSync(work, { recursive: true });
  const unshare = findOnPath("unshare", Deno.env.get("PATH")) ?? "unshare";
  return [
    unshare,
    "--mount",
    "--",
    "sh",
    "-c",
    'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1,workdir=$2" /etc && shift 2 && exec "$@"',
    "sh",
    upper,
    work,
    ...self,
  ];
}

/**
 * Observe `fixture` with the pinned Claude Code inside a fresh network namespace, through
 * context-scan's observation child (`bin/context-scan.ts`, or the bundle under the bundle target).
 */
export async function observeFixture(
  claude: string,
  fixture: FixtureObservation,
): Promise<{ observation: Observation; request: ObservedRequest }> {
  const unshare = findOnPath("unshare", Deno.env.get("PATH"));
  if (unshare === undefined) throw new Error("unshare vanished since the probe");
  const observation = await observeSandboxed(
    {
      claude,
      cwd: fixture.root,
      pluginDirs: fixture.pluginDirs ?? [],
      hooks: fixture.hooks ?? false,
      timeoutMs: fixture.timeoutMs ?? 120_000,
      ...(fixture.plan === undefined ? {} : { plan: fixture.plan }),
      env: {
        ...baseEnv(),
        HOME: fixture.home,
        CLAUDE_CONFIG_DIR: fixture.configDir,
        ...fixture.env,
      },
    },
    unshare,
    fixture.managedOverlay === undefined
      ? toolArgv("context-scan")
      : withOverlay(fixture.managedOverlay, toolArgv("context-scan")),
  );
  if (observation === undefined) throw new Error("no network namespace could be made");
  return { observation, request: parseObservedRequest(JSON.parse(observation.body)) };
}
