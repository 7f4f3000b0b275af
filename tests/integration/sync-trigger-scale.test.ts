// The sync triggers' work per statement must not grow with what the
// transaction or the bookkeeping already holds. What a user would notice
// otherwise: a bulk import into a fresh project (one INSERT of many users into
// auth.users, whose per-row triggers insert each user's personal list and
// membership: thousands of statements in one transaction) that is quadratic —
// 8,000 users took 54 s; deleting 4,000 users in one statement 12 s
// (migration 20261126000500). Measured here by what Postgres counts (rows
// read, bytes remembered, how often a plan node ran), never by time.
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTempDatabase, type TempDatabase } from "../../scripts/lib/temp-database.ts";
import { insertAuthUsers } from "../support/auth-users.ts";
import { allNodes, inRolledBackTransaction, maxLoops, planRecorder } from "../support/explained.ts";

let database: TempDatabase;
let admin: postgres.Sql;
const { onnotice, explainEach } = planRecorder();

beforeAll(async () => {
  // A fresh project: the bookkeeping is empty when the triggers' plans are made.
  database = await createTempDatabase("tidesync_triggerscale", { seed: false });
  admin = postgres(database.adminDbUrl, { max: 1, onnotice });
});

afterAll(async () => {
  await admin?.end({ timeout: 5 });
  await database?.drop();
});

/** Rows this transaction has read so far from the sync bookkeeping (sequential and index scans). */
async function bookkeepingRowsRead(tx: postgres.TransactionSql): Promise<number> {
  const [{ rows }] = await tx<{ rows: number }[]>`
    select coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0)::integer as rows
      from pg_stat_xact_user_tables
     where schemaname = 'app_private' and relname in ('sync_records', 'sync_changes')`;
  return rows;
}

/** A new user (emailed `<prefix>-1@…`) with `count` tasks in their personal list. */
async function userWithTasks(tx: postgres.TransactionSql, prefix: string, count: number): Promise<void> {
  await insertAuthUsers(tx, 1, prefix);
  await tx`
    insert into public.tasks (list_id, title)
    select u.id, 'Task ' || g from auth.users u, generate_series(1, ${count}::integer) g where u.email like ${prefix + "-%"}`;
}

/** One UPDATE of every task of that user's list. */
const markTheirTasksDone = (tx: postgres.TransactionSql, prefix: string) =>
  tx`update public.tasks t set done = true from auth.users u where u.email like ${prefix + "-%"} and t.list_id = u.id`;

