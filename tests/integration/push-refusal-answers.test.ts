// The answers of POST /v1/sync/batch when the database refuses a row that the
// planner let through, because its picture of the rows was stale (another
// user's transaction, through the Data API as PostgREST runs it, committed
// while the push was waiting for it) or rested on another write of the batch.
// Each refused op is answered as the same op sent right afterwards is, and no
// answer reveals what the caller cannot see.
import { randomUUID } from "node:crypto";
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import type { SyncOpResult } from "../../functions/_shared/schemas/sync.ts";
import { MAX_LIVE_RECORDS_PER_USER } from "../../functions/_shared/sync-quota.generated.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { asUser, membershipIds, pullAll, pushOk, remove, share, sharedList, upsert } from "../support/shared-lists.ts";

/** Waits until some backend waits for a lock that `pid` holds, or `over()`. */
async function blockedBy(pid: number, over: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !over(); i++) {
    const [row] = await adminSql<{ blocked: boolean }[]>`
      select exists (select 1 from pg_stat_activity a where ${pid}::int = any (pg_blocking_pids(a.pid))) as blocked`;
    if (row.blocked) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  if (!over()) throw new Error(`no backend ever waited for ${pid}`);
}

/**
 * `user` runs `statements` in a transaction of their own (the Data API's way), then `push` starts;
 * the transaction commits once the push waits for it (or has answered without waiting). Returns
 * what the push answered.
 */
async function racing<T>(user: TestUser, statements: (tx: postgres.TransactionSql) => Promise<unknown>, push: () => Promise<T>): Promise<T> {
  let commit!: () => void;
  const released = new Promise<void>((resolve) => (commit = resolve));
  let ran!: (pid: number) => void;
  const pid = new Promise<number>((resolve) => (ran = resolve));
  const transaction = asUser(user, async (tx) => {
    const [row] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
    await statements(tx);
    ran(row.pid);
    await released;
  });
  transaction.catch(() => {}); // awaited below
  const holder = await pid;
  let answered = false;
  const pushed = push().finally(() => (answered = true));
  try {
    await blockedBy(holder, () => answered);
  } finally {
    commit();
    await transaction;
  }
  return await pushed;
}

/** A result without its op_id (to compare the answers of two ops). */
const answer = ({ op_id: _id, ...rest }: SyncOpResult) => rest;

describe("POST /v1/sync/batch: a row the database refuses after the planner's picture went stale", () => {
  it("two members create the same new id at once: the later one gets conflict with the record, as the same create sent afterwards does", async () => {
    const { alice, bob, list } = await sharedList("editor");
    const id = randomUUID();
    const raced = await racing(alice, (tx) => tx`insert into public.tasks (id, list_id, title) values (${id}, ${list}, 'alice')`,
      () => pushOk(bob, { ops: [upsert("tasks", id, { list_id: list, title: "bob" })] }));
    const afterwards = await pushOk(bob, { ops: [upsert("tasks", id, { list_id: list, title: "bob" })] });
    expect(afterwards.results[0]).toMatchObject({ status: "conflict", conflicting_fields: ["list_id", "title"], record: { id, data: { title: "alice" } } });
    expect(answer(raced.results[0])).toEqual(answer(afterwards.results[0]));
  });

  it("the same race on a row the caller cannot see: NOT_FOUND without a record, as an unknown id", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const id = randomUUID();
    const raced = await racing(alice, (tx) => tx`insert into public.tasks (id, list_id, title) values (${id}, ${alice.userId}, 'alice')`,
      () => pushOk(bob, { ops: [upsert("tasks", id, { list_id: bob.userId, title: "bob" })] }));
    expect(raced.results[0]).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });
    expect(raced.results[0].record).toBeUndefined();
    const afterwards = await pushOk(bob, { ops: [upsert("tasks", id, { list_id: bob.userId, title: "bob" })] });
    expect(answer(raced.results[0])).toEqual(answer(afterwards.results[0]));
  });
});

