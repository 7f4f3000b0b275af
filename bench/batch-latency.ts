// Latency of 50-op pushes with 1, 8 and 64 devices pushing at once. Each
// device is its own user (the common case: many users, one active device
// each) — or, with `sharedList`, a member (editor) of one list they all push
// into — sends its batches back to back, and every request's wall time from
// the client is recorded. The floor: the same concurrency of raw-SQL 50-row
// inserts, each device its own connection as `authenticated`.
import type { BenchStack, BenchUser } from "./bench-stack.ts";
import { now, percentile, pool, progress } from "./measure.ts";
import { batchBody, connectAs, insertTasks, postBatch, taskRows } from "./push-throughput.ts";

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

export async function measureBatchLatency(stack: BenchStack, devices: number, totalBatches: number, log: (line: string) => void, sharedList = false): Promise<LatencyResult> {
  const perDevice = Math.max(1, Math.ceil(totalBatches / devices));
  const { users, listOf } = await latencyUsers(stack, devices, sharedList);
  const prepared = users.map((user) => Array.from({ length: perDevice + 1 }, () => batchBody(taskRows(listOf(user), LATENCY_BATCH_OPS), user.deviceId)));
  // Warm-up: every device's first batch (connections, plans) is not timed.
  await pool(devices, devices, async (d) => postBatch(stack.apiUrl, users[d].token, prepared[d][0], LATENCY_BATCH_OPS));

  const latencies: number[] = [];
  const tick = progress(log, `50-op batches at ${devices} device(s)${sharedList ? " of one list" : ""}`);
  const started = now();
  await pool(devices, devices, async (d) => {
    for (let i = 1; i <= perDevice; i++) {
      const t0 = now();
      await postBatch(stack.apiUrl, users[d].token, prepared[d][i], LATENCY_BATCH_OPS);
      latencies.push(now() - t0);
      tick(latencies.length, perDevice * devices);
    }
  });
  return summarize(devices, sharedList, latencies, (now() - started) / 1000);
}

/** The floor of the same concurrency: each device its own connection as `authenticated`, 50-row inserts back to back. */
export async function measureFloorLatency(stack: BenchStack, devices: number, totalBatches: number): Promise<LatencyResult> {
  const perDevice = Math.max(1, Math.ceil(totalBatches / devices));
  const users: BenchUser[] = [];
  for (let i = 0; i < devices; i++) users.push(await stack.createUser(`latencyfloor${devices}`));
  const connections = await Promise.all(users.map((user) => connectAs(stack, user)));
  try {
    const prepared = users.map((user) => Array.from({ length: perDevice + 1 }, () => taskRows(user.listId, LATENCY_BATCH_OPS)));
    await pool(devices, devices, async (d) => void await insertTasks(connections[d], prepared[d][0]));
    const latencies: number[] = [];
    const started = now();
    await pool(devices, devices, async (d) => {
      for (let i = 1; i <= perDevice; i++) {
        const t0 = now();
        await insertTasks(connections[d], prepared[d][i]);
        latencies.push(now() - t0);
      }
    });
    return summarize(devices, false, latencies, (now() - started) / 1000);
  } finally {
    await Promise.all(connections.map((c) => c.end({ timeout: 5 })));
  }
}