describe("sync triggers in bulk statements", () => {
  it("read the bookkeeping by key: one more user costs the same after 400 as after none", async () => {
    await inRolledBackTransaction(admin, async (tx) => {
      // The plans every later statement of the session reuses, made now, on the empty bookkeeping.
      await tx`select set_config('plan_cache_mode', 'force_generic_plan', true)`;
      await insertAuthUsers(tx, 400, "bulk");
      const before = await bookkeepingRowsRead(tx);
      await insertAuthUsers(tx, 1, "one-more");
      const read = (await bookkeepingRowsRead(tx)) - before;
      // One user: a personal list (its bookkeeping row and change entry) and a
      // membership; a handful of key lookups, not the 400 lists' rows.
      expect(read).toBeLessThan(20);
    });
  });

  it("remember a bounded list of poked topics per transaction, and still poke every topic", async () => {
    await inRolledBackTransaction(admin, async (tx) => {
      const [{ before }] = await tx<{ before: number }[]>`select count(*)::integer as before from realtime.messages`;
      // 600 users: 600 personal lists (a scope topic each) and 600 memberships (a user topic each).
      await insertAuthUsers(tx, 600, "pokes");
      const [{ topics, remembered }] = await tx<{ topics: number; remembered: number }[]>`
        select (select count(distinct m.topic) from realtime.messages m
                 where m.topic like 'tidesync:%' and m.topic in (
                   select 'tidesync:scope:' || u.id from auth.users u where u.email like 'pokes-%'
                   union all
                   select 'tidesync:user:' || u.id from auth.users u where u.email like 'pokes-%'))::integer as topics,
               length(coalesce(current_setting('tidesync.pokes_sent', true), ''))::integer as remembered`;
      expect(topics).toBe(1200);
      const [{ sent }] = await tx<{ sent: number }[]>`select count(*)::integer - ${before}::integer as sent from realtime.messages`;
      // Each topic once per statement that touches it, at most: the list's insert and then its
      // membership's (a synced row in the same scope) both touch a scope topic; only the topics
      // the bounded memory below still holds are not poked twice.
      expect(sent).toBeGreaterThanOrEqual(1200);
      expect(sent).toBeLessThanOrEqual(1800);
      // ~300 topic names at most (16 KiB), not the 1200 of this transaction (~64 KiB).
      expect(remembered).toBeLessThanOrEqual(16_384 + 60);
    });
  });

  it("forget the pokes of many deleted users in one pass, not once per deleted user", async () => {
    await inRolledBackTransaction(admin, async (tx) => {
      await insertAuthUsers(tx, 50, "leaving");
      const plans = await explainEach(tx, true, () => tx.unsafe(`delete from auth.users where email like 'leaving-%'`));
      const plan = plans.find((explained) => explained["Query Text"].includes("delete from realtime.messages"));
      expect(plan, "the clean-up statement of forget_pokes_of_deleted_users ran").toBeDefined();
      const [{ left }] = await tx<{ left: number }[]>`
        select count(*)::integer as left from realtime.messages m where m.topic like 'tidesync:%' and m.topic not in (
          select 'tidesync:scope:' || l.id from public.lists l union all select 'tidesync:user:' || u.id from auth.users u)`;
      expect(left).toBe(0); // every poke naming a deleted user is gone
      // No part of the plan runs once per message or per deleted user: the
      // 50 users' 100 topics are one set, and each message is looked up in it.
      expect(maxLoops(plan!.Plan)).toBe(1);
    });
  });

  it("update thousands of synced rows in one statement without compiling the trigger's statements (JIT)", async (context) => {
    // Supabase's Postgres ships with JIT on; the trigger's transition tables have no
    // statistics, so past ~2,000 rows its update statement looked expensive enough
    // to compile: ~0.4 s of a 20,000-row UPDATE's 1.2 s (migration 20261126000600).
    const [{ available }] = await admin<{ available: boolean }[]>`select pg_jit_available() as available`;
    if (!available) {
      // Nothing to show on a server built without LLVM: no statement can be compiled there.
      console.warn("skipped: this Postgres cannot JIT (pg_jit_available() is false); Supabase's and Debian's can");
      return context.skip();
    }
    await inRolledBackTransaction(admin, async (tx) => {
      await userWithTasks(tx, "jit", 4000);
      const plans = await explainEach(tx, false, () => markTheirTasksDone(tx, "jit"));
      const trigger = plans.filter((explained) => explained["Query Text"].includes("with pairs as"));
      expect(trigger, "the update branch of track_sync_changes ran").toHaveLength(1);
      expect(plans.filter((explained) => explained.JIT !== undefined).map((explained) => explained["Query Text"].slice(0, 80))).toEqual([]);
    });
  });

  it("compare an edited row's columns once, and update its change entry in place", async () => {
    await inRolledBackTransaction(admin, async (tx) => {
      await userWithTasks(tx, "edits", 200);
      const plans = await explainEach(tx, true, () => markTheirTasksDone(tx, "edits"));
      const plan = plans.find((explained) => explained["Query Text"].includes("with pairs as"));
      expect(plan, "the update branch of track_sync_changes ran").toBeDefined();
      const nodes = allNodes(plan!.Plan);
      // 200 rows, each compared column by column once (it was twice: the list was inlined in two places)
      const comparisons = nodes.filter((node) => node["Function Name"] === "jsonb_each").reduce((sum, node) => sum + (node["Actual Loops"] ?? 0), 0);
      expect(comparisons).toBe(200);
      // none moved: every change entry is updated in place, none goes through INSERT … ON CONFLICT
      const upserted = nodes.filter((node) => node["Node Type"] === "ModifyTable" && node.Operation === "Insert")
        .reduce((sum, node) => sum + (node["Conflicting Tuples"] ?? 0) + (node["Tuples Inserted"] ?? 0), 0);
      expect(upserted).toBe(0);
      const [{ entries }] = await tx<{ entries: number }[]>`
        select count(*)::integer as entries from app_private.sync_changes c join public.tasks t on t.id = c.id
         where c.collection = 'tasks' and c.present and c.scope_id = t.list_id and c.seq = (
           select s.version from app_private.sync_records s where s.collection = 'tasks' and s.id = t.id)
           and t.list_id in (select u.id from auth.users u where u.email like 'edits-%')`;
      expect(entries).toBe(200); // each entry now carries the edit's version
    });
  });
});
