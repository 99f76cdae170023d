/**
 * The zod schema of `observed.tiers` (`--observe-tiers`;
 * `references/context-scan.md#observing-every-tier`): what a scripted session made Claude Code
 * send per invocation, per spawn and per access, beside the model's figure. Part of the document's
 * schema (`schema.ts` imports it); spelled out here because it is its own question.
 *
 * @module
 */

import * as z from "../_zod.ts";
import {
  ScanObservedCategoriesSchema,
  type ScanObservedSize as Size,
  ScanObservedSizeSchema,
} from "./schema.ts";

/** Whether a planned call sent its source. */
export type ObservedStatus = ScanObservedInvocation["status"];

/** `observed` when the source was sent, `refused` when the tool call failed, else `not-sent`. */
export const ObservedStatusSchema = z.deferred(() => z.enum(["observed", "refused", "not-sent"]));

/** One invoked skill or command. */
export interface ScanObservedInvocation {
  /** The name the Skill tool was given. */
  name: string;
  /** A skill or a command. */
  kind: "skill" | "command";
  /** Its file. */
  path: string;
  /** Whether its text was sent. */
  status: "observed" | "refused" | "not-sent";
  /** Bytes of the text sent (a skill's header line not counted). */
  bytes: number;
  /** `floor(bytes / 4)`. */
  tokens: number;
  /** The model's figure for it (`--loaded`'s `loaded_bytes`). */
  model_bytes: number | null;
  /** True when it ran forked: its text was a subagent's prompt. */
  forked: boolean;
}

/** Schema of one invocation. */
export const ScanObservedInvocationSchema = z.deferred(() =>
  z.object({
    name: z.string(),
    kind: z.enum(["skill", "command"]),
    path: z.string(),
    status: ObservedStatusSchema,
    bytes: z.int().check(z.nonnegative()),
    tokens: z.int().check(z.nonnegative()),
    model_bytes: z.nullable(z.int().check(z.nonnegative())),
    forked: z.boolean(),
  })
);

/** A spawn's whole request: its total and its `/context` groups. */
export interface ScanObservedSpawnRequest {
  /** The whole request's text. */
  total: Size;
  /** Bytes and tokens per `/context` group, every group in report order. */
  categories: {
    "system-prompt": Size;
    tools: Size;
    "memory-files": Size;
    skills: Size;
    agents: Size;
    hooks: Size;
    environment: Size;
    messages: Size;
    unattributed: Size;
  };
}

/** One preloaded skill of a spawn. */
export interface ScanObservedPreload {
  /** The name its tags give. */
  name: string;
  /** Its `SKILL.md`, when one matches. */
  path: string | null;
  /** Bytes of its text. */
  bytes: number;
  /** The model's figure for the skill's invocation. */
  model_bytes: number | null;
}

/** One spawned agent. */
export interface ScanObservedSpawn {
  /** The `subagent_type` it was spawned as. */
  name: string;
  /** Its file. */
  path: string;
  /** Whether its request was seen. */
  status: "observed" | "refused" | "not-sent";
  /** Bytes of its body in the subagent's system prompt. */
  bytes: number;
  /** `floor(bytes / 4)`. */
  tokens: number;
  /** The model's figure (`--loaded`'s `loaded_bytes` of its per-spawn row). */
  model_bytes: number | null;
  /** The model the request named. */
  model: string | null;
  /** The whole request, when seen. */
  request: ScanObservedSpawnRequest | null;
  /** The skills it preloaded. */
  preloaded: ScanObservedPreload[];
}

/** Schema of one spawn. */
export const ScanObservedSpawnSchema = z.deferred(() =>
  z.object({
    name: z.string(),
    path: z.string(),
    status: ObservedStatusSchema,
    bytes: z.int().check(z.nonnegative()),
    tokens: z.int().check(z.nonnegative()),
    model_bytes: z.nullable(z.int().check(z.nonnegative())),
    model: z.nullable(z.string()),
    request: z.nullable(z.object({
      total: ScanObservedSizeSchema,
      categories: ScanObservedCategoriesSchema,
    })),
    preloaded: z.array(z.object({
      name: z.string(),
      path: z.nullable(z.string()),
      bytes: z.int().check(z.nonnegative()),
      model_bytes: z.nullable(z.int().check(z.nonnegative())),
    })),
  })
);

/** One instruction file an access sent (or should have). */
export interface ScanObservedAccess {
  /** The file. */
  path: string;
  /** A path-scoped `rule`, a folder's `instruction` file or an `import`. */
  kind: "rule" | "instruction" | "import";
  /** The path read to make it load (null: one it was not planned for). */
  probe: string | null;
  /** Whether it was sent. */
  status: "observed" | "refused" | "not-sent";
  /** Bytes of its text as sent. */
  bytes: number;
  /** `floor(bytes / 4)`. */
  tokens: number;
  /** The model's figure (`on_access_bytes`), null for a file the model does not expect. */
  model_bytes: number | null;
}

/** Schema of one access. */
export const ScanObservedAccessSchema = z.deferred(() =>
  z.object({
    path: z.string(),
    kind: z.enum(["rule", "instruction", "import"]),
    probe: z.nullable(z.string()),
    status: ObservedStatusSchema,
    bytes: z.int().check(z.nonnegative()),
    tokens: z.int().check(z.nonnegative()),
    model_bytes: z.nullable(z.int().check(z.nonnegative())),
  })
);

/** What a scripted session observed beyond start-up. */
export interface ScanObservedTiers {
  /** How many messages requests Claude Code sent in the session. */
  requests: number;
  /** Every planned invocation. */
  invocations: ScanObservedInvocation[];
  /** Every planned spawn. */
  spawns: ScanObservedSpawn[];
  /** Every on-access source the model expects, then any it did not. */
  accesses: ScanObservedAccess[];
  /** What could not be attributed. */
  warnings: string[];
}

/** Schema of `observed.tiers`. */
export const ScanObservedTiersSchema = z.deferred(() =>
  z.object({
    requests: z.int().check(z.nonnegative()),
    invocations: z.array(ScanObservedInvocationSchema),
    spawns: z.array(ScanObservedSpawnSchema),
    accesses: z.array(ScanObservedAccessSchema),
    warnings: z.array(z.string()),
  })
);
