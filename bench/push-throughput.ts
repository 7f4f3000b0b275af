// Push throughput: new tasks pushed through POST /v1/sync/batch (real Deno,
// JWT check, rate limit, RLS, ledger, merge) against the raw-SQL floor — the
// same rows written into public.tasks in one multi-row insert per batch, as
// `authenticated` with the caller's claims (so the table's policies, grants,
// constraints, foreign keys and sync triggers all run: the cheapest correct
// write; no ledger, no merge, no HTTP). One client, one batch in flight, on
// both sides; request bodies and row arrays are built before the clock runs.
// The same for edits of existing tasks (each based on the version the device
// holds) against one UPDATE per batch.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { pgArray } from "../functions/api/lib/pg-array.ts";
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

/** How many batches run before the clock starts (JIT, connections, plans); the CPU figures count them. */
export const WARM_UP_BATCHES = 3;

/**
 * Runs `warmUp`, then times `timed` one after the other (one batch in
 * flight): ops/s over the whole run and the median batch.
 */
async function timeBatches<T>(label: string, log: (line: string) => void, warmUp: T[], timed: T[], opsOf: (batch: T) => number, send: (batch: T) => Promise<unknown>): Promise<ThroughputResult> {
  for (const batch of warmUp) await send(batch);
  const tick = progress(log, label);
  const times: number[] = [];
  const started = now();
  for (const [i, batch] of timed.entries()) {
    const t0 = now();
    await send(batch);
    times.push(now() - t0);
    tick(i + 1, timed.length);
  }
  const seconds = (now() - started) / 1000;
  const ops = timed.reduce((sum, batch) => sum + opsOf(batch), 0);
  return { ops, batches: timed.length, seconds, opsPerSecond: ops / seconds, p50Ms: percentile(times.sort((a, b) => a - b), 50) };
}

type Body = { body: string; ops: number };

export async function pushThroughApi(stack: BenchStack, user: BenchUser, batchSize: number, totalOps: number, log: (line: string) => void): Promise<ThroughputResult> {
  const bodies = (count: number) => chunk(taskRows(user.listId, count), batchSize).map((rows): Body => ({ body: batchBody(rows, user.deviceId), ops: rows.length }));
  const batches = bodies(Math.ceil(totalOps / batchSize) * batchSize);
  return await timeBatches(`push via API, batch ${batchSize}`, log, bodies(batchSize * WARM_UP_BATCHES), batches, (b) => b.ops, (b) => postBatch(stack.apiUrl, user.token, b.body, b.ops));
}

export const TASK_COLUMNS = ["id", "list_id", "title", "notes", "done", "due_date", "position"] as const;

/** The claims a user's requests carry, as the raw-SQL floors set them. */
export function sessionClaims(user: BenchUser) {
  return { sub: user.userId, role: "authenticated", session_id: user.sessionId, aud: "authenticated" };
}

/**
 * A connection that is the user the way PostgREST makes it per request (role
 * `authenticated`, their claims, their device for the field versions) — set
 * once for the session, so each write after it is a single statement.
 */
export async function connectAs(stack: BenchStack, user: BenchUser): Promise<postgres.Sql> {
  const sql = postgres(stack.database.ownerDbUrl, { max: 1, onnotice: () => {} });
  const claims = JSON.stringify(sessionClaims(user));
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
    const warmUp = chunk(taskRows(user.listId, batchSize * WARM_UP_BATCHES), batchSize);
    const batches = chunk(taskRows(user.listId, Math.ceil(totalOps / batchSize) * batchSize), batchSize);
    return await timeBatches(`push raw-SQL floor, batch ${batchSize}`, log, warmUp, batches, (rows) => rows.length, (rows) => insertTasks(sql, rows));
  } finally {
    await sql.end({ timeout: 5 });
  }
}

// ---- edits of existing records: what flushing an offline queue mostly sends ----

