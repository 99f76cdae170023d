/**
 * A tier observation (`--observe-tiers`; `references/context-scan.md#observing-every-tier`): the
 * script drawn from the per-tier model — every skill and command it lists invoked once, every
 * agent spawned once, one path read for each on-access source — and the session's requests turned
 * into `observed.tiers`, each source's observed bytes beside the model's figure.
 *
 * @module
 */

import { dirname } from "../../paths.ts";
import { type LoadingModel, loadingModel } from "../claude_model.ts";
import { tokensOf } from "../measure.ts";
import { accessProbe, nestedInstructionFiles, type OnAccessSource } from "../model/on_access.ts";
import { realOrSelf } from "../model/read.ts";
import {
  type InvocationFigure,
  type SpawnFigure,
  type TierModel,
  tierModel,
} from "../model/tiers.ts";
import type {
  ScanObservedAccess,
  ScanObservedInvocation,
  ScanObservedSpawn,
  ScanObservedTiers,
} from "../schema.ts";
import { requestSizes } from "./observed.ts";
import { parseObservedRequest } from "./request.ts";
import { type ObservePlan, planObservation, type SessionRequests } from "./script.ts";
import { type MainRequest, mainRequest, type SpawnRequest, spawnRequest } from "./turns.ts";

/**
 * The tier model of a project as an observation sees it (global sources included), from its
 * start-up model `model` (built here when not given).
 */
export function observedTierModel(
  places: { root: string; global: string; pluginDirs: readonly string[]; home: string | undefined },
  model?: LoadingModel,
): TierModel {
  const roots = {
    project: places.root,
    global: places.global,
    includeGlobal: true,
    home: places.home,
    pluginDirs: places.pluginDirs,
  };
  return tierModel(roots, model ?? loadingModel(roots), nestedInstructionFiles(places.root));
}

/** A plan and what each of its calls is for. */
export interface TierPlan {
  /** The script. */
  readonly plan: ObservePlan;
  /** The invocations planned. */
  readonly invocations: readonly InvocationFigure[];
  /** The spawns planned. */
  readonly spawns: readonly SpawnFigure[];
  /** Each planned source's call (by its file): its id and turn. */
  readonly calls: ReadonlyMap<string, { readonly id: string; readonly turn: number }>;
  /** Each on-access source and the path read for it (an import: its importer's). */
  readonly probes: ReadonlyMap<string, string>;
}

/** The script of `tiers`: every source the model says a call can send. */
export function tierPlan(tiers: TierModel): TierPlan {
  const all = [...tiers.invocations.values()].filter((f) => f.modelInvocable);
  const item = (f: { name: string; path: string }) => ({ name: f.name, key: f.path });
  const skills = all.filter((f) => f.kind === "skill");
  const commands = all.filter((f) => f.kind === "command");
  const spawns = [...tiers.spawns.values()];
  const probes = new Map<string, string>();
  const reads: string[] = [];
  for (const source of tiers.onAccess) {
    const probe = source.importedBy === undefined
      ? accessProbe(source)
      : probes.get(source.importedBy) ?? accessProbe(source);
    probes.set(source.path, probe);
    if (source.importedBy === undefined && !reads.includes(probe)) reads.push(probe);
  }
  const planned = planObservation({
    skills: skills.filter((f) => !f.forked).map(item),
    forked: skills.filter((f) => f.forked).map(item),
    commands: commands.map(item),
    agents: spawns.map(item),
    reads,
  });
  return { ...planned, invocations: [...skills, ...commands], spawns, probes };
}

const encoder = new TextEncoder();
const bytesOf = (s: string) => encoder.encode(s).length;

/** A recorded body as JSON (an unreadable one reads as nothing: its parts are then missing). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * `observed.tiers` of a session: each planned invocation, spawn and access with what Claude Code
 * sent for it, beside the model's figure; paths in the private config copy mapped back by
 * `realPath`, and inside texts by `realText`.
 */
