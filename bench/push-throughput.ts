// Push throughput: new tasks pushed through POST /v1/sync/batch (real Deno,
// JWT check, rate limit, RLS, ledger, merge) against the raw-SQL floor — the
// same rows written into public.tasks in one multi-row insert per batch, as
// `authenticated` with the caller's claims (so the table's policies, grants,
// constraints, foreign keys and sync triggers all run: the cheapest correct
// write; no ledger, no merge, no HTTP). One client, one batch in flight, on
// both sides, the two sides' batches in alternating blocks (timeSideBySide);
// request bodies and row arrays are built before the clock runs. The same for
// edits of existing tasks (each based on the version the device holds)
// against one UPDATE per batch.
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

/** One side of a throughput measurement: its batches (warm-up, then timed) and how one is sent. */
export interface BatchSide<T> {
  label: string;
  warmUp: T[];
  timed: T[];
  opsOf: (batch: T) => number;
  send: (batch: T) => Promise<unknown>;
}

/** Ops/s over the batches' own times (one batch in flight) and the median batch. */
function throughput<T>(side: BatchSide<T>, times: number[]): ThroughputResult {
  const seconds = times.reduce((sum, ms) => sum + ms, 0) / 1000;
  const ops = side.timed.reduce((sum, batch) => sum + side.opsOf(batch), 0);
  return { ops, batches: times.length, seconds, opsPerSecond: ops / seconds, p50Ms: percentile([...times].sort((a, b) => a - b), 50) };
}

/** Sends `batches` one after the other (one in flight) and returns each one's time. */
async function timeEach<T>(side: BatchSide<T>, batches: T[], tick: () => void): Promise<number[]> {
  const times: number[] = [];
  for (const batch of batches) {
    const t0 = now();
    await side.send(batch);
    times.push(now() - t0);
    tick();
  }
  return times;
}

/** Runs the side's warm-up, then times its batches (one in flight). */
async function timeBatches<T>(log: (line: string) => void, side: BatchSide<T>): Promise<ThroughputResult> {
  for (const batch of side.warmUp) await side.send(batch);
  const tick = progress(log, side.label);
  let done = 0;
  return throughput(side, await timeEach(side, side.timed, () => tick(++done, side.timed.length)));
}

/** Wraps a window of the API's work that its CPU figures count (bench/run.ts). */
export type AroundApi = <R>(run: () => Promise<R>) => Promise<R>;

/** How many blocks each side's timed batches run in, side by side (timeSideBySide). */
export const SIDE_BY_SIDE_BLOCKS = 4;

/**
 * The API and its floor side by side: both warm up, then each side's timed
 * batches run in SIDE_BY_SIDE_BLOCKS blocks, alternating A B B A A B B A, so
 * that the machine drifting during the phase (a checkpoint, autovacuum, a
 * neighbour) weighs on both sides alike. Run one after the other, the two
 * sides' shares moved from 29% to 48% between runs of the same code
 * (docs/performance.md). `aroundApi` wraps the API's warm-up and each of its
 * blocks (the CPU figures count only those).
 */
export async function timeSideBySide<A, B>(
  log: (line: string) => void,
  api: BatchSide<A>,
  floor: BatchSide<B>,
  aroundApi: AroundApi,
): Promise<{ api: ThroughputResult; floor: ThroughputResult }> {
  await aroundApi(async () => {
    for (const batch of api.warmUp) await api.send(batch);
  });
  for (const batch of floor.warmUp) await floor.send(batch);
  const block = <T>(side: BatchSide<T>, k: number) => {
    const size = Math.ceil(side.timed.length / SIDE_BY_SIDE_BLOCKS);
    return side.timed.slice(k * size, (k + 1) * size);
  };
  const tick = progress(log, `${api.label} | ${floor.label}`);
  const total = api.timed.length + floor.timed.length;
  let done = 0;
  const apiTimes: number[] = [];
  const floorTimes: number[] = [];
  for (let k = 0; k < SIDE_BY_SIDE_BLOCKS; k++) {
    const runApi = () => aroundApi(async () => apiTimes.push(...await timeEach(api, block(api, k), () => tick(++done, total))));
    const runFloor = async () => floorTimes.push(...await timeEach(floor, block(floor, k), () => tick(++done, total)));
    // A B, B A, A B, B A: first the API, then the floor, then the floor again, …
    for (const run of k % 2 === 0 ? [runApi, runFloor] : [runFloor, runApi]) await run();
  }
  return { api: throughput(api, apiTimes), floor: throughput(floor, floorTimes) };
}

