// Latency of 50-op pushes with 1, 8 and 64 devices pushing at once. Each
// device is its own user (the common case: many users, one active device
// each) — or, with `sharedList`, a member (editor) of one list they all push
// into — sends its batches back to back, and every request's wall time from
// the client is recorded. Two floors: the same concurrency of raw-SQL 50-row
// inserts, each device its own connection as `authenticated`; and the same
// pushes over HTTP to the thinnest API that still writes the rows
// (thin-api-server.ts).
import path from "node:path";
import { ROOT } from "../scripts/lib/paths.ts";
import { FUNCTION_CONFIG_ARGS } from "../scripts/lib/deno.ts";
import type { BenchStack, BenchUser } from "./bench-stack.ts";
import { startBenchServer } from "./http-floor.ts";
import { now, percentile, pool, progress } from "./measure.ts";
import { batchBody, connectAs, insertTasks, postBatch, sessionClaims, TASK_COLUMNS, taskRows, WARM_UP_BATCHES } from "./push-throughput.ts";

export interface LatencyResult {
  devices: number;
  /** All devices are members of one list and push into it. */
  sharedList: boolean;
  batches: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  opsPerSecond: number;
}

export const LATENCY_BATCH_OPS = 50;

/** `devices` users; with `sharedList`, the others are editors of the first one's list. */
async function latencyUsers(stack: BenchStack, devices: number, sharedList: boolean): Promise<{ users: BenchUser[]; listOf: (user: BenchUser) => string }> {
  const users: BenchUser[] = [];
  for (let i = 0; i < devices; i++) users.push(await stack.createUser(`latency${devices}${sharedList ? "shared" : ""}`));
  if (!sharedList) return { users, listOf: (user) => user.listId };
  const listId = users[0].listId;
  await stack.adminSql`
    insert into public.list_members (list_id, user_id, role)
    select ${listId}::uuid, u, 'editor' from unnest(${users.slice(1).map((u) => u.userId)}::uuid[]) u`;
  return { users, listOf: () => listId };
}

function summarize(devices: number, sharedList: boolean, latencies: number[], seconds: number): LatencyResult {
  latencies.sort((a, b) => a - b);
  return {
    devices,
    sharedList,
    batches: latencies.length,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies[latencies.length - 1],
    opsPerSecond: (latencies.length * LATENCY_BATCH_OPS) / seconds,
  };
}

/**
 * Every device runs `send` for its batches back to back: the first
 * WARM_UP_BATCHES untimed (connections, plans, a fresh server's JIT), then
 * perDevice timed ones.
 */
async function timeDevices(devices: number, perDevice: number, send: (device: number, batch: number) => Promise<void>, tick?: (done: number, total: number) => void) {
  await pool(devices, devices, async (d) => {
    for (let i = 0; i < WARM_UP_BATCHES; i++) await send(d, i);
  });
  const latencies: number[] = [];
  const started = now();
  await pool(devices, devices, async (d) => {
    for (let i = WARM_UP_BATCHES; i < WARM_UP_BATCHES + perDevice; i++) {
      const t0 = now();
      await send(d, i);
      latencies.push(now() - t0);
      tick?.(latencies.length, perDevice * devices);
    }
  });
  return { latencies, seconds: (now() - started) / 1000 };
}

/** `devices` users' prepared 50-op push bodies, the warm-up's first. */
async function preparedPushes(stack: BenchStack, devices: number, totalBatches: number, sharedList: boolean) {
  const perDevice = Math.max(1, Math.ceil(totalBatches / devices));
  const { users, listOf } = await latencyUsers(stack, devices, sharedList);
  const bodies = users.map((user) => Array.from({ length: WARM_UP_BATCHES + perDevice }, () => batchBody(taskRows(listOf(user), LATENCY_BATCH_OPS), user.deviceId)));
  return { perDevice, users, bodies };
}

export async function measureBatchLatency(stack: BenchStack, devices: number, totalBatches: number, log: (line: string) => void, sharedList = false): Promise<LatencyResult> {
  const { perDevice, users, bodies } = await preparedPushes(stack, devices, totalBatches, sharedList);
  const tick = progress(log, `50-op batches at ${devices} device(s)${sharedList ? " of one list" : ""}`);
  const { latencies, seconds } = await timeDevices(devices, perDevice, (d, i) => postBatch(stack.apiUrl, users[d].token, bodies[d][i], LATENCY_BATCH_OPS), tick);
  return summarize(devices, sharedList, latencies, seconds);
}

/**
 * The least any HTTP API can take for the same pushes on this machine: the same
 * client, bodies and concurrency against bench/thin-api-server.ts, which only
 * parses each body, writes its rows with the raw-SQL floor's INSERT as the
 * caller and answers the written rows.
 */
export async function measureThinApiLatency(stack: BenchStack, devices: number, totalBatches: number, sharedList = false): Promise<LatencyResult> {
  const { perDevice, users, bodies } = await preparedPushes(stack, devices, totalBatches, sharedList);
  const claims = users.map((user) => ({ claims: sessionClaims(user), deviceId: user.deviceId }));
  const server = await startBenchServer(
    ["run", ...FUNCTION_CONFIG_ARGS, "--allow-net", "--allow-env", path.join(ROOT, "bench/thin-api-server.ts")],
    { DATABASE_URL: stack.database.ownerDbUrl, CLAIMS: JSON.stringify(claims), COLUMNS: JSON.stringify(TASK_COLUMNS) },
  );
  try {
    const { latencies, seconds } = await timeDevices(devices, perDevice, (d, i) => postBatch(server.url, String(d), bodies[d][i], LATENCY_BATCH_OPS));
    return summarize(devices, sharedList, latencies, seconds);
  } finally {
    server.stop();
  }
}

/** The floor of the same concurrency: each device its own connection as `authenticated`, 50-row inserts back to back. */
export async function measureFloorLatency(stack: BenchStack, devices: number, totalBatches: number): Promise<LatencyResult> {
  const perDevice = Math.max(1, Math.ceil(totalBatches / devices));
  const users: BenchUser[] = [];
  for (let i = 0; i < devices; i++) users.push(await stack.createUser(`latencyfloor${devices}`));
  const connections = await Promise.all(users.map((user) => connectAs(stack, user)));
  try {
    const prepared = users.map((user) => Array.from({ length: WARM_UP_BATCHES + perDevice }, () => taskRows(user.listId, LATENCY_BATCH_OPS)));
    const { latencies, seconds } = await timeDevices(devices, perDevice, async (d, i) => void await insertTasks(connections[d], prepared[d][i]));
    return summarize(devices, false, latencies, seconds);
  } finally {
    await Promise.all(connections.map((c) => c.end({ timeout: 5 })));
  }
}
