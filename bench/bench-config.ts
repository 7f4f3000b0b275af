// Sizes of a bench run, from the environment so a quick run and a thorough one
// are the same command. Defaults keep `npm run bench` under ~10 minutes on a
// shared 2-core machine.

export interface BenchConfig {
  /** Ops pushed per batch size (rounded up to whole batches). */
  pushOps: Record<1 | 50 | 500, number>;
  /** Records of the initial-sync pull (GET /v1/sync/changes, limit=1000). */
  pullRecords: number;
  pullPageSize: number;
  /** How many full pulls to time (the best and the median are reported). */
  pullRepeats: number;
  /** Concurrency levels of the 50-op latency test and the batches each level sends in all. */
  latencyDevices: number[];
  latencyBatchesPerLevel: number;
  /** Full walks per side of the RLS-overhead query comparison. */
  rlsRepeats: number;
  /** Samples per step of the time breakdowns. */
  breakdownSamples: number;
  /** The scope-cost pull: the caller's own rows, and the rows of other users' lists added next to them. */
  scope: { ownRows: number; otherRows: number; otherUsers: number; samples: number };
}

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}

export function benchConfigFromEnv(): BenchConfig {
  const scale = Number(process.env.BENCH_SCALE ?? 1);
  if (!(scale > 0)) throw new Error("BENCH_SCALE must be a positive number");
  const scaled = (name: string, base: number) => intFromEnv(name, Math.max(1, Math.round(base * scale)));
  return {
    pushOps: {
      1: scaled("BENCH_PUSH_OPS_1", 400),
      50: scaled("BENCH_PUSH_OPS_50", 10_000),
      500: scaled("BENCH_PUSH_OPS_500", 40_000),
    },
    pullRecords: scaled("BENCH_PULL_RECORDS", 100_000),
    pullPageSize: intFromEnv("BENCH_PULL_PAGE_SIZE", 1000),
    pullRepeats: intFromEnv("BENCH_PULL_REPEATS", 3),
    latencyDevices: (process.env.BENCH_LATENCY_DEVICES ?? "1,8,64").split(",").map((n) => Number(n.trim())).filter((n) => n > 0),
    latencyBatchesPerLevel: scaled("BENCH_LATENCY_BATCHES", 640),
    rlsRepeats: intFromEnv("BENCH_RLS_REPEATS", 3),
    breakdownSamples: intFromEnv("BENCH_BREAKDOWN_SAMPLES", 15),
    scope: {
      ownRows: scaled("BENCH_SCOPE_OWN_ROWS", 10_000),
      otherRows: scaled("BENCH_SCOPE_OTHER_ROWS", 1_000_000),
      otherUsers: intFromEnv("BENCH_SCOPE_OTHER_USERS", 1000),
      samples: intFromEnv("BENCH_SCOPE_SAMPLES", 30),
    },
  };
}
