// The measurements `npm run bench:against` takes in one tree (this one, or an
// older commit's checkout it is copied into): pushes of 1, 50 and 500 new
// records, 500-op batches of edits to existing records (what flushing an
// offline queue mostly sends), and an initial-sync pull through that tree's
// real function, on a fresh database of that tree's schema. Prints one JSON
// line. Only what every tree since issue 5 exports is used; the pull's
// seeding is the one difference (seedTasks after issue 8; before it, the same
// records written into the JSON store here, seedSameRecords).
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import type postgres from "postgres";
import { startBenchStack } from "./bench-stack.ts";
import * as pull from "./pull-throughput.ts";
import { pushThroughApi } from "./push-throughput.ts";

const PUSHES: [batchSize: number, ops: number][] = [[1, 300], [50, 6000], [500, 20000]];
// pushThroughApi sends three warm-up batches before the timed ones (CPU counts them too).
const WARM_UP_BATCHES = 3;
const PULL_RECORDS = Number(process.env.AGAINST_PULL_RECORDS ?? 50_000);

/**
 * CPU time (ms) a process has used so far, from /proc (10 ms clock ticks). The
 * same reading as server-profile.ts's, kept here: this file runs inside older
 * trees, whose server-profile.ts may not have it.
 */
async function cpuMs(pid: number): Promise<number> {
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0; // the process has ended
  }
}

type Seeding = {
  seedTasks?: (sql: unknown, listIds: string[], count: number, createdBy?: string) => Promise<void>;
  vacuumAnalyze?: (sql: unknown) => Promise<void>;
  seedRecords?: (stack: unknown, user: unknown, count: number) => Promise<void>;
};

/**
 * The JSON store before issue 8 (app_private.records) seeded with the records
 * this tree's pull returns for seedTasks' tasks: the same keys and values in
 * `data` (the list, the creator and the creation time included), so both
 * trees' pulls carry the same records, not the older bench's smaller ones
 * (its seedRecords left out the three columns the typed table has since).
 * `bytesPerRecord` in the output shows the two pages' sizes.
 */
async function seedSameRecords(sql: postgres.Sql, userId: string, count: number): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`insert into app_private.sync_heads (user_id, last_seq, live_records) values (${userId}, ${count}, ${count})`;
    await tx`
      insert into app_private.records (user_id, collection, id, version, change_seq, data, field_versions, deleted, created_at, updated_at)
      select ${userId}::uuid, 'tasks', gen_random_uuid(), g, g,
             jsonb_build_object('list_id', ${userId}::uuid, 'title', 'Task ' || g, 'notes', 'Bench note for task ' || g || ': buy milk, call Bob.',
                                'done', g % 3 = 0, 'due_date', case when g % 2 = 0 then '2026-12-01' end, 'position', g,
                                'created_by', ${userId}::uuid, 'created_at', now()),
             jsonb_build_object('title', jsonb_build_object('v', g, 'd', null), 'notes', jsonb_build_object('v', g, 'd', null),
                                'done', jsonb_build_object('v', g, 'd', null), 'position', jsonb_build_object('v', g, 'd', null),
                                'due_date', jsonb_build_object('v', g, 'd', null), 'list_id', jsonb_build_object('v', g, 'd', null)),
             false, now(), now()
        from generate_series(1, ${count}::integer) g`;
  });
  for (const table of ["app_private.records", "app_private.sync_heads"]) await sql.unsafe(`vacuum analyze ${table}`);
}

type Op = { op_id: string; collection: string; record_id: string; type: "upsert"; base_version: number | null; data: Record<string, unknown> };

/** Posts `ops` as one batch; returns each applied op's new version (throws unless all were applied). */
async function post(apiUrl: string, token: string, deviceId: string, ops: Op[]): Promise<number[]> {
  const response = await fetch(`${apiUrl}/v1/sync/batch`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ device_id: deviceId, ops }),
  });
  const text = await response.text();
  const results = response.status === 200 ? (JSON.parse(text) as { results: { status: string; record?: { version: number } }[] }).results : [];
  if (results.length !== ops.length || results.some((r) => r.status !== "applied")) {
    throw new Error(`POST /v1/sync/batch answered ${response.status}: ${text.slice(0, 300)}`);
  }
  return results.map((r) => r.record!.version);
}

const UPDATE_BATCH = 500;
const UPDATE_BATCHES = 12;

/**
 * Edits of existing tasks, as a device flushing an offline queue sends them:
 * 500-op batches, each op a patch of two fields (title and done) based on the
 * version the device holds. The tasks are created first through the API
 * (same data in both trees: no list, which the older store does not know), then
 * three warm-up batches and UPDATE_BATCHES timed ones edit them, each
 * task once. Same wall-clock measures as pushThroughApi.
 */
