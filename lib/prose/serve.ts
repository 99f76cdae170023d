/**
 * `prose serve [--port N] [--db PATH]` (spec §9): the loopback backend. Binds 127.0.0.1 only,
 * mirrors the flag into SQLite, answers until SIGINT or SIGTERM.
 *
 * @module
 */

import { lstatSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { ArgCursor } from "../args.ts";
import { CtxkitError } from "../exit.ts";
import { writeErr, writeOut } from "../io.ts";
import { MirrorError, ProseMirror } from "./mirror.ts";
import { readWorkerJson, resolvePort } from "./server_port.ts";
import { createProseHandler, type MirrorStore } from "./server.ts";
import { loadConfig } from "./config.ts";
import { type ProseOptions, ProseRootError, resolvePaths } from "./paths.ts";
import { renderValue, sanitize } from "./sanitize.ts";

/** The bind address: loopback only, never configurable. */
export const BIND_HOST = "127.0.0.1";

/** The usage text of `prose serve`. */
export const SERVE_USAGE = "usage: prose serve [--port N] [--db PATH]";

/** Options of {@linkcode startProseServer}. */
export interface StartOptions {
  /** Port to bind on 127.0.0.1 (`0` = any free port). */
  port: number;
  /** Absolute path of the mirror database. */
  dbPath: string;
  /** Library options (the root `R`). */
  opts?: ProseOptions;
}

/** A running backend. */
export interface RunningServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** The bound port. */
  port: number;
  /** The mirror database path. */
  dbPath: string;
  /** Stop accepting, finish in-flight requests, close the database. Safe to call twice. */
  shutdown(): Promise<void>;
}

/** Why {@linkcode startProseServer} could not start. */
export class ServeStartError extends Error {
  /** `db` or `port-in-use`. */
  readonly code: "db" | "port-in-use";
  /** Create the error; `message` is one sanitized line. */
  constructor(code: "db" | "port-in-use", message: string) {
    super(message);
    this.name = "ServeStartError";
    this.code = code;
  }
}

/**
 * Open the mirror and bind 127.0.0.1. Throws {@linkcode ServeStartError} for a database error or a
 * busy port (the database is closed again then).
 *
 * @example
 * ```ts ignore
 * const server = await startProseServer({ port: 0, dbPath: "/tmp/prose.db", opts: { root } });
 * await fetch(`${server.url}/health`);
 * await server.shutdown();
 * ```
 */
export async function startProseServer(options: StartOptions): Promise<RunningServer> {
  // Bind first: a busy port then leaves no database file behind. No request can run before the
  // mirror is set below, because nothing awaits in between.
  const ctx: { port: number; opts: ProseOptions; mirror: MirrorStore } = {
    port: options.port,
    opts: options.opts ?? {},
    mirror: UNOPENED,
  };
  const handler = createProseHandler(ctx);
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: BIND_HOST,
      port: options.port,
      onListen: () => {},
      onError: () =>
        new Response('{"ok":false,"error":"internal","message":"internal error"}\n', {
          status: 500,
          headers: { "content-type": "application/json", "cache-control": "no-store" },
        }),
    }, handler);
  } catch (e) {
    if (e instanceof Deno.errors.AddrInUse) {
      throw new ServeStartError(
        "port-in-use",
        `${BIND_HOST}:${options.port} is already in use; pick another with --port`,
      );
    }
    throw e;
  }
  let mirror: ProseMirror;
  try {
    mirror = ProseMirror.open(options.dbPath);
  } catch (e) {
    await server.shutdown();
    if (e instanceof MirrorError) throw new ServeStartError("db", sanitize(e.message));
    throw e;
  }
  ctx.mirror = mirror;
  // With --port 0 the Host check must use the port the OS picked.
  ctx.port = server.addr.port;
  let stopped: Promise<void> | undefined;
  return {
    url: `http://${BIND_HOST}:${server.addr.port}`,
    port: server.addr.port,
    dbPath: options.dbPath,
    shutdown: () => {
      stopped ??= server.shutdown().finally(() => mirror.close());
      return stopped;
    },
  };
}

/** Placeholder mirror for the instant between bind and open (never reached by a request). */
const UNOPENED: MirrorStore = {
  read: () => {
    throw new Error("mirror not open");
  },
  write: () => {
    throw new Error("mirror not open");
  },
};

