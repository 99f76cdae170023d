/**
 * The `prose` command line (`references/prose.md#cli`): the one place that formats output lines
 * and error lines and decides exit codes. Arguments are parsed by `cli_args.ts`; the commands below
 * take typed options and return typed results or throw typed errors. Config policy: activations
 * fail closed on an invalid config, the other commands warn and use the built-in defaults.
 *
 * @module
 */

import { type CtxkitError, EnvironmentError, UsageError } from "../errors.ts";
import { errorCode, isSandboxRefusal, rethrowPermission } from "../_fs/errors.ts";
import { text, verbatim } from "../text.ts";
import { envValue, normalizeLexical } from "../paths.ts";
import { writeErr, writeOut } from "../_cli/output.ts";
import type { ErrorFormat } from "../_cli/run.ts";
import { answer, programName, type Self, selfCommand } from "../_cli/self.ts";
import { readStdinCapped } from "../_cli/input.ts";
import type { BackendOutcome, FallbackReason, Rejection } from "./backend.ts";
import { type Invocation, parseCommandLine } from "./cli_args.ts";
import {
  type ConfigResult,
  defaultConfig,
  loadConfig,
  loopbackOrigin,
  type ProseConfig,
} from "./config.ts";
import { matchTrigger, stopTriggerWorker, TRIGGER_BUDGET_MS } from "./trigger.ts";
import { ProseError } from "./errors.ts";
import {
  type ProsePaths,
  readProseFlag,
  reasonMessage,
  resolveLevel,
  resolvePaths,
} from "./flag.ts";
import type { OpResult } from "./ops.ts";
import {
  renderText,
  renderValue,
  safeJson,
  sanitize,
  sanitizeMessage,
  TOKEN_MAX,
} from "./sanitize.ts";
import {
  HookInputSchema,
  type ProseFlag,
  type ReasonCode,
  type StatusDocument,
  type ToggleRequest,
} from "./schema.ts";
import { statusDocument } from "./status.ts";

/**
 * The permission flags of the bin's shebang, which every documented invocation (and the git hook
 * block) uses: every loopback form a backend URL may name is granted.
 */
export const RUN_PERMISSIONS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-net=127.0.0.1,localhost,[::1]",
  "--allow-run=git",
] as const;

/** Largest `match` input read from stdin. */
const MAX_MATCH_INPUT = 64 * 1024;

/** The warning of a delegated command that falls back to the flag file. */
const FALLBACK_WARNING =
  "PROSE-WARN: backend unreachable; flag file used directly (mirror not updated)";

/** What the bin passes in: the running tool (its script is what `install-hooks` writes). */
export type CliEnvironment = Self;

// --- lines ------------------------------------------------------------------------------------

/**
 * `PROSE-ERROR: code=<code>[ field=<f>] <message>`: the one shape of every prose error line. The
 * message must already be safe to print.
 */
export function errorLine(code: string, message: string, field?: string): string {
  const f = field === undefined ? "" : ` field=${renderValue(field)}`;
  return `PROSE-ERROR: code=${renderValue(code)}${f} ${message}`;
}

/** How `runMain` prints prose failures: every one as an {@linkcode errorLine}, never a stack. */
export const proseErrorFormat: ErrorFormat = {
  error: (e: CtxkitError) => {
    if (e instanceof ProseError) {
      const line = errorLine(e.code, renderText(e.text), e.field);
      return e.synopsis === undefined ? [line] : [line, e.synopsis];
    }
    if (e instanceof EnvironmentError) return [errorLine("env", renderText(e.text), e.variable)];
    return [errorLine(e instanceof UsageError ? "usage" : "internal", renderText(e.text))];
  },
  permission: (detail) => errorLine("permission", sanitizeMessage(detail)),
  internal: (detail) => errorLine("internal", sanitizeMessage(detail)),
};

/** `PROSE: action=<action> result=<r> [reason=<code>] [remaining=<n>]`. */
export function actionLine(
  action: string,
  r: { result: string; reason?: string; remaining?: number },
): string {
  const reason = r.reason === undefined ? "" : ` reason=${renderValue(r.reason)}`;
  const remaining = r.remaining === undefined ? "" : ` remaining=${r.remaining}`;
  return `PROSE: action=${action} result=${renderValue(r.result)}${reason}${remaining}`;
}