export function observedTiers(
  tierPlanned: TierPlan,
  tiers: TierModel,
  session: SessionRequests,
  realPath: (path: string) => string = (p) => p,
  realText: (text: string) => string = (t) => t,
): ScanObservedTiers {
  // A text naming the private config copy is measured as it names the real global root.
  const utf8 = (text: string) => bytesOf(realText(text));
  const key = (path: string) => realOrSelf(realPath(path));
  const warnings: string[] = [];
  // The main thread's request after each turn; the last holds every call's result.
  const mains = new Map<number, MainRequest>();
  for (const m of session.main) mains.set(m.step, mainRequest(parseJson(m.body)));
  const last = session.main.length === 0 ? undefined : mains.get(session.main.at(-1)!.step);
  if (last === undefined) warnings.push("the main thread sent no request after the first");
  warnings.push(...(last?.warnings ?? []));
  const results = new Map<string, { error: boolean; text: string }>();
  for (const m of mains.values()) for (const [id, r] of m.results) results.set(id, r);
  const skillTexts = new Map<string, string[]>();
  for (const [dir, texts] of last?.skills ?? []) {
    skillTexts.set(key(dir), [...(skillTexts.get(key(dir)) ?? []), ...texts]);
  }
  /** The texts without a header that turn `turn`'s calls brought. */
  const bareOf = (turn: number): readonly string[] => {
    const after = mains.get(turn + 1)?.bare ?? [];
    return after.slice(mains.get(turn)?.bare.length ?? 0);
  };
  const spawnsByCall = new Map<string, { request: SpawnRequest; raw: unknown }>();
  const forked = new Map<string, string>();
  for (const text of session.subagents) {
    const raw = parseJson(text);
    const request = spawnRequest(raw);
    if (request === undefined) {
      warnings.push("a subagent's request is unreadable");
      continue;
    }
    if (request.callId !== undefined) spawnsByCall.set(request.callId, { request, raw });
    else if (request.forked !== undefined) forked.set(key(request.forked.dir), request.forked.text);
  }
  /** A refused call's reason, as a warning (its first line, cut). */
  const refused = (name: string, id: string) => {
    const text = results.get(id)?.text ?? "";
    const line = text.replace(/<\/?tool_use_error>/g, "").split("\n")[0].slice(0, 200);
    warnings.push(`${name}: refused: ${line}`);
  };
  const byFigure = tierPlanned.calls;

  const invocations: ScanObservedInvocation[] = tierPlanned.invocations.map((f) => {
    const call = byFigure.get(f.path)!;
    const result = results.get(call.id);
    let text: string | undefined;
    if (f.forked) text = forked.get(key(dirname(f.path)));
    else if (f.kind === "skill") text = skillTexts.get(key(dirname(f.path)))?.[0];
    else {
      const bare = bareOf(call.turn);
      if (bare.length > 1) warnings.push(`${f.name}: ${bare.length} texts without a header`);
      text = bare.length === 1 ? bare[0] : undefined;
    }
    const bytes = text === undefined ? 0 : utf8(text);
    if (result?.error) refused(f.name, call.id);
    return {
      name: f.name,
      kind: f.kind,
      path: f.path,
      status: result?.error ? "refused" : text === undefined ? "not-sent" : "observed",
      bytes,
      tokens: tokensOf(bytes),
      model_bytes: f.bytes,
      forked: f.forked,
    };
  });

  const invocationByDir = new Map(
    [...tiers.invocations.values()].map((f) => [key(dirname(f.path)), f]),
  );
  const spawns: ScanObservedSpawn[] = tierPlanned.spawns.map((f) => {
    const call = byFigure.get(f.path)!;
    const seen = spawnsByCall.get(call.id);
    const bytes = seen?.request.body === undefined ? 0 : utf8(seen.request.body);
    if (seen !== undefined && seen.request.body === undefined) {
      warnings.push(`${f.name}: the agent body was not found in its request`);
    }
    if (results.get(call.id)?.error && seen === undefined) refused(f.name, call.id);
    let request: ScanObservedSpawn["request"] = null;
    if (seen !== undefined) {
      try {
        request = requestSizes(parseObservedRequest(seen.raw));
      } catch {
        warnings.push(`${f.name}: its request is not a messages request`);
      }
    }
    return {
      name: f.name,
      path: f.path,
      status: results.get(call.id)?.error && seen === undefined
        ? "refused"
        : seen === undefined
        ? "not-sent"
        : "observed",
      bytes,
      tokens: tokensOf(bytes),
      model_bytes: f.bytes,
      model: seen?.request.model ?? null,
      request,
      preloaded: (seen?.request.preloaded ?? []).map((p) => {
        const skill = invocationByDir.get(key(p.dir));
        return {
          name: p.name,
          path: skill?.path ?? null,
          bytes: utf8(p.text),
          model_bytes: skill?.bytes ?? null,
        };
      }),
    };
  });

  const sent = new Map<string, { path: string; bytes: number; times: number }>();
  for (const a of last?.accesses ?? []) {
    const k = key(a.path);
    const had = sent.get(k);
    if (had === undefined) sent.set(k, { path: realPath(a.path), bytes: utf8(a.text), times: 1 });
    else had.times++;
  }
  for (const s of sent.values()) {
    if (s.times > 1) warnings.push(`${s.path}: sent ${s.times} times`);
  }
  const expected = new Set<string>();
  const accesses: ScanObservedAccess[] = tiers.onAccess.map((source: OnAccessSource) => {
    const k = key(source.path);
    expected.add(k);
    const seen = sent.get(k);
    const bytes = seen?.bytes ?? 0;
    return {
      path: source.path,
      kind: source.kind,
      probe: tierPlanned.probes.get(source.path) ?? null,
      status: seen === undefined ? "not-sent" : "observed",
      bytes,
      tokens: tokensOf(bytes),
      model_bytes: source.bytes,
    };
  });
  for (const [k, s] of sent) {
    if (expected.has(k)) continue;
    accesses.push({
      path: s.path,
      kind: s.path.includes("/rules/") ? "rule" : "instruction",
      probe: null,
      status: "observed",
      bytes: s.bytes,
      tokens: tokensOf(s.bytes),
      model_bytes: null,
    });
  }
  return { requests: session.requests, invocations, spawns, accesses, warnings };
}
