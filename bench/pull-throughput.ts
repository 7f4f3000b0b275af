// Pull throughput: an initial sync of N tasks through GET /v1/sync/changes
// (limit=1000, following cursors) against the raw-SQL floor — the cheapest
// SQL that reads the same rows as the same JSON: keyset pages over
// public.tasks of the caller's lists joined to their sync state (version,
// updated_at), Postgres building the JSON, fetched as the owner (no RLS) with
// postgres.js. Both sides parse each page's JSON, as a client must.
import type postgres from "postgres";
import { findCollection } from "../functions/_shared/collections.ts";
import { recordJsonSql, rowJsonSql } from "../functions/api/sync/row-json.ts";
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

/**
 * Writes `count` tasks spread over `listIds` in one INSERT … SELECT as the
 * owner role (no RLS; the sync triggers run, as for any write), created by
 * `createdBy`, or by the owner of each personal list (its id is theirs).
 */
export async function seedTasks(sql: postgres.Sql, listIds: string[], count: number, createdBy?: string): Promise<void> {
  await sql`
    with l as (select u.id, u.ord - 1 as n from unnest(${listIds}::uuid[]) with ordinality as u(id, ord))
    insert into public.tasks (id, list_id, title, notes, done, due_date, position, created_by)
    select gen_random_uuid(), l.id, 'Task ' || g, 'Bench note for task ' || g || ': buy milk, call Bob.', g % 3 = 0,
           case when g % 2 = 0 then date '2026-12-01' end, g,
           coalesce(${createdBy ?? null}::uuid, l.id) -- a personal list's id is its owner's id
      from generate_series(1, ${count}::integer) g
      join l on l.n = g % ${listIds.length}::integer`;
}

/** What autovacuum would do after a bulk load: visibility map and planner statistics. */
export async function vacuumAnalyze(sql: postgres.Sql): Promise<void> {
  for (const table of ["public.tasks", "app_private.sync_records", "app_private.sync_changes"]) await sql.unsafe(`vacuum analyze ${table}`);
}

const TASKS = findCollection("tasks")!;

/**
 * The floor's page: the caller's tasks after `afterId` by primary key, with
 * their version, as the JSON objects a pull returns, one row each, built the
 * cheapest way we know: with the function's own expressions (row-json.ts: the
 * entry and the row's `data` concatenated as text, one piece per column by its
 * type), and one row per entry rather than one aggregated array (which costs
 * the backend about twice the CPU, docs/performance-history.md). Before 2026-11-26 the
 * floor built `data` with json_build_object and aggregated the page: both
 * flattered the API's share. $1 list ids, $2 after id, $3 limit.
 */
export const FLOOR_PAGE_SQL = `
  select ${recordJsonSql({ collection: "'tasks'", id: "p.id", version: "p.version", deleted: "'false'", data: "p.data", updatedAt: "p.updated_at" })} as entry
    from (select t.id, s.version, s.updated_at, ${rowJsonSql(TASKS, "t")} as data
            from public.tasks t
            join app_private.sync_records s on s.collection = 'tasks' and s.id = t.id
                                           and s.id > $2::uuid -- the planner does not carry t.id's bound over the join
           where t.list_id = any ($1::uuid[]) and t.id > $2::uuid
           order by t.id
           limit $3) p
   order by p.id`;

export interface FloorPage {
  /** The page's JSON array, as the client joins it from the rows. */
  text: string;
  /** The records, parsed (as a client must). */
  records: { id: string }[];
}

/** One floor page, read and parsed as a client would: the rows joined into the array, then JSON.parse. */
export async function floorPage(sql: postgres.Sql | postgres.TransactionSql, listIds: string[], afterId: string, limit: number): Promise<FloorPage> {
  const rows = await sql.unsafe<{ entry: string }[]>(FLOOR_PAGE_SQL, [listIds, afterId, limit], { prepare: true });
  const text = `[${rows.map((row) => row.entry).join(",")}]`;
  return { text, records: JSON.parse(text) as { id: string }[] };
}

export const ZERO_UUID = "00000000-0000-0000-0000-000000000000";

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
  return await timeRepeats(repeats, async (pageTimes) => {
    let afterId = ZERO_UUID;
    let records = 0;
    let pages = 0;
    let bytes = 0;
    for (;;) {
      const t0 = now();
      const page = await floorPage(stack.ownerSql, [user.listId], afterId, pageSize);
      pageTimes.push(now() - t0);
      records += page.records.length;
      pages += 1;
      bytes += page.text.length;
      const last = page.records.at(-1);
      if (page.records.length < pageSize || !last) break;
      afterId = last.id;
    }
    return { records, pages, bytes };
  });
}