function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * The status line of a flag read or a status document:
 * `PROSE: state=… level=… effective=… ttl=… expiresAt=… activatedAt=… source=… [reason=] [field=]`.
 */
export function statusLine(s: Pick<StatusDocument, "state" | "flag" | "reason" | "field">): string {
  const f = s.flag;
  const parts = [
    `state=${s.state}`,
    `level=${f ? f.level : "-"}`,
    `effective=${resolveLevel(s)}`,
    `ttl=${f ? (f.ttl.unit === "turn" ? `turn:${f.ttl.value}` : f.ttl.unit) : "-"}`,
    `expiresAt=${f ? (f.expiresAt === null ? "never" : isoTime(f.expiresAt)) : "-"}`,
    `activatedAt=${f ? isoTime(f.activatedAt) : "-"}`,
    `source=${f ? f.source : "-"}`,
  ];
  if (s.reason !== null) parts.push(`reason=${renderValue(s.reason)}`);
  if (s.field !== null) parts.push(`field=${renderValue(s.field)}`);
  return `PROSE: ${parts.join(" ")}`;
}

function ttlPhrase(flag: ProseFlag): string {
  switch (flag.ttl.unit) {
    case "turn":
      return flag.ttl.value === 1 ? "1 response left" : `${flag.ttl.value} responses left`;
    case "block":
      return "until the work block ends (commit or push)";
    case "session":
      return "until the session ends";
    case "explicit":
      return "until `prose off`";
  }
}

/**
 * One human sentence for a status document, e.g. "Prose override active: level full, 2 responses
 * left, no time limit."
 */
export function statusSentence(doc: StatusDocument): string {
  const f = doc.flag;
  switch (doc.state) {
    case "absent":
      return "No prose override: default quantization applies.";
    case "expired":
      return `Prose override expired at ${isoTime(f!.expiresAt!)}: default quantization applies.`;
    case "invalid":
      return `Prose flag is invalid (${doc.reason}): default quantization applies; run \`prose off\` to remove it.`;
    case "unsafe":
      return `Prose flag path is unsafe (${doc.reason}): default quantization applies; check ${
        sanitize(doc.flagPath)
      }.`;
    case "active": {
      const limit = f!.expiresAt === null ? "no time limit" : `expires ${isoTime(f!.expiresAt)}`;
      if (f!.level === "off") {
        return `Prose override paused (level off): default quantization applies, ${
          ttlPhrase(f!)
        }, ${limit}.`;
      }
      return `Prose override active: level ${f!.level}, ${ttlPhrase(f!)}, ${limit}.`;
    }
  }
}

/** `PROSE: mirror drift=<bool> driftKeys=<k,…|->`: the backend's drift verdict. */
export function driftLine(doc: StatusDocument): string {
  const keys = doc.driftKeys === null || doc.driftKeys.length === 0 ? "-" : doc.driftKeys.join(",");
  return `PROSE: mirror drift=${doc.drift === null ? "-" : String(doc.drift)} driftKeys=${keys}`;
}

function viaLine(url: string): string {
  return `PROSE: via=backend url=${renderValue(url)}`;
}

function fallbackLine(url: string, reason: FallbackReason): string {
  return `PROSE: via=filesystem backend=unreachable url=${renderValue(url)} reason=${reason}`;
}

// --- environment and config policy ------------------------------------------------------------

/**
 * "Now": `CTXKIT_NOW_MS` (integer epoch-ms; it exists for deterministic TTL tests), else the real
 * clock. A malformed value is an `EnvironmentError`.
 */
export function clockNow(): number {
  const fixed = Deno.env.get("CTXKIT_NOW_MS");
  if (fixed === undefined || fixed === "") return Date.now();
  if (!/^[1-9][0-9]{0,15}$/.test(fixed)) {
    throw new EnvironmentError("CTXKIT_NOW_MS", text`must be an integer epoch-ms`);
  }
  return Number(fixed);
}

function configError(r: Extract<ConfigResult, { ok: false }>): ProseError {
  return new ProseError("config", text`${verbatim(r.message)}`, { field: r.field });
}