async function pushUpdates(apiUrl: string, user: { token: string; deviceId?: string; listId?: string }, measure: <T>(run: () => Promise<T>) => Promise<{ result: T; denoMs: number; postgresMs: number }>) {
  const deviceId = user.deviceId ?? randomUUID();
  const tasks: { id: string; version: number }[] = [];
  for (let b = 0; b < UPDATE_BATCHES + 3; b++) {
    const ops: Op[] = Array.from({ length: UPDATE_BATCH }, (_, i) => ({
      op_id: randomUUID(), collection: "tasks", record_id: randomUUID(), type: "upsert", base_version: null,
      data: { title: `Task ${b}-${i}`, notes: "Bench note: buy milk, call Bob.", done: false, position: i, ...(user.listId ? { list_id: user.listId } : {}) },
    }));
    const versions = await post(apiUrl, user.token, deviceId, ops);
    ops.forEach((op, i) => tasks.push({ id: op.record_id, version: versions[i] }));
  }
  const batches = Array.from({ length: UPDATE_BATCHES + 3 }, (_, b) =>
    tasks.slice(b * UPDATE_BATCH, (b + 1) * UPDATE_BATCH).map((task): Op => ({
      op_id: randomUUID(), collection: "tasks", record_id: task.id, type: "upsert", base_version: task.version, data: { title: `Task ${task.id.slice(0, 8)} (edited)`, done: true },
    })));
  for (const ops of batches.slice(0, 3)) await post(apiUrl, user.token, deviceId, ops); // warm-up, outside the clock
  return await measure(async () => {
    const times: number[] = [];
    const started = performance.now();
    for (const ops of batches.slice(3)) {
      const t0 = performance.now();
      await post(apiUrl, user.token, deviceId, ops);
      times.push(performance.now() - t0);
    }
    const seconds = (performance.now() - started) / 1000;
    times.sort((a, b) => a - b);
    return { opsPerSecond: (UPDATE_BATCHES * UPDATE_BATCH) / seconds, p50Ms: times[Math.floor(times.length / 2)] };
  });
}

const stack = await startBenchStack(() => {});
try {
  const pid = stack.server.process.pid!;
  // CPU of the function server and of its Postgres connections (those opened
  // during the run too: counted from zero) while `run` runs.
  const measure = async <T>(run: () => Promise<T>) => {
    const denoBefore = await cpuMs(pid);
    const before = new Map(await Promise.all((await stack.functionBackendPids()).map(async (p) => [p, await cpuMs(p)] as const)));
    const result = await run();
    const denoMs = (await cpuMs(pid)) - denoBefore;
    const backends = [...new Set([...before.keys(), ...(await stack.functionBackendPids())])];
    const postgresMs = (await Promise.all(backends.map(async (p) => (await cpuMs(p)) - (before.get(p) ?? 0)))).reduce((a, b) => a + b, 0);
    return { result, denoMs, postgresMs };
  };
  const out: Record<string, unknown> = {};
  for (const [batchSize, ops] of PUSHES) {
    const user = await stack.createUser(`against${batchSize}`);
    const { result, denoMs, postgresMs } = await measure(() => pushThroughApi(stack, user, batchSize, ops, () => {}));
    out[`push${batchSize}`] = { opsPerSecond: Math.round(result.opsPerSecond), p50Ms: result.p50Ms, denoCpuMsPerBatch: denoMs / (result.batches + WARM_UP_BATCHES), postgresCpuMsPerBatch: postgresMs / (result.batches + WARM_UP_BATCHES) };
  }
  {
    const updated = await pushUpdates(stack.apiUrl, await stack.createUser("againstUpdates") as never, measure);
    out.push500updates = { opsPerSecond: Math.round(updated.result.opsPerSecond), p50Ms: updated.result.p50Ms, denoCpuMsPerBatch: updated.denoMs / UPDATE_BATCHES, postgresCpuMsPerBatch: updated.postgresMs / UPDATE_BATCHES };
  }
  const user = await stack.createUser("againstPull") as { listId?: string; userId: string };
  const seeding = pull as unknown as Seeding;
  if (seeding.seedTasks && seeding.vacuumAnalyze && user.listId) {
    await seeding.seedTasks(stack.adminSql, [user.listId], PULL_RECORDS, user.userId);
    await seeding.vacuumAnalyze(stack.adminSql);
  } else if (seeding.seedRecords) {
    await seedSameRecords(stack.ownerSql as postgres.Sql, user.userId, PULL_RECORDS);
  } else {
    throw new Error("this tree's bench/pull-throughput.ts has neither seedTasks nor seedRecords");
  }
  const { result, denoMs, postgresMs } = await measure(() => pull.pullThroughApi(stack, user as never, 1000, 2));
  // Two timed walks and one warm-up: CPU per page over all three.
  const pages = result.pages * 3;
  out.pull = { recordsPerSecond: Math.round(result.recordsPerSecond), bytesPerRecord: Math.round(result.bytes / result.records), pageP50Ms: result.pageP50Ms, denoCpuMsPerPage: denoMs / pages, postgresCpuMsPerPage: postgresMs / pages };
  console.log(`AGAINST ${JSON.stringify(out)}`);
} finally {
  await stack.stop();
}
