// Latency of 50-op pushes with 1, 8 and 64 devices pushing at once. Each
// device is its own user (the common case: many users, one active device
// each), sends its batches back to back, and every request's wall time from
// the client is recorded.
import type { BenchStack, BenchUser } from "./bench-stack.ts";
import { now, percentile, pool, progress } from "./measure.ts";
import { batchBody, postBatch, taskRows } from "./push-throughput.ts";

export interface LatencyResult {
  devices: number;
  batches: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  opsPerSecond: number;
}

export const LATENCY_BATCH_OPS = 50;

export async function measureBatchLatency(stack: BenchStack, devices: number, totalBatches: number, log: (line: string) => void): Promise<LatencyResult> {
  const perDevice = Math.max(1, Math.ceil(totalBatches / devices));
  const users: BenchUser[] = [];
  for (let i = 0; i < devices; i++) users.push(await stack.createUser(`latency${devices}`));
  const prepared = users.map((user) => Array.from({ length: perDevice + 1 }, () => batchBody(taskRows(user.listId, LATENCY_BATCH_OPS), user.deviceId)));
  // Warm-up: every device's first batch (connections, plans) is not timed.
  await pool(devices, devices, async (d) => postBatch(stack.apiUrl, users[d].token, prepared[d][0], LATENCY_BATCH_OPS));

  const latencies: number[] = [];
  const tick = progress(log, `50-op batches at ${devices} device(s)`);
  const started = now();
  await pool(devices, devices, async (d) => {
    for (let i = 1; i <= perDevice; i++) {
      const t0 = now();
      await postBatch(stack.apiUrl, users[d].token, prepared[d][i], LATENCY_BATCH_OPS);
      latencies.push(now() - t0);
      tick(latencies.length, perDevice * devices);
    }
  });
  const seconds = (now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    devices,
    batches: latencies.length,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies[latencies.length - 1],
    opsPerSecond: (latencies.length * LATENCY_BATCH_OPS) / seconds,
  };
}