/**
 * The state root must be a directory, or not exist yet (writers create it): a device, a regular
 * file or a path the Deno sandbox refuses under any grant (`/proc`, `/dev`) is a bad environment,
 * reported once, naming the path, before anything else looks at it.
 */
function checkRoot(paths: ProsePaths): ProsePaths {
  const variable = envValue("CELLM_DIR") === undefined ? "HOME" : "CELLM_DIR";
  let isDirectory: boolean;
  try {
    isDirectory = Deno.statSync(paths.root).isDirectory; // R may be a link
  } catch (e) {
    rethrowPermission(e);
    if (isSandboxRefusal(e)) {
      throw new EnvironmentError(
        variable,
        text`${paths.root}: Deno refuses this path under any grant; the prose state needs a directory`,
      );
    }
    if (errorCode(e) !== "ENOTDIR") return paths; // absent: writers create it
    isDirectory = false;
  }
  if (!isDirectory) {
    throw new EnvironmentError(
      variable,
      text`${paths.root}: not a directory; the prose state needs a directory`,
    );
  }
  return paths;
}

/** Config for commands that stop on an invalid config (`on`, bare `prose`, `match`). */
function requiredConfig(paths: ProsePaths): ProseConfig {
  const r = loadConfig({ root: paths.root });
  if (!r.ok) throw configError(r);
  return r.config;
}

/** Config for the other commands: built-in defaults (and a warning) when it is invalid. */
function lenientConfig(paths: ProsePaths): { config: ProseConfig; valid: boolean } {
  const r = loadConfig({ root: paths.root });
  if (r.ok) return { config: r.config, valid: true };
  writeErr(
    `PROSE-WARN: code=config field=${
      renderValue(r.field)
    } ${r.message}; using built-in defaults and the backend URL from the environment only`,
  );
  return { config: defaultConfig(), valid: false };
}

/** The backend origin, or `null` (none configured, or `--local`); a non-loopback URL is rc 2. */
function backendUrl(config: ProseConfig, configValid: boolean, local: boolean): string | null {
  if (local) return null;
  const fromEnv = envValue("CELLM_WORKER_URL");
  if (fromEnv !== undefined) {
    const origin = loopbackOrigin(fromEnv);
    if (origin === null) {
      throw new EnvironmentError(
        "CELLM_WORKER_URL",
        text`${fromEnv}: must be http:// on 127.0.0.1, localhost or [::1], without a path`,
      );
    }
    return origin;
  }
  if (!configValid || config.backend.url === null) return null;
  return loopbackOrigin(config.backend.url);
}

// --- results ----------------------------------------------------------------------------------

/** The root and clock every library call of one run uses. */
interface RunOptions {
  root: string;
  now: number;
}

/** Print a transition's action and status lines (and its stderr lines); return its exit code. */
function report(action: string, result: OpResult, opts: RunOptions): number {
  if (result.result === "usage") {
    const field = result.field === undefined ? {} : { field: result.field };
    throw new ProseError("usage", text`${result.message ?? "bad activation"}`, field);
  }
  const read = readProseFlag(opts);
  writeOut(actionLine(action, result), statusLine(read));
  if (result.warning !== undefined) writeErr(`PROSE-WARN: ${sanitizeMessage(result.warning)}`);
  if (result.ok) return 0;
  const reason = result.reason ?? "io-error";
  const message = result.message ??
    (reason === "auto-clarity-disabled"
      ? "auto-clarity activations are disabled (autoClarity.enabled in config.json)"
      : reasonMessage(reason as ReasonCode, read.path));
  writeErr(errorLine(reason, message));
  return 1;
}

/**
 * Print a status document: the JSON alone (`--json`), or the status line, the drift line (from a
 * backend) and the sentence; an invalid or unsafe flag adds `problem` as an error line and rc 1.
 */
