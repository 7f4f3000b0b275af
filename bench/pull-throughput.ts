// Pull throughput: an initial sync of N records through GET /v1/sync/changes
// (limit=1000, following cursors) against the raw-SQL floor — Postgres building
// the JSON of the same keyset pages, fetched as the owner with postgres.js.
// Both sides parse each page's JSON, as a client must.
import type { BenchStack, BenchUser } from "./bench-stack.ts";
import { median, now, percentile } from "./measure.ts";

export interface PullResult {
  records: number;
  pages: number;
  /** Median of the repeats. */
  seconds: number;
  bestSeconds: number;
  recordsPerSecond: number;
  bytes: number;
  /** Median wall time of one page (over every timed walk). */
  pageP50Ms: number;
}

/** Writes `count` live task records for the user straight into the tables (with their head). */
export async function seedRecords(stack: BenchStack, user: BenchUser, count: number): Promise<void> {
  const sql = stack.ownerSql;
  await sql.begin(async (tx) => {
    await tx`insert into app_private.sync_heads (user_id, last_seq, live_records) values (${user.userId}, ${count}, ${count})`;
    await tx`
      insert into app_private.records (user_id, collection, id, version, change_seq, data, field_versions, deleted, created_at, updated_at)
      select ${user.userId}::uuid, 'tasks', gen_random_uuid(), g, g,
             jsonb_build_object('title', 'Task ' || g, 'notes', 'Bench note for task ' || g || ': buy milk, call Bob.',
                                'done', g % 3 = 0, 'position', g, 'due_date', case when g % 2 = 0 then '2026-12-01' end, 'list_id', null),
             jsonb_build_object('title', jsonb_build_object('v', g, 'd', null), 'notes', jsonb_build_object('v', g, 'd', null),
                                'done', jsonb_build_object('v', g, 'd', null), 'position', jsonb_build_object('v', g, 'd', null),
                                'due_date', jsonb_build_object('v', g, 'd', null), 'list_id', jsonb_build_object('v', g, 'd', null)),
             false, now(), now()
        from generate_series(1, ${count}::integer) g`;
  });
  await sql`vacuum analyze app_private.records`;
  await sql`vacuum analyze app_private.sync_heads`;
}

type Walk = (pageTimes: number[]) => Promise<{ records: number; pages: number; bytes: number }>;

async function timeRepeats(repeats: number, walk: Walk): Promise<PullResult> {
  await walk([]); // warm-up: caches, JIT, plans
  const times: number[] = [];
  const pageTimes: number[] = [];
  let last = { records: 0, pages: 0, bytes: 0 };
  for (let i = 0; i < repeats; i++) {
    const started = now();
    last = await walk(pageTimes);
    times.push((now() - started) / 1000);
  }
  const seconds = median(times);
  return { ...last, seconds, bestSeconds: Math.min(...times), recordsPerSecond: last.records / seconds, pageP50Ms: percentile(pageTimes.sort((a, b) => a - b), 50) };
}

export async function pullThroughApi(stack: BenchStack, user: BenchUser, pageSize: number, repeats: number): Promise<PullResult> {
  return await timeRepeats(repeats, async (pageTimes) => {
    let cursor: string | undefined;
    let records = 0;
    let pages = 0;
    let bytes = 0;
    for (;;) {
      const query = `limit=${pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const t0 = now();
      const response = await fetch(`${stack.apiUrl}/v1/sync/changes?${query}`, { headers: { authorization: `Bearer ${user.token}` } });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`GET /v1/sync/changes answered ${response.status}: ${text.slice(0, 300)}`);
      const page = JSON.parse(text) as { changes: unknown[]; cursor: string; has_more: boolean };
      pageTimes.push(now() - t0);
      records += page.changes.length;
      pages += 1;
      bytes += text.length;
      cursor = page.cursor;
      if (!page.has_more) break;
    }
    return { records, pages, bytes };
  });
}

export async function pullFloor(stack: BenchStack, user: BenchUser, pageSize: number, repeats: number): Promise<PullResult> {
  const sql = stack.ownerSql;
  return await timeRepeats(repeats, async (pageTimes) => {
    let afterSeq = 0;
    let records = 0;
    let pages = 0;
    let bytes = 0;
    for (;;) {
      const t0 = now();
      const [row] = await sql<{ last_seq: string | null; n: number; changes: string }[]>`
        with page as (
          select r.collection, r.id, r.version, r.deleted, r.data, r.updated_at, r.change_seq
            from app_private.records r
           where r.user_id = ${user.userId}::uuid and r.change_seq > ${afterSeq}::bigint
           order by r.change_seq
           limit ${pageSize}
        )
        select max(page.change_seq)::text as last_seq, count(*)::integer as n,
               coalesce(json_agg(json_build_object(
                 'collection', page.collection, 'id', page.id, 'version', page.version, 'deleted', page.deleted,
                 'data', page.data,
                 'updated_at', to_char(page.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')) order by page.change_seq), '[]'::json)::text as changes
          from page`;
      const changes = JSON.parse(row.changes) as unknown[];
      pageTimes.push(now() - t0);
      records += changes.length;
      pages += 1;
      bytes += row.changes.length;
      if (row.n < pageSize || row.last_seq === null) break;
      afterSeq = Number(row.last_seq);
    }
    return { records, pages, bytes };
  });
}
