// What a member's Data API statements (supabase-js through PostgREST: role
// `authenticated` with their claims) read of the sample tables when many other
// users' lists are there. A policy decides which rows a statement may touch;
// written so that Postgres can start from the caller's lists (an index
// condition on the list id), a read without filters — `from("tasks").select()`,
// a member list, an update of "all my tasks" — reads the caller's rows; written
// otherwise, it reads every row of the table and filters (what a user would
// notice: every such screen slowing as the app gains users). Counted by the
// rows each scan of the table read (EXPLAIN ANALYZE), never by time.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTempDatabase, type TempDatabase } from "../../scripts/lib/temp-database.ts";
import { insertAuthUser, insertAuthUsers, signIn } from "../support/auth-users.ts";
import { allNodes, inRolledBackTransaction, type PlanNode } from "../support/explained.ts";

const OTHER_USERS = 1000;
const OTHER_TASKS_EACH = 5;
const OTHER_MEMBERS_EACH = 9;
const CALLER_TASKS = 12;

let database: TempDatabase;
let admin: postgres.Sql;
const caller = randomUUID();
const member = randomUUID();
let claims: string;

beforeAll(async () => {
  database = await createTempDatabase("tidesync_apireads", { seed: false });
  admin = postgres(database.adminDbUrl, { max: 1, onnotice: () => {} });
  await insertAuthUser(admin, caller); // their personal list's id is their id
  await insertAuthUser(admin, member);
  claims = await signIn(admin, caller);
  await admin`insert into public.list_members (list_id, user_id, role) values (${caller}, ${member}, 'editor')`;
  await admin`insert into public.tasks (list_id, title) select ${caller}, 'Mine ' || g from generate_series(1, ${CALLER_TASKS}) g`;
  await insertAuthUsers(admin, OTHER_USERS, "data-api-reads-other"); // each with their personal list
  await admin`insert into public.tasks (list_id, title) select l.id, 'Theirs ' || g from public.lists l, generate_series(1, ${OTHER_TASKS_EACH}) g
               where l.id not in (${caller}, ${member})`;
  // and each of their lists shared with OTHER_MEMBERS_EACH of them: a memberships table the
  // planner reads by index (at 1,000 rows a sequential scan of its few pages is as cheap)
  await admin`
    with o as (select u.id, row_number() over (order by u.id) as n from auth.users u where u.id not in (${caller}, ${member}))
    insert into public.list_members (list_id, user_id, role)
    select a.id, b.id, 'viewer' from o a cross join generate_series(1, ${OTHER_MEMBERS_EACH}) k join o b on b.n = (a.n + k) % ${OTHER_USERS} + 1`;
  await admin`vacuum analyze`;
}, 120_000);

afterAll(async () => {
  await admin?.end({ timeout: 5 });
  await database?.drop();
});

/** Rows the statement's scans of `table` read (returned or filtered out), as the caller, rolled back. */
async function rowsReadOf(table: string, statement: string): Promise<{ read: number; returned: number }> {
  let result = { read: -1, returned: -1 };
  await inRolledBackTransaction(admin, async (tx) => {
    await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${claims}, true)`;
    const [row] = await tx.unsafe<{ "QUERY PLAN": [{ Plan: PlanNode }] }[]>(`explain (analyze, format json) ${statement}`);
    const plan = row["QUERY PLAN"][0].Plan;
    const scans = allNodes(plan).filter((n) => n["Relation Name"] === table && /Scan/.test(n["Node Type"] ?? ""));
    expect(scans.length, `${statement}: a scan of ${table}`).toBeGreaterThan(0);
    const read = scans.reduce((sum, n) => sum + ((n["Actual Rows"] ?? 0) + (n["Rows Removed by Filter"] ?? 0)) * (n["Actual Loops"] ?? 1), 0);
    result = { read, returned: plan["Actual Rows"] ?? 0 };
  });
  return result;
}

describe(`a member's unfiltered Data API statements among ${OTHER_USERS} other users' lists`, () => {
  const cases: { what: string; table: string; statement: string; returned?: number }[] = [
    { what: "reads their tasks", table: "tasks", statement: "select * from public.tasks", returned: CALLER_TASKS },
    { what: "reads their lists' members", table: "list_members", statement: "select * from public.list_members", returned: 2 },
    { what: "reads their lists", table: "lists", statement: "select * from public.lists", returned: 1 },
    { what: "updates all their tasks", table: "tasks", statement: "update public.tasks set done = not done" },
    { what: "deletes their done tasks", table: "tasks", statement: "delete from public.tasks where done" },
    { what: "renames all their lists", table: "lists", statement: "update public.lists set title = title || '!'" },
    // (Not the memberships' update and delete: their policies lock each row's list, so they stay
    // filters that run on the rows a statement names, never an index condition that reads, and
    // locks, all of the caller's lists: migration 20261128007900.)
  ];
  it.each(cases)("$what: reads their rows, not the other users' ($table)", async ({ table, statement, returned }) => {
    const result = await rowsReadOf(table, statement);
    if (returned !== undefined) expect(result.returned).toBe(returned);
    expect(result.read).toBeLessThanOrEqual(CALLER_TASKS + 5);
  });
});