function printStatus(doc: StatusDocument, json: boolean, url: string | null, problem: string) {
  const out = json ? [safeJson(doc)] : [statusLine(doc), statusSentence(doc)];
  const err: string[] = [];
  if (url !== null) {
    if (!json) out.splice(1, 0, driftLine(doc));
    // With --json, stdout must stay one JSON document: the via line goes to stderr.
    (json ? err : out).unshift(viaLine(url));
  }
  const rc = doc.state === "invalid" || doc.state === "unsafe" ? 1 : 0;
  if (rc === 1) err.push(errorLine(doc.reason ?? doc.state, problem));
  writeOut(...out);
  writeErr(...err);
  return rc;
}

/**
 * A backend rejection (400, 401, 403, 409, 413, 415): final, never retried locally. A 401 also
 * says why the CLI had no token for that backend (`missing`).
 */
function printRejection(url: string, action: string, r: Rejection, missing?: string): void {
  const out = [viaLine(url)];
  let err: string;
  if (r.status === 409) {
    const reason = r.reason ?? r.error;
    out.push(
      actionLine(action, { result: r.error === "conflict" ? "conflict" : "refused", reason }),
    );
    err = errorLine(reason, sanitizeMessage(r.message), r.field);
  } else {
    let message = `backend rejected the request (HTTP ${r.status}): ${sanitizeMessage(r.message)}`;
    // With a record, a 401 carries no proof and never gets here (it is `unverified`).
    if (r.status === 401 && missing !== undefined) {
      message += `; no token for this backend: ${missing}`;
    }
    err = errorLine(r.error, message, r.field);
  }
  writeOut(...out);
  writeErr(err);
}

/**
 * Run `request` through the backend at `url` when there is one; otherwise, or when it is
 * unreachable (after the fallback line and warning), run `local` on the flag file. `sync` has
 * nothing to do locally: an unreachable backend is a refusal. The request carries the server's
 * token when `D/serve.json` names that backend (`references/prose.md#authentication`).
 */
async function withBackend(
  url: string | null,
  request: ToggleRequest | { action: "status" },
  json: boolean,
  opts: RunOptions,
  local: () => number | Promise<number>,
): Promise<number> {
  if (url === null) return local();
  // The backend client and the token lookup load only when there is a backend to call
  // (references/startup.md#no-work-the-answer-does-not-need).
  const { callStatus, callToggle, rejectionExitCode, TOGGLE_TIMEOUT_MS } = await import(
    "./backend.ts"
  );
  const { backendTarget } = await import("./token.ts");
  const target = backendTarget(url, opts);
  /**
   * Without the token nothing an answer says can be checked: only the 401 every prose server
   * gives a request without it is believed (references/prose.md#authentication).
   */
  const believed = <T>(answer: BackendOutcome<T>): BackendOutcome<T> =>
    target.token !== undefined || answer.kind === "fallback" ||
      (answer.kind === "rejected" && answer.status === 401)
      ? answer
      : { kind: "fallback", reason: "unverified" };
  let failed: Rejection | { kind: "fallback"; reason: FallbackReason };
  if (request.action === "status") {
    const answer = believed(await callStatus(target.origin, target.token));
    if (answer.kind === "ok") {
      const doc = answer.body;
      return printStatus(doc, json, url, `${sanitize(doc.flagPath)}: the flag is ${doc.state}`);
    }
    failed = answer;
  } else {
    const answer = believed(await callToggle(target.origin, request, target.token));
    if (answer.kind === "ok") {
      writeOut(
        viaLine(url),
        actionLine(request.action, answer.body),
        statusLine(answer.body.status),
      );
      return 0;
    }
    failed = answer;
  }
  if (failed.kind === "rejected") {
    printRejection(url, request.action, failed, target.missing);
    return rejectionExitCode(failed.status);
  }
  if (failed.reason === "timeout" && target.token !== undefined && request.action !== "status") {
    // The server got the toggle and may have carried it out: running it again here would be a
    // second transition (references/prose.md#cli-delegation).
    writeOut(viaLine(url));
    writeErr(
      errorLine(
        "timeout",
        `the backend did not answer within ${TOGGLE_TIMEOUT_MS} ms; the flag may have changed (run prose status); nothing was run locally`,
      ),
    );
    return 1;
  }
  const line = fallbackLine(url, failed.reason);
  if (request.action === "sync") {
    writeOut(line, actionLine("sync", { result: "refused", reason: "backend-unreachable" }));
    writeErr(
      errorLine("backend-unreachable", "the mirror lives in the backend; start `prose serve`"),
    );
    return 1;
  }
  if (json) writeErr(line, FALLBACK_WARNING);
  else {
    writeOut(line);
    writeErr(FALLBACK_WARNING);
  }
  return local();
}

