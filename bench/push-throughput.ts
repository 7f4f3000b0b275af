// Push throughput: new records pushed through POST /v1/sync/batch (real Deno,
// JWT check, rate limit, RLS, ledger, merge) against the raw-SQL floor — the
// same rows, one multi-row upsert per batch straight into app_private.records
// as the owner (no ledger, no merge, no HTTP). One client, one batch in flight,
// on both sides; request bodies and row arrays are built before the clock runs.
import { randomUUID } from "node:crypto";
import type postgres from "postgres";
import type { BenchStack, BenchUser } from "./bench-stack.ts";
import { now, percentile, progress } from "./measure.ts";

export interface ThroughputResult {
  ops: number;
  batches: number;
  seconds: number;
  opsPerSecond: number;
  /** Median wall time of one batch. */
  p50Ms: number;
}

export interface TaskRow {
  id: string;
  data: { title: string; notes: string; done: boolean; position: number; due_date: string | null; list_id: string | null };
}

/** The bench's record: a sample to-do task, ~150 bytes of data. */
export function taskRows(count: number, offset = 0): TaskRow[] {
  return Array.from({ length: count }, (_, i) => {
    const n = offset + i;
    return {
      id: randomUUID(),
      data: { title: `Task ${n}`, notes: `Bench note for task ${n}: buy milk, call Bob.`, done: n % 3 === 0, position: n, due_date: n % 2 === 0 ? "2026-12-01" : null, list_id: null },
    };
  });
}

export function batchBody(rows: TaskRow[], deviceId: string): string {
  return JSON.stringify({
    device_id: deviceId,
    ops: rows.map((row) => ({ op_id: randomUUID(), collection: "tasks", record_id: row.id, type: "upsert", base_version: null, data: row.data })),
  });
}

/** Posts one prepared batch; throws unless every op was applied. */
export async function postBatch(apiUrl: string, token: string, body: string, expectedOps: number): Promise<void> {
  const response = await fetch(`${apiUrl}/v1/sync/batch`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body,
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`POST /v1/sync/batch answered ${response.status}: ${text.slice(0, 300)}`);
  const parsed = JSON.parse(text) as { results: { status: string }[] };
  const applied = parsed.results.filter((r) => r.status === "applied").length;
  if (applied !== expectedOps) throw new Error(`expected ${expectedOps} applied ops, got ${applied}: ${text.slice(0, 300)}`);
}

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export async function pushThroughApi(stack: BenchStack, user: BenchUser, batchSize: number, totalOps: number, log: (line: string) => void): Promise<ThroughputResult> {
  const deviceId = randomUUID();
  const batches = chunk(taskRows(Math.ceil(totalOps / batchSize) * batchSize), batchSize).map((rows) => ({ body: batchBody(rows, deviceId), ops: rows.length }));
  // Warm-up (JIT, connections, plans): a few batches outside the clock.
  for (const rows of chunk(taskRows(batchSize * 3), batchSize)) await postBatch(stack.apiUrl, user.token, batchBody(rows, deviceId), rows.length);
  const tick = progress(log, `push via API, batch ${batchSize}`);
  const times: number[] = [];
  const started = now();
  for (const [i, batch] of batches.entries()) {
    const t0 = now();
    await postBatch(stack.apiUrl, user.token, batch.body, batch.ops);
    times.push(now() - t0);
    tick(i + 1, batches.length);
  }
  const seconds = (now() - started) / 1000;
  const ops = batches.reduce((sum, b) => sum + b.ops, 0);
  return { ops, batches: batches.length, seconds, opsPerSecond: ops / seconds, p50Ms: percentile(times.sort((a, b) => a - b), 50) };
}

/** Lets the floor's rows pass records_check_head (versions must come from the user's head). */
export async function reserveSeqs(sql: postgres.Sql, userId: string, upTo: number): Promise<void> {
  await sql`
    insert into app_private.sync_heads as h (user_id, last_seq) values (${userId}, ${upTo})
    on conflict (user_id) do update set last_seq = greatest(h.last_seq, excluded.last_seq)`;
}

export async function pushFloor(stack: BenchStack, user: BenchUser, batchSize: number, totalOps: number, log: (line: string) => void): Promise<ThroughputResult> {
  const sql = stack.ownerSql;
  let seq = 0;
  const [head] = await sql<{ last_seq: string }[]>`select coalesce(max(last_seq), 0)::text as last_seq from app_private.sync_heads where user_id = ${user.userId}`;
  seq = Number(head.last_seq);
  const total = Math.ceil(totalOps / batchSize) * batchSize;
  await reserveSeqs(sql, user.userId, seq + total + batchSize * 3);
  const toRows = (rows: TaskRow[]) => rows.map((row) => {
    seq += 1;
    return { user_id: user.userId, collection: "tasks", id: row.id, version: seq, change_seq: seq, data: sql.json(row.data), deleted: false };
  });
  const upsert = (rows: ReturnType<typeof toRows>) => sql`
    insert into app_private.records ${sql(rows, "user_id", "collection", "id", "version", "change_seq", "data", "deleted")}
    on conflict (user_id, collection, id) do update
      set version = excluded.version, change_seq = excluded.change_seq, data = excluded.data, deleted = excluded.deleted, updated_at = now()`;
  for (const rows of chunk(taskRows(batchSize * 3), batchSize)) await upsert(toRows(rows));
  const batches = chunk(taskRows(total), batchSize).map(toRows);
  const tick = progress(log, `push raw-SQL floor, batch ${batchSize}`);
  const times: number[] = [];
  const started = now();
  for (const [i, rows] of batches.entries()) {
    const t0 = now();
    await upsert(rows);
    times.push(now() - t0);
    tick(i + 1, batches.length);
  }
  const seconds = (now() - started) / 1000;
  return { ops: total, batches: batches.length, seconds, opsPerSecond: total / seconds, p50Ms: percentile(times.sort((a, b) => a - b), 50) };
}