/** A task as a device holds it: the version its edits are based on. */
export interface HeldTask {
  id: string;
  version: number;
}

/**
 * `count` new tasks in the user's list, written the floor's way (as the user,
 * 500 rows per insert), with the versions the sync triggers gave them.
 */
export async function seedHeldTasks(stack: BenchStack, user: BenchUser, count: number): Promise<HeldTask[]> {
  const sql = await connectAs(stack, user);
  try {
    for (const rows of chunk(taskRows(user.listId, count), 500)) await insertTasks(sql, rows);
  } finally {
    await sql.end({ timeout: 5 });
  }
  const held = await stack.ownerSql<{ id: string; version: string }[]>`
    select s.id::text as id, s.version::text as version
      from app_private.sync_records s join public.tasks t on t.id = s.id
     where s.collection = 'tasks' and t.list_id = ${user.listId}::uuid`;
  return held.map((task) => ({ id: task.id, version: Number(task.version) }));
}

/** The edit every bench edit makes: a new title, and done. */
const editOf = (task: HeldTask) => ({ title: `Task ${task.id.slice(0, 8)} (edited)`, done: true });

/** A batch of edits, each based on the version the device holds. */
export function editBatchBody(tasks: HeldTask[], deviceId: string): string {
  return JSON.stringify({
    device_id: deviceId,
    ops: tasks.map((task) => ({ op_id: randomUUID(), collection: "tasks", record_id: task.id, type: "upsert", base_version: task.version, data: editOf(task) })),
  });
}

/** The tasks to seed for edits of `totalOps` tasks (each once) in `batchSize`-op batches, warm-up included. */
export const heldTasksFor = (batchSize: number, totalOps: number) => (Math.ceil(totalOps / batchSize) + WARM_UP_BATCHES) * batchSize;

/** Edits of the user's `held` tasks (seedHeldTasks, heldTasksFor), each once, through POST /v1/sync/batch. */
export async function pushEditsThroughApi(stack: BenchStack, user: BenchUser, held: HeldTask[], batchSize: number, log: (line: string) => void): Promise<ThroughputResult> {
  const batches = chunk(held, batchSize).map((tasks): Body => ({ body: editBatchBody(tasks, user.deviceId), ops: tasks.length }));
  return await timeBatches(`push edits via API, batch ${batchSize}`, log, batches.slice(0, WARM_UP_BATCHES), batches.slice(WARM_UP_BATCHES), (b) => b.ops,
    (b) => postBatch(stack.apiUrl, user.token, b.body, b.ops));
}

/**
 * The edits' floor: the same edits as one UPDATE per batch, as the user (the
 * table's policies, constraints and sync triggers run; no ledger, no merge,
 * no read of the rows first, no HTTP).
 */
export async function pushEditsFloor(stack: BenchStack, user: BenchUser, held: HeldTask[], batchSize: number, log: (line: string) => void): Promise<ThroughputResult> {
  const sql = await connectAs(stack, user);
  try {
    // Typed arrays as the push's own statements send them (pg-array.ts), built
    // before the clock runs, as the API side's request bodies are.
    const batches = chunk(held, batchSize).map((tasks) => {
      const edits = tasks.map(editOf);
      return { ops: tasks.length, ids: pgArray(tasks.map((task) => task.id)), titles: pgArray(edits.map((e) => e.title)), dones: pgArray(edits.map((e) => String(e.done))) };
    });
    const update = (batch: (typeof batches)[number]) => sql`
      update public.tasks t set title = e.title, done = e.done
        from unnest(${batch.ids}::uuid[], ${batch.titles}::text[], ${batch.dones}::boolean[]) as e(id, title, done)
       where t.id = e.id`;
    return await timeBatches(`push edits raw-SQL floor, batch ${batchSize}`, log, batches.slice(0, WARM_UP_BATCHES), batches.slice(WARM_UP_BATCHES), (batch) => batch.ops, update);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