// --- commands ---------------------------------------------------------------------------------

/** `on`, `off`, `level`: through the backend when there is one, else on the flag file. */
function toggle(
  request: Exclude<ToggleRequest, { action: "sync" }>,
  config: ProseConfig,
  url: string | null,
  opts: RunOptions,
): Promise<number> {
  return withBackend(url, request, false, opts, async () => {
    const { applyToggle } = await transitions();
    return report(request.action, applyToggle(request, { ...opts, config }), opts);
  });
}

/** The `prompt` of a `UserPromptSubmit` hook input. */
function hookPrompt(bytes: Uint8Array): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new ProseError("usage", text`--hook-input: stdin is not JSON`, { field: "prompt" });
  }
  const input = HookInputSchema.safeParse(parsed);
  if (!input.success) {
    throw new ProseError("usage", text`--hook-input: no string prompt field`, { field: "prompt" });
  }
  return input.data.prompt;
}

async function match(
  cmd: Extract<Invocation, { command: "match" }>,
  paths: ProsePaths,
  opts: RunOptions,
): Promise<number> {
  const config = requiredConfig(paths);
  const url = cmd.activate ? backendUrl(config, true, cmd.local) : null;
  let input: string;
  if (cmd.text !== undefined) input = cmd.text;
  else {
    const { bytes, truncated } = await readStdinCapped(MAX_MATCH_INPUT);
    if (cmd.hookInput && truncated) {
      writeOut("PROSE: match=no reason=input-too-large");
      return 1;
    }
    // A truncated UTF-8 tail of plain text decodes to U+FFFD, which never forms a token.
    input = cmd.hookInput ? hookPrompt(bytes) : new TextDecoder().decode(bytes);
  }
  const m = await matchTrigger(input, config);
  stopTriggerWorker();
  if (m.timedOut) {
    // The pattern is not a list of words and ran out of its budget on this prompt: no match, and
    // the prompt goes on (references/prose.md#trigger).
    writeOut("PROSE: match=no reason=trigger-timeout");
    writeErr(
      `PROSE-WARN: trigger.pattern searched this prompt for more than ${TRIGGER_BUDGET_MS} ms; no match (write it as a list of words)`,
    );
    return 1;
  }
  if (!m.enabled || !m.matched) {
    writeOut(m.enabled ? "PROSE: match=no" : "PROSE: match=no reason=trigger-disabled");
    return 1;
  }
  writeOut(`PROSE: match=yes token=${renderValue(m.token ?? "", TOKEN_MAX)}`);
  return cmd.activate ? await toggle({ action: "on", source: "config" }, config, url, opts) : 0;
}

/** `install-hooks`; the hook code is loaded only for it (start-up of the hook-path commands). */
async function hooks(
  cmd: Extract<Invocation, { command: "install-hooks" }>,
  script: string,
): Promise<number> {
  const { installHooks } = await import("./hooks.ts");
  const outcomes = installHooks({
    repo: cmd.repo ?? Deno.cwd(),
    dryRun: cmd.dryRun,
    remove: cmd.remove,
    // The runtime and script by absolute path (and the config a source install needs): the block
    // runs as printed from any directory and any PATH.
    command: [...selfCommand(script, RUN_PERMISSIONS), "block-end"],
  });
  writeOut(...outcomes.map((o) => {
    const reason = o.result === "refused" ? ` reason=${o.reason}` : "";
    return `PROSE: hook=${o.name} result=${o.result}${reason} path=${renderValue(o.path)}`;
  }));
  writeErr(
    ...outcomes.flatMap((o) =>
      o.hint === undefined
        ? []
        : [errorLine(o.reason ?? "io-error", `${sanitize(o.path)}: ${o.hint}`)]
    ),
  );
  return outcomes.some((o) => o.result === "refused") ? 1 : 0;
}

