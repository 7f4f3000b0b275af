// Push throughput: new tasks pushed through POST /v1/sync/batch (real Deno,
// JWT check, rate limit, RLS, ledger, merge) against the raw-SQL floor — the
// same rows written into public.tasks in one multi-row insert per batch, as
// `authenticated` with the caller's claims (so the table's policies, grants,
// constraints, foreign keys and sync triggers all run: the cheapest correct
// write; no ledger, no merge, no HTTP). One client, one batch in flight, on
// both sides; request bodies and row arrays are built before the clock runs.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
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
  data: { list_id: string; title: string; notes: string; done: boolean; position: number; due_date: string | null };
}

/** The bench's record: a sample to-do task in `listId`, ~150 bytes of data. */
export function taskRows(listId: string, count: number, offset = 0): TaskRow[] {
  return Array.from({ length: count }, (_, i) => {
    const n = offset + i;
    return {
      id: randomUUID(),
      data: { list_id: listId, title: `Task ${n}`, notes: `Bench note for task ${n}: buy milk, call Bob.`, done: n % 3 === 0, position: n, due_date: n % 2 === 0 ? "2026-12-01" : null },
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
  const batches = chunk(taskRows(user.listId, Math.ceil(totalOps / batchSize) * batchSize), batchSize).map((rows) => ({ body: batchBody(rows, user.deviceId), ops: rows.length }));
  // Warm-up (JIT, connections, plans): a few batches outside the clock.
  for (const rows of chunk(taskRows(user.listId, batchSize * 3), batchSize)) await postBatch(stack.apiUrl, user.token, batchBody(rows, user.deviceId), rows.length);
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

export const TASK_COLUMNS = ["id", "list_id", "title", "notes", "done", "due_date", "position"] as const;

/**
 * A connection that is the user the way PostgREST makes it per request (role
 * `authenticated`, their claims, their device for the field versions) — set
 * once for the session, so each write after it is a single statement.
 */
export async function connectAs(stack: BenchStack, user: BenchUser): Promise<postgres.Sql> {
  const sql = postgres(stack.database.ownerDbUrl, { max: 1, onnotice: () => {} });
  const claims = JSON.stringify({ sub: user.userId, role: "authenticated", session_id: user.sessionId, aud: "authenticated" });
  await sql`select set_config('request.jwt.claims', ${claims}, false), set_config('tidesync.device_id', ${user.deviceId}, false), set_config('role', 'authenticated', false)`;
  return sql;
}

/** The floor's write: the rows into public.tasks in one statement (policies, constraints and sync triggers run). */
export function insertTasks(sql: postgres.Sql, rows: TaskRow[]) {
  return sql`insert into public.tasks ${sql(rows.map((row) => ({ id: row.id, ...row.data })), ...TASK_COLUMNS)}`;
}

export async function pushFloor(stack: BenchStack, user: BenchUser, batchSize: number, totalOps: number, log: (line: string) => void): Promise<ThroughputResult> {
  const sql = await connectAs(stack, user);
  try {
    const total = Math.ceil(totalOps / batchSize) * batchSize;
    for (const rows of chunk(taskRows(user.listId, batchSize * 3), batchSize)) await insertTasks(sql, rows);
    const batches = chunk(taskRows(user.listId, total), batchSize);
    const tick = progress(log, `push raw-SQL floor, batch ${batchSize}`);
    const times: number[] = [];
    const started = now();
    for (const [i, rows] of batches.entries()) {
      const t0 = now();
      await insertTasks(sql, rows);
      times.push(now() - t0);
      tick(i + 1, batches.length);
    }
    const seconds = (now() - started) / 1000;
    return { ops: total, batches: batches.length, seconds, opsPerSecond: total / seconds, p50Ms: percentile(times.sort((a, b) => a - b), 50) };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