/** Create `R` and `D` (0700) for the default database; `D` must not be a symbolic link. */
function prepareDefaultDbDir(root: string, dir: string): void {
  try {
    mkdirSync(root, { recursive: true, mode: 0o700 });
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as { code?: string }).code !== "EEXIST") {
      throw new ServeStartError("db", `cannot create ${sanitize(dir)}: check permissions`);
    }
  }
  try {
    const st = lstatSync(dir);
    if (st.isSymbolicLink() || !st.isDirectory()) {
      throw new ServeStartError("db", `${sanitize(dir)} must be a real directory`);
    }
  } catch (e) {
    if (e instanceof ServeStartError) throw e;
    throw new ServeStartError("db", `cannot inspect ${sanitize(dir)}`);
  }
}

function usage(message: string): never {
  throw new CtxkitError(2, `PROSE-ERROR: code=usage ${message}\n${SERVE_USAGE}`);
}

interface ServeArgs {
  port?: string;
  db?: string;
}

function parseServeArgs(args: readonly string[]): ServeArgs | "help" {
  const cursor = new ArgCursor(args);
  const out: ServeArgs = {};
  while (!cursor.done) {
    const arg = cursor.next();
    if (arg === "--help" || arg === "-h") return "help";
    if (arg === "--port" || arg === "--db") {
      const value = cursor.value();
      if (value === undefined || value === "") usage(`${arg} needs a value`);
      if (arg === "--port") out.port = value;
      else out.db = value;
      continue;
    }
    usage(`unexpected argument ${renderValue(arg, 40)}`);
  }
  return out;
}

/** SIGINT/SIGTERM listeners: `signal` resolves with the first one's name; `cancel` removes them. */
function watchSignals(): { signal: Promise<Deno.Signal>; cancel: () => void } {
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  let listeners: (() => void)[] = [];
  const cancel = () => {
    signals.forEach((s, i) => Deno.removeSignalListener(s, listeners[i]));
    listeners = [];
  };
  const signal = new Promise<Deno.Signal>((done) => {
    listeners = signals.map((s) => () => {
      cancel();
      done(s);
    });
    signals.forEach((s, i) => Deno.addSignalListener(s, listeners[i]));
  });
  return { signal, cancel };
}

/**
 * The `prose serve` command: returns 0 after a clean SIGINT/SIGTERM shutdown; throws
 * {@linkcode CtxkitError} for usage (2), an invalid config (2), a bad environment (2), a database
 * error (1, `code=db`) or a busy port (1, `code=port-in-use`).
 */
export async function serveMain(args: readonly string[]): Promise<number> {
  const parsed = parseServeArgs(args);
  if (parsed === "help") {
    writeOut(SERVE_USAGE);
    return 0;
  }
  let paths;
  try {
    paths = resolvePaths();
  } catch (e) {
    if (e instanceof ProseRootError) {
      throw new CtxkitError(2, `PROSE-ERROR: code=env field=${e.field} ${sanitize(e.message)}`);
    }
    throw e;
  }
  const config = loadConfig();
  if (!config.ok) {
    throw new CtxkitError(
      2,
      `PROSE-ERROR: code=config field=${renderValue(config.field)} ${sanitize(config.message)}`,
    );
  }
  const port = resolvePort({
    flag: parsed.port,
    env: Deno.env.get("CELLM_WORKER_PORT"),
    workerJson: parsed.port === undefined && !Deno.env.get("CELLM_WORKER_PORT")
      ? readWorkerJson(paths.workerJson)
      : undefined,
  });
  if (!port.ok) {
    const code = port.field === "--port" ? "usage" : "env";
    throw new CtxkitError(2, `PROSE-ERROR: code=${code} field=${port.field} ${port.message}`);
  }
  if (port.warning !== undefined) writeErr(`PROSE-WARN: ${port.warning}`);
  // Listen for signals before the listening line: a supervisor may signal as soon as it reads it.
  const stop = watchSignals();
  let server: RunningServer;
  try {
    let dbPath: string;
    if (parsed.db !== undefined) {
      dbPath = resolve(Deno.cwd(), parsed.db);
    } else {
      prepareDefaultDbDir(paths.root, paths.dir);
      dbPath = paths.db;
    }
    server = await startProseServer({ port: port.port, dbPath });
  } catch (e) {
    stop.cancel();
    if (e instanceof ServeStartError) {
      throw new CtxkitError(1, `PROSE-ERROR: code=${e.code} ${e.message}`);
    }
    throw e;
  }
  writeOut(`PROSE: serve listening=${server.url} db=${renderValue(server.dbPath)}`);
  const signal = await stop.signal;
  await server.shutdown();
  writeOut(`PROSE: serve stopped signal=${signal}`);
  return 0;
}