async function serve(cmd: Extract<Invocation, { command: "serve" }>): Promise<number> {
  // Loaded here only: node:sqlite and the server never slow down the hook commands.
  const server = await import("./server.ts");
  const paths = checkRoot(resolvePaths());
  const config = loadConfig();
  if (!config.ok) throw configError(config);
  const port = server.resolvePort({
    flag: cmd.port,
    env: Deno.env.get("CELLM_WORKER_PORT"),
    workerJson: () => server.readWorkerJson(paths.workerJson),
  });
  if (port.warning !== undefined) writeErr(`PROSE-WARN: ${port.warning}`);
  // Listen for signals before the listening line: a supervisor may signal as soon as it reads it.
  const stop = server.watchSignals();
  const fatal = server.watchFatal();
  let running;
  try {
    const dbPath = cmd.db === undefined
      ? server.defaultDbPath(paths)
      : normalizeLexical(cmd.db, Deno.cwd());
    running = await server.startProseServer({ port: port.port, dbPath });
  } catch (e) {
    stop.cancel();
    fatal.cancel();
    throw e;
  }
  writeOut(
    `PROSE: serve listening=${running.url} db=${renderValue(running.dbPath)} token=${
      renderValue(running.tokenPath)
    }`,
  );
  let signal: Deno.Signal;
  try {
    signal = await Promise.race([stop.signal, fatal.failed]);
  } catch (e) {
    // Anything unexpected still ends through runMain: an error line and ❌ FAILED EXIT:1.
    stop.cancel();
    await running.shutdown().catch(() => {});
    throw e;
  } finally {
    fatal.cancel();
  }
  await running.shutdown();
  writeOut(`PROSE: serve stopped signal=${signal}`);
  return 0;
}

/**
 * The flag's state transitions (`ops.ts`, with the lock), loaded only by the commands that may
 * change the flag: `status` and a `match` without `--activate` never load them.
 */
function transitions(): Promise<typeof import("./ops.ts")> {
  return import("./ops.ts");
}

/**
 * Run the `prose` CLI with `args`; returns the exit code or throws a `CtxkitError` (formatted by
 * {@linkcode proseErrorFormat}).
 */
export async function proseMain(args: readonly string[], env: CliEnvironment): Promise<number> {
  const now = clockNow();
  const cmd = parseCommandLine(args, () => programName(env));
  switch (cmd.command) {
    case "help":
      writeOut(cmd.text);
      return 0;
    case "version":
      return await answer("version", env, () => "");
    case "serve":
      return await serve(cmd);
    case "install-hooks":
      return await hooks(cmd, env.scriptPath);
  }
  const paths = checkRoot(resolvePaths());
  const opts: RunOptions = { root: paths.root, now };
  switch (cmd.command) {
    case "on": {
      const config = requiredConfig(paths);
      const url = backendUrl(config, true, cmd.local);
      return await toggle({ action: "on", ...cmd.params }, config, url, opts);
    }
    case "match":
      return await match(cmd, paths, opts);
    case "consume":
      return report("consume", (await transitions()).consume(opts), opts);
    case "block-end":
      return report("block-end", (await transitions()).endBlock(opts), opts);
    case "session-end":
      return report("session-end", (await transitions()).endSession(opts), opts);
  }
  const { config, valid } = lenientConfig(paths);
  const url = backendUrl(config, valid, cmd.local);
  switch (cmd.command) {
    case "off":
      return await toggle({ action: "off" }, config, url, opts);
    case "level":
      return await toggle({ action: "level", level: cmd.level }, config, url, opts);
    case "status": {
      return await withBackend(url, { action: "status" }, cmd.json, opts, () => {
        const read = readProseFlag(opts);
        const problem = reasonMessage(read.reason ?? "io-error", read.path);
        return printStatus(statusDocument(read, "filesystem", now), cmd.json, null, problem);
      });
    }
    case "sync":
      return await withBackend(url, { action: "sync" }, false, opts, () => {
        writeOut(actionLine("sync", { result: "refused", reason: "no-backend" }));
        writeErr(
          errorLine(
            "no-backend",
            "sync needs a backend (CELLM_WORKER_URL or backend.url, without --local)",
          ),
        );
        return 1;
      });
  }
}