describe("POST /v1/sync/batch: a member removed while their batch runs", () => {
  /** Alice's list shared with Bob (editor), a task in it, and Bob's device's pull. */
  async function bobsView() {
    const { alice, bob, list } = await sharedList("editor");
    const task = randomUUID();
    const created = await pushOk(alice, { ops: [upsert("tasks", task, { list_id: list, title: "t" })] });
    return { alice, bob, list, task, version: created.results[0].record!.version, start: await pullAll(bob), members: await membershipIds(list) };
  }
  const removeBob = (bob: TestUser, list: string) => (tx: postgres.TransactionSql) =>
    tx`delete from public.list_members where list_id = ${list} and user_id = ${bob.userId}`;

  it("a create and an edit in the list, the list locked meanwhile: both NOT_FOUND without a record, as right afterwards; nothing of the batch stays in the list", async () => {
    const { alice, bob, list, task, version, start, members } = await bobsView();
    const created = randomUUID();
    const ops = () => [upsert("tasks", created, { list_id: list, title: "bob's" }), upsert("tasks", task, { title: "bob's edit" }, version)];
    const raced = await racing(alice, async (tx) => {
      await tx`select 1 from public.lists where id = ${list} for update`;
      await removeBob(bob, list)(tx);
    }, () => pushOk(bob, { ops: ops() }));
    expect(raced.results.map((r) => [r.status, r.error?.code, r.record])).toEqual([["rejected", "NOT_FOUND", undefined], ["rejected", "NOT_FOUND", undefined]]);
    const afterwards = await pushOk(bob, { ops: ops() });
    expect(raced.results.map(answer)).toEqual(afterwards.results.map(answer));
    // The task he created is not in a list he no longer belongs to, and his next pull agrees.
    expect(await adminSql`select id::text, title from public.tasks where list_id = ${list}`).toEqual([{ id: task, title: "t" }]);
    expect((await pullAll(bob, start.cursor)).changes.map((c) => [c.id, c.deleted, c.reason]).sort())
      .toEqual([[list, true, "access_revoked"], [task, true, "access_revoked"], ...members.map((m) => [m, true, "access_revoked"])].sort());
  });

  it("the batch waits on another list, then its create and edit in the lost list are refused: NOT_FOUND without a record, as right afterwards", async () => {
    const { alice, bob, list, task, version } = await bobsView();
    const other = randomUUID();
    await pushOk(alice, { ops: [upsert("lists", other, { title: "Other" })] });
    await share(alice, other, bob, "editor");
    // Each task create its own statement (other columns): the one in `other` waits for Alice's lock.
    const ops = () => [upsert("tasks", randomUUID(), { list_id: list, title: "bob's", notes: "n" }), upsert("tasks", task, { title: "bob's edit" }, version)];
    const raced = await racing(alice, async (tx) => {
      await tx`select 1 from public.lists where id = ${other} for update`;
      await removeBob(bob, list)(tx);
    }, () => pushOk(bob, { ops: [upsert("tasks", randomUUID(), { list_id: other, title: "elsewhere" }), ...ops()] }));
    expect(raced.results[0]).toMatchObject({ status: "applied", record: { data: { list_id: other, title: "elsewhere" } } });
    expect(raced.results.slice(1).map((r) => [r.status, r.error?.code, r.record])).toEqual([["rejected", "NOT_FOUND", undefined], ["rejected", "NOT_FOUND", undefined]]);
    const afterwards = await pushOk(bob, { ops: [upsert("tasks", randomUUID(), { list_id: other, title: "elsewhere" }), ...ops()] });
    expect(raced.results.slice(1).map(answer)).toEqual(afterwards.results.slice(1).map(answer));
  });
});

