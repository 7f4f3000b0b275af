// Does a pull cost by the caller's scopes or by the whole database? The same
// caller with the same own rows pulls through GET /v1/sync/changes, first
// with nobody else's data in the database, then with `otherRows` tasks in
// the personal lists of `otherUsers` other users; every measurement is
// repeated and the ratio (with / without) reported. Runs on its own fresh
// database so the other measurements of the run never see those rows.
import type { BenchStack, BenchUser } from "./bench-stack.ts";
import { median, now } from "./measure.ts";
import { untilOpenTransactionsEnd } from "../tests/support/open-transactions.ts";
import { seedTasks, vacuumAnalyze } from "./pull-throughput.ts";

export interface ScopePullTimes {
  /** First full-sync page (no cursor, limit 1000), client wall time, median. */
  firstPageMs: number;
  /** A whole full sync of the caller's rows, median over the repeats. */
  fullSyncMs: number;
  /** An incremental page of 1000 changes in the caller's list, median. */
  incrementalPageMs: number;
  /** A pull with an up-to-date cursor (nothing new), median. */
  upToDateMs: number;
}

export interface ScopeCostResult {
  ownRows: number;
  otherRows: number;
  otherUsers: number;
  /** Seconds to add the other users (with their personal lists), their rows (one INSERT … SELECT, sync triggers included), then vacuum analyze. */
  seedSeconds: { users: number; rows: number; analyze: number };
  none: ScopePullTimes;
  withOthers: ScopePullTimes;
  /** withOthers / none, per measurement. */
  ratios: ScopePullTimes;
}

interface Page { changes: unknown[]; cursor: string; has_more: boolean }

async function pull(stack: BenchStack, user: BenchUser, cursor?: string): Promise<Page> {
  const query = `limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
  const response = await fetch(`${stack.apiUrl}/v1/sync/changes?${query}`, { headers: { authorization: `Bearer ${user.token}` } });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /v1/sync/changes answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Page;
}

async function pullAll(stack: BenchStack, user: BenchUser, cursor?: string): Promise<{ records: number; cursor: string }> {
  let records = 0;
  for (;;) {
    const page = await pull(stack, user, cursor);
    records += page.changes.length;
    cursor = page.cursor;
    if (!page.has_more) return { records, cursor };
  }
}

async function medianMs(samples: number, run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 3; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = now();
    await run();
    times.push(now() - t0);
  }
  return median(times);
}

async function expectCount(what: string, expected: number, run: () => Promise<number>): Promise<void> {
  const got = await run();
  if (got !== expected) throw new Error(`scope-cost bench: ${what} returned ${got} records, expected ${expected}`);
}

export async function measurePullScopeCost(
  stack: BenchStack,
  config: { ownRows: number; otherRows: number; otherUsers: number; samples: number },
  log: (line: string) => void,
): Promise<ScopeCostResult> {
  const sql = stack.ownerSql;
  const caller = await stack.createUser("scope");
  log(`scope: ${config.ownRows} tasks in the caller's list…`);
  await seedTasks(sql, [caller.listId], config.ownRows);
  await vacuumAnalyze(sql);
  // Cursors: `before` sits before 1000 changes in the caller's list, `upToDate` after them.
  await untilOpenTransactionsEnd(stack.adminSql);
  const initial = await pullAll(stack, caller);
  const changes = Math.min(1000, config.ownRows);
  await sql`update public.tasks set done = not done where id in (select id from public.tasks where list_id = ${caller.listId}::uuid order by id limit ${changes}::integer)`;
  const before = initial.cursor;
  await untilOpenTransactionsEnd(stack.adminSql);
  const { cursor: upToDate } = await pullAll(stack, caller, before);
  const fullRows = config.ownRows + 1; // the tasks and the list itself

  const measure = async (label: string): Promise<ScopePullTimes> => {
    log(`scope: pulls ${label}…`);
    // Every measured pull answers the same records in both states: nothing of the other users leaks in.
    await expectCount("a full sync", fullRows, async () => (await pullAll(stack, caller)).records);
    await expectCount("the incremental page", changes, async () => (await pull(stack, caller, before)).changes.length);
    await expectCount("the up-to-date pull", 0, async () => (await pull(stack, caller, upToDate)).changes.length);
    return {
      firstPageMs: await medianMs(config.samples, () => pull(stack, caller)),
      fullSyncMs: await medianMs(Math.max(3, Math.floor(config.samples / 5)), () => pullAll(stack, caller)),
      incrementalPageMs: await medianMs(config.samples, () => pull(stack, caller, before)),
      upToDateMs: await medianMs(config.samples, () => pull(stack, caller, upToDate)),
    };
  };

  const none = await measure("with no other user's rows");

  log(`scope: ${config.otherUsers} other users with their personal lists…`);
  let t0 = now();
  const others = await stack.adminSql<{ id: string }[]>`
    insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at, is_anonymous)
    select '00000000-0000-0000-0000-000000000000', gen_random_uuid(), 'authenticated', 'authenticated', 'bench-other-' || g || '@bench.tidesync.dev',
           '{"provider": "email", "providers": ["email"]}', '{}', now(), now(), false
      from generate_series(1, ${config.otherUsers}::integer) g
    returning id::text`;
  const users = (now() - t0) / 1000;
  log(`scope: ${config.otherRows} tasks in their lists (two INSERT … SELECT at once, sync triggers included)…`);
  t0 = now();
  // Two statements at once (half the users each): the machine's two cores share the sync triggers' work.
  const half = Math.ceil(others.length / 2);
  const groups = [others.slice(0, half), others.slice(half)].filter((g) => g.length > 0);
  await Promise.all(groups.map((g) => seedTasks(sql, g.map((o) => o.id), Math.round((config.otherRows * g.length) / others.length))));
  const rows = (now() - t0) / 1000;
  t0 = now();
  await vacuumAnalyze(sql);
  const analyze = (now() - t0) / 1000;
  log(`  → users ${users.toFixed(1)} s, rows ${rows.toFixed(1)} s, vacuum analyze ${analyze.toFixed(1)} s`);

  const withOthers = await measure(`with ${config.otherRows} rows of ${config.otherUsers} other users`);
  const ratio = (key: keyof ScopePullTimes) => withOthers[key] / none[key];
  return {
    ownRows: config.ownRows,
    otherRows: config.otherRows,
    otherUsers: config.otherUsers,
    seedSeconds: { users, rows, analyze },
    none,
    withOthers,
    ratios: { firstPageMs: ratio("firstPageMs"), fullSyncMs: ratio("fullSyncMs"), incrementalPageMs: ratio("incrementalPageMs"), upToDateMs: ratio("upToDateMs") },
  };
}
