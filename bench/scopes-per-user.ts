// Scopes per user: does a pull cost more when the caller's rows are spread
// over many lists? For each count k, a new user owns k lists (their personal
// one and k − 1 more) holding the same `rows` tasks evenly, and pulls a first
// full-sync page and a whole full sync (client wall time, median). A full
// sync walks one visible scope at a time, so k adds one index descent per
// list, not a scan.
import type { BenchStack, BenchUser } from "./bench-stack.ts";
import { median, now } from "./measure.ts";
import { seedTasks, vacuumAnalyze } from "./pull-throughput.ts";

export interface ScopesPerUserPoint {
  scopes: number;
  rows: number;
  firstPageMs: number;
  fullSyncMs: number;
}

async function pullAll(stack: BenchStack, user: BenchUser, expected: number, onlyFirstPage = false): Promise<void> {
  let cursor: string | undefined;
  let records = 0;
  for (;;) {
    const query = `limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const response = await fetch(`${stack.apiUrl}/v1/sync/changes?${query}`, { headers: { authorization: `Bearer ${user.token}` } });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`GET /v1/sync/changes answered ${response.status}: ${text.slice(0, 300)}`);
    const page = JSON.parse(text) as { changes: unknown[]; cursor: string; has_more: boolean };
    records += page.changes.length;
    cursor = page.cursor;
    if (onlyFirstPage) return;
    if (!page.has_more) break;
  }
  if (records !== expected) throw new Error(`scopes-per-user bench: a full sync returned ${records} records, expected ${expected}`);
}

async function medianMs(samples: number, run: () => Promise<unknown>): Promise<number> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = now();
    await run();
    times.push(now() - t0);
  }
  return median(times);
}

export async function measureScopesPerUser(stack: BenchStack, config: { counts: number[]; rows: number; samples: number }, log: (line: string) => void): Promise<ScopesPerUserPoint[]> {
  const points: ScopesPerUserPoint[] = [];
  for (const scopes of config.counts) {
    log(`scopes per user: ${config.rows} tasks over ${scopes} list(s)…`);
    const user = await stack.createUser(`scopes${scopes}`);
    const extra = await stack.adminSql<{ id: string }[]>`
      insert into public.lists (title, created_by)
      select 'Bench list ' || g, ${user.userId}::uuid from generate_series(1, ${scopes - 1}::integer) g
      returning id::text`;
    const lists = [user.listId, ...extra.map((l) => l.id)];
    await seedTasks(stack.ownerSql, lists, config.rows, user.userId);
    await vacuumAnalyze(stack.ownerSql);
    const total = config.rows + 2 * lists.length; // the tasks, the lists themselves and the owner's membership of each
    points.push({
      scopes,
      rows: config.rows,
      firstPageMs: await medianMs(config.samples * 3, () => pullAll(stack, user, 0, true)),
      fullSyncMs: await medianMs(config.samples, () => pullAll(stack, user, total)),
    });
  }
  return points;
}