describe("POST /v1/sync/batch: a row the database refuses where the planner relied on the batch's own write", () => {
  it("a list created with an id someone else's list has, then a task in it: the task is NOT_FOUND as in a list that does not exist", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const [hidden, alsoHidden] = [randomUUID(), randomUUID()];
    await pushOk(alice, { ops: [upsert("lists", hidden, { title: "Alice's" }), upsert("lists", alsoHidden, { title: "Alice's too" })] });

    const inHidden = await pushOk(bob, { ops: [upsert("lists", hidden, { title: "mine" }), upsert("tasks", randomUUID(), { list_id: hidden, title: "t" })] });
    expect(inHidden.results.map((r) => [r.status, r.error?.code])).toEqual([["rejected", "NOT_FOUND"], ["rejected", "NOT_FOUND"]]);
    expect(inHidden.results.map((r) => r.record)).toEqual([undefined, undefined]);
    // The same answers as a list id nobody has: nothing tells Bob that Alice's list exists.
    const inUnknown = await pushOk(bob, { ops: [upsert("lists", alsoHidden, { title: "mine" }), upsert("tasks", randomUUID(), { list_id: randomUUID(), title: "t" })] });
    expect(inHidden.results.map(answer)).toEqual(inUnknown.results.map(answer));
    const alone = await pushOk(bob, { ops: [upsert("tasks", randomUUID(), { list_id: hidden, title: "t" })] });
    expect(alone.results[0].error).toEqual({ ...inHidden.results[1].error, details: [{ ...inHidden.results[1].error!.details![0], field: "/ops/0/data/list_id" }] });
    expect(await adminSql`select 1 from public.tasks where list_id = ${hidden}`).toHaveLength(0);
  });

  it("a list deleted and re-created, then ops on a task the delete took with it: answered as on the tombstone, as right afterwards", async () => {
    const alice = await createTestUser();
    const [list, edited, deleted] = [randomUUID(), randomUUID(), randomUUID()];
    const created = await pushOk(alice, { ops: [upsert("lists", list, { title: "L" }),
      upsert("tasks", edited, { list_id: list, title: "t" }), upsert("tasks", deleted, { list_id: list, title: "t" })] });
    const [listVersion, editedVersion, deletedVersion] = created.results.map((r) => r.record!.version);
    const start = await pullAll(alice);
    const later = () => [upsert("tasks", edited, { title: "edit" }, editedVersion), remove("tasks", deleted, deletedVersion)];
    const body = await pushOk(alice, { ops: [remove("lists", list, listVersion), upsert("lists", list, { title: "L again" }), ...later()] });
    expect(body.results.map((r) => [r.status, r.error?.code, r.record?.deleted])).toEqual([
      ["applied", undefined, false], ["applied", undefined, false], ["conflict", undefined, true], ["applied", undefined, true]]);
    expect(body.results[2].conflicting_fields).toEqual(["*"]);
    const afterwards = await pushOk(alice, { ops: [upsert("lists", randomUUID(), { title: "other" }), upsert("lists", randomUUID(), { title: "other" }), ...later()] });
    expect(body.results.slice(2).map(answer)).toEqual(afterwards.results.slice(2).map(answer));
    // Each answer carries the record the next pull lists.
    const pulled = new Map((await pullAll(alice, start.cursor)).changes.map((c) => [c.id, c]));
    for (const result of body.results.slice(2)) expect(result.record).toEqual(pulled.get(result.record!.id));
  });

  it("a list deleted and re-created, then ops the planner answers without writing on tasks the delete took with it: answered with the tombstone, as right afterwards", async () => {
    const alice = await createTestUser();
    const [list, createdTwice, invalid, again] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const resent = upsert("tasks", again, { list_id: list, title: "t" });
    const created = await pushOk(alice, { ops: [upsert("lists", list, { title: "L" }),
      upsert("tasks", createdTwice, { list_id: list, title: "t" }), upsert("tasks", invalid, { list_id: list, title: "t" }), resent] });
    const [listVersion, , invalidVersion] = created.results.map((r) => r.record!.version);
    const start = await pullAll(alice);
    // A create over an id the list's task has (conflict), an edit the table refuses (rejected), an op sent again (duplicate).
    const later = () => [upsert("tasks", createdTwice, { list_id: list, title: "again" }), upsert("tasks", invalid, { title: "" }, invalidVersion), resent];
    const body = await pushOk(alice, { ops: [remove("lists", list, listVersion), upsert("lists", list, { title: "L again" }), ...later()] });
    expect(body.results.map((r) => [r.status, r.record?.deleted])).toEqual([["applied", false], ["applied", false], ["conflict", true], ["conflict", true], ["duplicate", true]]);
    const afterwards = await pushOk(alice, { ops: [upsert("lists", randomUUID(), { title: "other" }), upsert("lists", randomUUID(), { title: "other" }), ...later()] });
    expect(body.results.slice(2).map(answer)).toEqual(afterwards.results.slice(2).map(answer));
    const pulled = new Map((await pullAll(alice, start.cursor)).changes.map((c) => [c.id, c]));
    for (const result of body.results.slice(2)) expect(result.record).toEqual(pulled.get(result.record!.id));
  });
});

describe("POST /v1/sync/batch: the database's live-records quota, reached while the push waited", () => {
  it("the user's own Data API insert takes the last free record while their push of a create waits: that op QUOTA_EXCEEDED, as sent afterwards", async () => {
    const user = await createTestUser();
    // One record below the quota (set by the owner, exempt), so the push plans its create as applied.
    await adminSql`insert into app_private.sync_usage (user_id, live_records) values (${user.userId}, ${MAX_LIVE_RECORDS_PER_USER - 1})
                   on conflict (user_id) do update set live_records = excluded.live_records`;
    const id = randomUUID();
    const [list] = await adminSql<{ version: number }[]>`select version::int from app_private.sync_records where collection = 'lists' and id = ${user.userId}`;
    const raced = await racing(user, (tx) => tx`insert into public.tasks (list_id, title) values (${user.userId}, 'from supabase-js')`,
      () => pushOk(user, { ops: [upsert("tasks", id, { list_id: user.userId, title: "from the device" }), upsert("lists", user.userId, { title: "Renamed" }, list.version)] }));
    expect(raced.results[0]).toEqual({ op_id: raced.results[0].op_id, status: "rejected", error: { code: "QUOTA_EXCEEDED", message: `at most ${MAX_LIVE_RECORDS_PER_USER} live records per user; delete some first` } });
    // The rest of the batch is written: one op over the quota never holds back the others.
    expect(raced.results[1]).toMatchObject({ status: "applied", record: { data: { title: "Renamed" } } });
    const [usage] = await adminSql<{ live_records: number }[]>`select live_records from app_private.sync_usage where user_id = ${user.userId}`;
    expect(usage.live_records).toBe(MAX_LIVE_RECORDS_PER_USER);
    const [stored] = await adminSql`select count(*)::int as n from public.tasks where id = ${id}`;
    expect(stored.n).toBe(0);
    const afterwards = await pushOk(user, { ops: [upsert("tasks", id, { list_id: user.userId, title: "from the device" })] });
    expect(answer(raced.results[0])).toEqual(answer(afterwards.results[0]));
  });
});