type Body = { body: string; ops: number };

/** New tasks pushed through POST /v1/sync/batch, `batchSize` per request. */
function apiPushSide(stack: BenchStack, user: BenchUser, batchSize: number, totalOps: number): BatchSide<Body> {
  const bodies = (count: number) => chunk(taskRows(user.listId, count), batchSize).map((rows): Body => ({ body: batchBody(rows, user.deviceId), ops: rows.length }));
  return {
    label: `push via API, batch ${batchSize}`,
    warmUp: bodies(batchSize * WARM_UP_BATCHES),
    timed: bodies(Math.ceil(totalOps / batchSize) * batchSize),
    opsOf: (b) => b.ops,
    send: (b) => postBatch(stack.apiUrl, user.token, b.body, b.ops),
  };
}

/** The API alone (bench/against-driver.ts, which every tree since issue 5 can run). */
export async function pushThroughApi(stack: BenchStack, user: BenchUser, batchSize: number, totalOps: number, log: (line: string) => void): Promise<ThroughputResult> {
  return await timeBatches(log, apiPushSide(stack, user, batchSize, totalOps));
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

/** New tasks pushed through the API (`apiUser`) and written the floor's way (`floorUser`), side by side (timeSideBySide). */
export async function pushSideBySide(
  stack: BenchStack,
  users: { api: BenchUser; floor: BenchUser },
  batchSize: number,
  totalOps: number,
  log: (line: string) => void,
  aroundApi: AroundApi,
): Promise<{ api: ThroughputResult; floor: ThroughputResult }> {
  const sql = await connectAs(stack, users.floor);
  try {
    const floor: BatchSide<TaskRow[]> = {
      label: `push raw-SQL floor, batch ${batchSize}`,
      warmUp: chunk(taskRows(users.floor.listId, batchSize * WARM_UP_BATCHES), batchSize),
      timed: chunk(taskRows(users.floor.listId, Math.ceil(totalOps / batchSize) * batchSize), batchSize),
      opsOf: (rows) => rows.length,
      send: (rows) => insertTasks(sql, rows),
    };
    return await timeSideBySide(log, apiPushSide(stack, users.api, batchSize, totalOps), floor, aroundApi);
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

/**
 * Edits of held tasks (seedHeldTasks, heldTasksFor), each once: through POST
 * /v1/sync/batch (`api`), and as the edits' floor (`floor`): the same edits
 * as one UPDATE per batch, as the user (the table's policies, constraints and
 * sync triggers run; no ledger, no merge, no read of the rows first, no
 * HTTP). Side by side (timeSideBySide).
 */
export async function pushEditsSideBySide(
  stack: BenchStack,
  api: { user: BenchUser; held: HeldTask[] },
  floor: { user: BenchUser; held: HeldTask[] },
  batchSize: number,
  log: (line: string) => void,
  aroundApi: AroundApi,
): Promise<{ api: ThroughputResult; floor: ThroughputResult }> {
  const bodies = chunk(api.held, batchSize).map((tasks): Body => ({ body: editBatchBody(tasks, api.user.deviceId), ops: tasks.length }));
  const sql = await connectAs(stack, floor.user);
  try {
    // Typed arrays as the push's own statements send them (pg-array.ts), built
    // before the clock runs, as the API side's request bodies are.
    const updates = chunk(floor.held, batchSize).map((tasks) => {
      const edits = tasks.map(editOf);
      return { ops: tasks.length, ids: pgArray(tasks.map((task) => task.id)), titles: pgArray(edits.map((e) => e.title)), dones: pgArray(edits.map((e) => String(e.done))) };
    });
    return await timeSideBySide(log, {
      label: `push edits via API, batch ${batchSize}`,
      warmUp: bodies.slice(0, WARM_UP_BATCHES),
      timed: bodies.slice(WARM_UP_BATCHES),
      opsOf: (b) => b.ops,
      send: (b) => postBatch(stack.apiUrl, api.user.token, b.body, b.ops),
    }, {
      label: `push edits raw-SQL floor, batch ${batchSize}`,
      warmUp: updates.slice(0, WARM_UP_BATCHES),
      timed: updates.slice(WARM_UP_BATCHES),
      opsOf: (batch) => batch.ops,
      send: (batch) => sql`
        update public.tasks t set title = e.title, done = e.done
          from unnest(${batch.ids}::uuid[], ${batch.titles}::text[], ${batch.dones}::boolean[]) as e(id, title, done)
         where t.id = e.id`,
    }, aroundApi);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
