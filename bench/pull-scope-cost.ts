// Does a pull cost by the caller's scopes or by the whole database? Two fresh
// stacks (database + function server) hold a caller with the same own rows;
// one of them also holds `otherRows` tasks in the personal lists of
// `otherUsers` other users. Every measurement alternates between the two,
// sample by sample (and which goes first), so both sides see the machine in
// the same state: the ratio (with / without) is the other rows' cost, not
// the drift of a shared machine between two phases (docs/performance.md).
import type { BenchStack, BenchUser } from "./bench-stack.ts";
import { alternatingMedians, now } from "./measure.ts";
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
  /** Seconds to add the other users (with their personal lists), their rows (one INSERT … SELECT, sync triggers included), then vacuum analyze and a checkpoint. */
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

/** One side of the comparison: a caller, their rows, and the cursors its measurements pull from. */
interface Side {
  stack: BenchStack;
  caller: BenchUser;
  /** Sits before 1000 changes in the caller's list. */
  before: string;
  /** Sits after them: nothing new. */
  upToDate: string;
}

async function prepareSide(stack: BenchStack, ownRows: number, log: (line: string) => void): Promise<Side> {
  const sql = stack.ownerSql;
  const caller = await stack.createUser("scope");
  log(`scope: ${ownRows} tasks in the caller's list…`);
  await seedTasks(sql, [caller.listId], ownRows);
  await vacuumAnalyze(sql);
  await untilOpenTransactionsEnd(stack.adminSql);
  const initial = await pullAll(stack, caller);
  const changes = Math.min(1000, ownRows);
  await sql`update public.tasks set done = not done where id in (select id from public.tasks where list_id = ${caller.listId}::uuid order by id limit ${changes}::integer)`;
  await untilOpenTransactionsEnd(stack.adminSql);
  const { cursor: upToDate } = await pullAll(stack, caller, initial.cursor);
  return { stack, caller, before: initial.cursor, upToDate };
}

/** Every measured pull answers the same records on both sides: nothing of the other users leaks in. */
async function expectSameAnswers(side: Side, ownRows: number): Promise<void> {
  const { stack, caller } = side;
  await expectCount("a full sync", ownRows + 2, async () => (await pullAll(stack, caller)).records); // the tasks, the list itself and its owner membership
  await expectCount("the incremental page", Math.min(1000, ownRows), async () => (await pull(stack, caller, side.before)).changes.length);
  await expectCount("the up-to-date pull", 0, async () => (await pull(stack, caller, side.upToDate)).changes.length);
}


async function expectCount(what: string, expected: number, run: () => Promise<number>): Promise<void> {
  const got = await run();
  if (got !== expected) throw new Error(`scope-cost bench: ${what} returned ${got} records, expected ${expected}`);
}

/** `none` and `withOthers`: two fresh stacks; the other users' rows are added to `withOthers`. */
export async function measurePullScopeCost(
  noneStack: BenchStack,
  othersStack: BenchStack,
  config: { ownRows: number; otherRows: number; otherUsers: number; samples: number },
  log: (line: string) => void,
): Promise<ScopeCostResult> {
  const none = await prepareSide(noneStack, config.ownRows, log);
  const withOthers = await prepareSide(othersStack, config.ownRows, log);

  log(`scope: ${config.otherUsers} other users with their personal lists…`);
  let t0 = now();
  const others = await othersStack.adminSql<{ id: string }[]>`
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
  await Promise.all(groups.map((g) => seedTasks(othersStack.ownerSql, g.map((o) => o.id), Math.round((config.otherRows * g.length) / others.length))));
  const rows = (now() - t0) / 1000;
  t0 = now();
  await vacuumAnalyze(othersStack.ownerSql);
  // The bulk load's dirty pages written out now, not by the checkpointer while pulls are timed.
  await othersStack.adminSql`checkpoint`;
  const analyze = (now() - t0) / 1000;
  log(`  → users ${users.toFixed(1)} s, rows ${rows.toFixed(1)} s, vacuum analyze + checkpoint ${analyze.toFixed(1)} s`);

  const sides: [Side, Side] = [none, withOthers];
  for (const side of sides) await expectSameAnswers(side, config.ownRows);
  log(`scope: pulls with no other user's rows and with ${config.otherRows} rows of ${config.otherUsers} other users, alternating…`);
  const [firstPage, fullSync, incrementalPage, upToDate] = [
    await alternatingMedians(config.samples, sides, (side) => pull(side.stack, side.caller)),
    await alternatingMedians(Math.max(3, Math.floor(config.samples / 5)), sides, (side) => pullAll(side.stack, side.caller)),
    await alternatingMedians(config.samples, sides, (side) => pull(side.stack, side.caller, side.before)),
    await alternatingMedians(config.samples, sides, (side) => pull(side.stack, side.caller, side.upToDate)),
  ];
  const pick = (k: 0 | 1): ScopePullTimes => ({ firstPageMs: firstPage[k], fullSyncMs: fullSync[k], incrementalPageMs: incrementalPage[k], upToDateMs: upToDate[k] });
  const [noneTimes, withTimes] = [pick(0), pick(1)];
  const ratio = (key: keyof ScopePullTimes) => withTimes[key] / noneTimes[key];
  return {
    ownRows: config.ownRows,
    otherRows: config.otherRows,
    otherUsers: config.otherUsers,
    seedSeconds: { users, rows, analyze },
    none: noneTimes,
    withOthers: withTimes,
    ratios: { firstPageMs: ratio("firstPageMs"), fullSyncMs: ratio("fullSyncMs"), incrementalPageMs: ratio("incrementalPageMs"), upToDateMs: ratio("upToDateMs") },
  };
}
