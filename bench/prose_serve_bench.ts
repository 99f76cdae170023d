/**
 * `prose serve` throughput and latency on loopback (`references/prose.md#backend-api`).
 *
 * Starts a backend on an ephemeral 127.0.0.1 port over a temporary root and mirror, then runs
 * 1,000 toggle+status round-trips (POST /api/prose/toggle alternating the level, then
 * GET /api/prose/status), each request carrying the bearer token read from `D/serve.json` the way
 * the CLI reads it. Two baselines are measured in the same run:
 *
 * - the same number of `GET /health` requests (the HTTP floor: no flag I/O, no SQLite);
 * - the same number of direct library operations (`setLevel` + `readProseFlag`: the flag file
 *   without HTTP or the mirror).
 *
 * Prints round-trips/s, requests/s, p50/p99 latency per request, and the ratios against each
 * baseline.
 *
 * Run: `./node_modules/.bin/deno run -A bench/prose_serve_bench.ts [ROUNDS]`
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startProseServer } from "../lib/prose/server.ts";
import { readProseFlag } from "../lib/prose/mod.ts";
import { setLevel } from "../lib/prose/ops.ts";
import { backendTarget } from "../lib/prose/token.ts";

const ROUNDS = Number(Deno.args[0] ?? 1000);

interface Sample {
  /** Wall time of the whole loop, ms. */
  total: number;
  /** Per-request latencies, ms. */
  latencies: number[];
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function report(name: string, s: Sample, unit: "requests" | "ops"): { rps: number; p99: number } {
  const sorted = [...s.latencies].sort((a, b) => a - b);
  const rps = s.latencies.length / (s.total / 1000);
  const p50 = percentile(sorted, 50);
  const p99 = percentile(sorted, 99);
  console.log(
    `${name.padEnd(28)} ${String(s.latencies.length).padStart(5)} ${unit.padEnd(8)} ` +
      `${rps.toFixed(0).padStart(7)} ${unit}/s  p50 ${p50.toFixed(3)} ms  p99 ${p99.toFixed(3)} ms`,
  );
  return { rps, p99 };
}

async function timed(count: number, op: (i: number) => Promise<void> | void): Promise<Sample> {
  const latencies: number[] = [];
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await op(i);
    latencies.push(performance.now() - t);
  }
  return { total: performance.now() - start, latencies };
}

async function expectOk(res: Response): Promise<void> {
  const body = await res.text();
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${body}`);
}

const base = mkdtempSync(join(tmpdir(), "prose-bench-"));
const root = join(base, "cellm");
mkdirSync(join(root, "prose"), { recursive: true, mode: 0o700 });
const server = await startProseServer({
  port: 0,
  dbPath: join(root, "prose", "prose.db"),
  opts: { root },
});
try {
  const target = backendTarget(server.url, { root });
  if (target.token === undefined) throw new Error(`no token: ${target.missing}`);
  const auth = { authorization: `Bearer ${target.token}` };
  const toggle = (level: string) =>
    fetch(`${target.origin}/api/prose/toggle`, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth },
      body: JSON.stringify({ action: "on", level }),
    });
  const status = () => fetch(`${target.origin}/api/prose/status`, { headers: auth });
  // Warm-up: JIT, connection pool, SQLite page cache.
  for (let i = 0; i < 50; i++) {
    await expectOk(await toggle(i % 2 ? "full" : "minimal"));
    await expectOk(await status());
    await expectOk(await fetch(`${server.url}/health`));
  }

  console.log(`prose serve on ${server.url}, ${ROUNDS} rounds`);
  const serve = await timed(ROUNDS * 2, async (i) => {
    if (i % 2 === 0) await expectOk(await toggle(i % 4 === 0 ? "minimal" : "full"));
    else await expectOk(await status());
  });
  const health = await timed(ROUNDS * 2, async () => {
    await expectOk(await fetch(`${server.url}/health`));
  });
  const direct = await timed(ROUNDS * 2, (i) => {
    if (i % 2 === 0) {
      const r = setLevel(i % 4 === 0 ? "minimal" : "full", { root });
      if (!r.ok) throw new Error(`setLevel: ${r.result}`);
    } else if (readProseFlag({ root }).state !== "active") {
      throw new Error("flag not active");
    }
  });

  const s = report("toggle+status (HTTP+SQLite)", serve, "requests");
  console.log(
    `toggle+status round-trips (token in place): ${(s.rps / 2).toFixed(0)} round-trips/s`,
  );
  const h = report("baseline GET /health", health, "requests");
  const d = report("baseline direct flag I/O", direct, "ops");
  console.log(
    `ratio vs /health: throughput ${(s.rps / h.rps).toFixed(2)}x, p99 ${
      (s.p99 / h.p99).toFixed(2)
    }x`,
  );
  console.log(
    `ratio vs direct flag I/O: throughput ${(s.rps / d.rps).toFixed(2)}x, p99 ${
      (s.p99 / d.p99).toFixed(2)
    }x`,
  );
} finally {
  await server.shutdown();
  rmSync(base, { recursive: true, force: true });
}
