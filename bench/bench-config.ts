// Sizes of a bench run, from the environment so a quick run and a thorough one
// are the same command. Defaults keep `npm run bench` under 10 minutes on a
// shared 2-core machine (5 of them the sustained load).

/** The batch sizes of the push axis; 1, 50 and 500 are always measured (the goals and breakdowns use them). */
export const GOAL_BATCH_SIZES = [1, 50, 500] as const;

/** The batch size of the edits measurement (a long offline queue flushed at the batch limit's scale). */
export const EDIT_BATCH_SIZE = 500;

export interface BenchConfig {
  /** The push axis: ops pushed per batch size (rounded up to whole batches), API and floor each. */
  pushOps: Record<number, number>;
  /** Edits of existing tasks pushed in EDIT_BATCH_SIZE-op batches, API and floor each. */
  pushEditOps: number;
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
  /** The push with the same user's ledger grown to `ledgerRows` rows vs empty: 50-op batches, `samples` each side. */
  ledger: { rows: number; samples: number };
  /** Scopes per user: the same `rows` tasks spread over each count of the caller's lists. */
  scopesPerUser: { counts: number[]; rows: number; samples: number };
  /** The sustained mixed load: `devices` users pushing and pulling for `seconds`, reported per `windowSeconds`. */
  sustained: { seconds: number; devices: number; windowSeconds: number; batchOps: number };
}

const DEFAULT_PUSH_OPS: Record<number, number> = { 1: 300, 10: 1500, 50: 6000, 200: 12_000, 500: 20_000 };

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}

function listFromEnv(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const values = raw.split(",").map((n) => Number(n.trim()));
  if (values.some((n) => !Number.isSafeInteger(n) || n <= 0)) throw new Error(`${name} must be a comma-separated list of positive integers, got ${JSON.stringify(raw)}`);
  return values;
}

export function benchConfigFromEnv(): BenchConfig {
  const scale = Number(process.env.BENCH_SCALE ?? 1);
  if (!(scale > 0)) throw new Error("BENCH_SCALE must be a positive number");
  const scaled = (name: string, base: number) => intFromEnv(name, Math.max(1, Math.round(base * scale)));
  return {
    pushOps: Object.fromEntries(
      [...new Set([...GOAL_BATCH_SIZES, ...listFromEnv("BENCH_PUSH_BATCH_SIZES", [1, 10, 50, 200, 500])])].sort((a, b) => a - b)
        .map((size) => [size, scaled(`BENCH_PUSH_OPS_${size}`, DEFAULT_PUSH_OPS[size] ?? size * 40)]),
    ),
    pushEditOps: scaled("BENCH_PUSH_EDIT_OPS", 6000),
    pullRecords: scaled("BENCH_PULL_RECORDS", 100_000),
    pullPageSize: intFromEnv("BENCH_PULL_PAGE_SIZE", 1000),
    pullRepeats: intFromEnv("BENCH_PULL_REPEATS", 2),
    latencyDevices: listFromEnv("BENCH_LATENCY_DEVICES", [1, 8, 64]),
    latencyBatchesPerLevel: scaled("BENCH_LATENCY_BATCHES", 480),
    rlsRepeats: intFromEnv("BENCH_RLS_REPEATS", 2),
    breakdownSamples: intFromEnv("BENCH_BREAKDOWN_SAMPLES", 10),
    scope: {
      ownRows: scaled("BENCH_SCOPE_OWN_ROWS", 10_000),
      otherRows: scaled("BENCH_SCOPE_OTHER_ROWS", 1_000_000),
      otherUsers: intFromEnv("BENCH_SCOPE_OTHER_USERS", 20_000),
      samples: intFromEnv("BENCH_SCOPE_SAMPLES", 30),
    },
    ledger: { rows: scaled("BENCH_LEDGER_ROWS", 1_000_000), samples: intFromEnv("BENCH_LEDGER_SAMPLES", 30) },
    scopesPerUser: { counts: listFromEnv("BENCH_SCOPES_PER_USER", [1, 10, 100]), rows: scaled("BENCH_SCOPES_ROWS", 5000), samples: intFromEnv("BENCH_SCOPES_SAMPLES", 5) },
    sustained: {
      seconds: scaled("BENCH_SUSTAINED_SECONDS", 300),
      devices: intFromEnv("BENCH_SUSTAINED_DEVICES", 64),
      windowSeconds: intFromEnv("BENCH_SUSTAINED_WINDOW_SECONDS", 0) || Math.max(1, Math.round(scaled("BENCH_SUSTAINED_SECONDS", 300) / 20)),
      batchOps: intFromEnv("BENCH_SUSTAINED_BATCH_OPS", 20),
    },
  };
}
