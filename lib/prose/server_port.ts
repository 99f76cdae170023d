/**
 * Port resolution of `prose serve` (spec §9): `--port`, else `CELLM_WORKER_PORT`, else the `port` of
 * `R/worker.json`, else 31415 (cellm's conventions).
 *
 * @module
 */

import { readFileSync } from "node:fs";
import { z } from "zod";

/** The port used when nothing else names one. */
export const DEFAULT_PORT = 31415;

/** Largest `worker.json` read, in bytes. */
const MAX_WORKER_JSON_BYTES = 65536;

/**
 * `R/worker.json` is cellm's file: only its `port` is read, every other key is ignored.
 */
export const WorkerJsonSchema = z.looseObject({ port: z.int().min(1).max(65535) });

/** Where the resolved port came from. */
export type PortSource = "--port" | "CELLM_WORKER_PORT" | "worker.json" | "default";

/** The outcome of {@linkcode resolvePort}. */
export type PortResolution =
  | { ok: true; port: number; source: PortSource; warning?: string }
  | { ok: false; field: "--port" | "CELLM_WORKER_PORT"; message: string };

/**
 * Parse a port: decimal digits only, 0–65535. `0` asks the OS for a free port (what tests use).
 *
 * @example
 * ```ts
 * import { parsePort } from "./server_port.ts";
 * parsePort("8080"); // 8080
 * parsePort("8080x"); // undefined
 * ```
 */
export function parsePort(raw: string): number | undefined {
  if (!/^[0-9]{1,5}$/.test(raw)) return undefined;
  const n = Number(raw);
  return n <= 65535 ? n : undefined;
}

/** The inputs of {@linkcode resolvePort}: each `undefined` when not given. */
export interface PortInputs {
  /** The `--port` value. */
  flag?: string;
  /** `CELLM_WORKER_PORT` (empty counts as unset). */
  env?: string;
  /** The text of `R/worker.json`, or `undefined` when the file is missing. */
  workerJson?: string;
}

/**
 * Pick the port. A malformed `--port` or `CELLM_WORKER_PORT` is an error (rc 2); an unusable
 * `worker.json` is skipped with a warning, because it belongs to another program.
 */
export function resolvePort(inputs: PortInputs): PortResolution {
  if (inputs.flag !== undefined) {
    const port = parsePort(inputs.flag);
    return port === undefined
      ? { ok: false, field: "--port", message: "must be an integer 0-65535" }
      : { ok: true, port, source: "--port" };
  }
  if (inputs.env !== undefined && inputs.env !== "") {
    const port = parsePort(inputs.env);
    return port === undefined
      ? { ok: false, field: "CELLM_WORKER_PORT", message: "must be an integer 0-65535" }
      : { ok: true, port, source: "CELLM_WORKER_PORT" };
  }
  if (inputs.workerJson !== undefined) {
    let value: unknown;
    try {
      value = JSON.parse(inputs.workerJson);
    } catch {
      value = undefined;
    }
    const parsed = WorkerJsonSchema.safeParse(value);
    if (parsed.success) return { ok: true, port: parsed.data.port, source: "worker.json" };
    return {
      ok: true,
      port: DEFAULT_PORT,
      source: "default",
      warning: "worker.json has no usable port; using 31415",
    };
  }
  return { ok: true, port: DEFAULT_PORT, source: "default" };
}

/**
 * Read `R/worker.json` for {@linkcode resolvePort}: its text, `undefined` when it is missing, or a
 * placeholder that fails the schema when it cannot be read or is too large.
 */
export function readWorkerJson(path: string): string | undefined {
  try {
    const bytes = readFileSync(path);
    if (bytes.length > MAX_WORKER_JSON_BYTES) return "";
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (e) {
    return (e as { code?: string }).code === "ENOENT" ? undefined : "";
  }
}
