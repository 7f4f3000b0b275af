// The live-records usage rows (app_private.sync_usage, one per user) are taken in user_id order
// (migration 20261128002600_usage_rows_locked_in_user_order, docs/sync.md "Limits and their
// errors"): two editors of one list who each create a task and delete one of the other's, at the
// same moment, no longer deadlock (each push counted its own create, then the other's delete: the
// loser stalled deadlock_timeout and answered 503); neither do two single Data API statements
// that each move one of the other's tasks, nor two owners deleting their lists holding each
// other's tasks (migration 20261128003800_scope_delete_locks_cascaded_usage), nor a member's
// removal or leave, which passes their rows to the owner (20261128005700), nor such a leave and a
// transaction writing those rows and creating its own (20261128006800). A deadlock that
// still happens (a transaction of several statements, below) costs the push one retry, not a 503.
// Every interleaving is made with a held transaction (held-transactions.ts), not by luck.
import { randomUUID } from "node:crypto";
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { syncBatchResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { adminSql, type ApiResponse, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { requestLogLine } from "../support/request-log.ts";
import { type ProbeStack, startProbeStack } from "../support/probe-stack.ts";
import { asUser, type Op, push, pushOk, remove, share, upsert } from "../support/shared-lists.ts";

async function usage(user: TestUser): Promise<number> {
  const [row] = await adminSql<{ n: number }[]>`select coalesce((select live_records from app_private.sync_usage where user_id = ${user.userId}), 0) as n`;
  return row.n;
}

/** The push's log line says whether it was run again after a deadlock. */
async function deadlockRetried(response: ApiResponse): Promise<boolean> {
  return (await requestLogLine(stack.logFile, response.headers.get("x-request-id")!)).deadlock_retried === true;
}

/**
 * Alice's list shared with Bob (editor), one task of each in it, with its version. Alice's user id
 * is the lower of the two: the order in which usage rows are taken.
 */
async function aTaskEach() {
  const [alice, bob] = await Promise.all([randomUUID(), randomUUID()].sort().map((userId) => createTestUser({ userId })));
  const list = randomUUID();
  await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" })] });
  await share(alice, list, bob, "editor");
  const task = async (user: TestUser) => {
    const id = randomUUID();
    const { results: [result] } = await pushOk(user, { ops: [upsert("tasks", id, { list_id: list, title: `${user.email}'s` })] });
    return { id, version: result.record!.version };
  };
  return { alice, bob, list, aliceTask: await task(alice), bobTask: await task(bob) };
}

/**
 * A transaction taking two users' usage rows as every writer does, in user_id order (`first` the
 * lower id): it holds the first; `afterOneWaiter`, once a write waits for it, takes the second,
 * then commits. A deadlock is the write's to find (its deadlock_timeout, 1 s), never this one's.
 */
async function takingUsageRows(first: string, second: string, db?: postgres.Sql) {
  let firstHeld!: () => void;
  const firstIsHeld = new Promise<void>((resolve) => (firstHeld = resolve));
  let takeSecond!: () => void;
  const secondsTurn = new Promise<void>((resolve) => (takeSecond = resolve));
  const held = holdTransaction(async (tx) => {
    await tx`set local deadlock_timeout = '1min'`;
    await tx`select 1 from app_private.sync_usage where user_id = ${first} for update`;
    firstHeld();
    await secondsTurn;
    await tx`select 1 from app_private.sync_usage where user_id = ${second} for update`;
  }, { db });
  const pid = await held.pid;
  await firstIsHeld;
  return {
    async afterOneWaiter() {
      await waitersOf(pid, 1);
      takeSecond();
      await Promise.race([held.ran, held.done]);
      held.commit();
      await held.done;
    },
  };
}

describe("usage rows are taken in user_id order", () => {
  for (const order of ["create, then delete", "delete, then create"]) {
    it(`two editors each creating a task and deleting one of the other's (${order}) at the same moment: both applied, no deadlock`, async () => {
      const { alice, bob, list, aliceTask, bobTask } = await aTaskEach();
      const before = [await usage(alice), await usage(bob)];
      const batch = (other: { id: string; version: number }) => {
        const ops = [upsert("tasks", randomUUID(), { list_id: list, title: "new" }), remove("tasks", other.id, other.version)];
        return { ops: order === "create, then delete" ? ops : ops.reverse() };
      };
      // The deletes' bookkeeping (the deleted tasks' sync state) waits for this transaction: each
      // push waits there once it has counted its create, as two pushes landing together may.
      const held = holdTransaction((tx) => tx`
        select 1 from app_private.sync_records where collection = 'tasks' and id in (${aliceTask.id}, ${bobTask.id}) for update`);
      await held.ran;
      const pushes = Promise.all([push(alice, batch(bobTask)), push(bob, batch(aliceTask))]);
      await waitersOf(await held.pid, 2);
      held.commit();
      await held.done;

      const responses = await pushes;
      for (const response of responses) {
        expect(response.status, response.text).toBe(200);
        expect(syncBatchResponseSchema.parse(response.body).results.map((r) => r.status)).toEqual(["applied", "applied"]);
        expect(await deadlockRetried(response)).toBe(false);
      }
      expect([await usage(alice), await usage(bob)]).toEqual(before); // each: one created, one of theirs deleted
    });
  }

  const statements: { name: string; write: (users: Awaited<ReturnType<typeof aTaskEach>>) => Promise<unknown>; rows: number; usage: [number, number] }[] = [
    // Before, a move took the creator's usage row (Bob's, the higher id), then the mover's; a
    // delete, its creators' in the order of a hash join.
    { name: "Alice moves Bob's task into her personal list", rows: 1, usage: [+1, -1],
      write: ({ alice, bobTask }) => asUser(alice, (tx) => tx`update public.tasks set list_id = ${alice.userId} where id = ${bobTask.id}`) },
    { name: "Alice deletes her task and Bob's", rows: 2, usage: [-1, -1],
      write: ({ alice, aliceTask, bobTask }) => asUser(alice, (tx) => tx`delete from public.tasks where id in (${aliceTask.id}, ${bobTask.id})`) },
    // A member's loss of the list passes his task to its owner (migration 20261128005700).
    { name: "Alice removes Bob from her list, his task passing to her", rows: 1, usage: [+1, -1],
      write: ({ alice, bob, list }) => asUser(alice, (tx) => tx`delete from public.list_members where list_id = ${list} and user_id = ${bob.userId}`) },
    { name: "Bob leaves Alice's list, his task passing to her", rows: 1, usage: [+1, -1],
      write: ({ bob, list }) => asUser(bob, (tx) => tx`delete from public.list_members where list_id = ${list} and user_id = ${bob.userId}`) },
  ];
  for (const { name, write, rows, usage: change } of statements) {
    it(`one Data API statement that changes two users' usage (${name}) never crosses a transaction taking them in user_id order`, async () => {
      const users = await aTaskEach();
      const { alice, bob } = users;
      const before = [await usage(alice), await usage(bob)];
      const taker = await takingUsageRows(alice.userId, bob.userId);
      const written = write(users);
      await taker.afterOneWaiter(); // the statement waits for Alice's row

      expect(await written).toMatchObject({ count: rows });
      expect([await usage(alice), await usage(bob)]).toEqual([before[0] + change[0], before[1] + change[1]]);
    });
  }

  it("two owners each deleting their list (one Data API statement each), in which the other has tasks, at the same moment: both deleted, no deadlock", async () => {
    // Before, a list's delete locked its creator's usage row in its own sync trigger, then its
    // tasks' creators' in the trigger of its cascade's statement (which runs after it): Alice's
    // took her row, then Bob's; Bob's, his, then hers (40P01, "while locking tuple … in relation
    // sync_usage").
    const [alice, bob] = await Promise.all([randomUUID(), randomUUID()].sort().map((userId) => createTestUser({ userId })));
    const lists = { alice: randomUUID(), bob: randomUUID() };
    await pushOk(alice, { ops: [upsert("lists", lists.alice, { title: "Alice's" })] });
    await pushOk(bob, { ops: [upsert("lists", lists.bob, { title: "Bob's" })] });
    await share(alice, lists.alice, bob, "editor");
    await share(bob, lists.bob, alice, "editor");
    await asUser(bob, (tx) => tx`insert into public.tasks (list_id, title) select ${lists.alice}, 'Bob''s ' || g from generate_series(1, 3) g`);
    await asUser(alice, (tx) => tx`insert into public.tasks (list_id, title) select ${lists.bob}, 'Alice''s ' || g from generate_series(1, 3) g`);
    const before = [await usage(alice), await usage(bob)];
    // The tasks' bookkeeping (their sync state) waits for this transaction: each delete waits
    // there once the list's own trigger has run, before the cascade's changes a usage.
    const held = holdTransaction((tx) => tx`
      select 1 from app_private.sync_records where collection = 'tasks' and scope_id in (${lists.alice}, ${lists.bob}) for update`);
    await held.ran;
    const deletes = Promise.allSettled([
      asUser(alice, (tx) => tx`delete from public.lists where id = ${lists.alice}`),
      asUser(bob, (tx) => tx`delete from public.lists where id = ${lists.bob}`),
    ]);
    await waitersOf(await held.pid, 2);
    held.commit();
    await held.done;

    const outcomes = (await deletes).map((r) => (r.status === "fulfilled" ? r.value.count : `${(r.reason as { code?: string }).code} ${String(r.reason)}`));
    expect(outcomes).toEqual([1, 1]);
    expect([await usage(alice), await usage(bob)]).toEqual([before[0] - 4, before[1] - 4]); // each: a list and 3 tasks
  });
});

describe("a member's loss of a list meets a transaction writing the rows it hands over", () => {
  // Bob leaves Alice's list while another transaction writes Bob's task there in its second
  // statement: the leave hands the task over, writing its sync state and both usage rows. Before
  // migration 20261128006800 the leave locked the usage rows, then the task's sync state: against
  // Alice's "edit, then create" it held her usage row while it waited for the sync state her edit
  // held, and her create then waited for her usage row (40P01 "while locking tuple … in relation
  // sync_usage"). It now takes the sync state first, as the edit's own statement does; a push
  // takes a usage row before its edits (its named rows, its creates, its announced usage rows,
  // then its edits): a leave holding the sync state while waiting for Bob's usage row would
  // deadlock with that instead, so it lets the sync state go, waits for the usage rows, and tries
  // again.
  type Users = Awaited<ReturnType<typeof aTaskEach>>;
  const cases: { name: string; as?: "alice"; first: (tx: postgres.TransactionSql, u: Users) => Promise<unknown>; then: (tx: postgres.TransactionSql, u: Users) => Promise<unknown>; usage: [number, number] }[] = [
    { name: "Alice edits his task, then creates one", as: "alice", usage: [+2, -1],
      first: (tx, { bobTask }) => tx`update public.tasks set title = 'edited' where id = ${bobTask.id}`,
      then: (tx, { alice }) => tx`insert into public.tasks (list_id, title) values (${alice.userId}, 'Alice''s new')` },
    { name: "Alice locks his task, creates one, then edits his (a push's order)", as: "alice", usage: [+2, -1],
      first: async (tx, { alice, bobTask }) => {
        await tx`select 1 from public.tasks where id = ${bobTask.id} for no key update`;
        await tx`insert into public.tasks (list_id, title) values (${alice.userId}, 'Alice''s new')`;
      },
      then: (tx, { bobTask }) => tx`update public.tasks set title = 'edited' where id = ${bobTask.id}` },
    // A push of a third member's that creates a task and deletes another of Bob's locks Bob's usage
    // row at its create (announced: app_private.lock_sync_usage), then edits Bob's task.
    { name: "a transaction holding his usage row, as a push announcing it does, then edits his task", usage: [+1, -1],
      first: (tx, { bob }) => tx`select 1 from app_private.sync_usage where user_id = ${bob.userId} for no key update`,
      then: (tx, { bobTask }) => tx`update public.tasks set title = 'edited' where id = ${bobTask.id}` },
  ];
  for (const { name, as, first, then, usage: change } of cases) {
    it(`Bob leaves while ${name}: both kept, no deadlock`, async () => {
      const users = await aTaskEach();
      const { alice, bob, list, bobTask } = users;
      const before = [await usage(alice), await usage(bob)];
      let firstDone!: () => void;
      const firstIsDone = new Promise<void>((resolve) => (firstDone = resolve));
      let thenTurn!: () => void;
      const thenIsTurn = new Promise<void>((resolve) => (thenTurn = resolve));
      const held = holdTransaction(async (tx) => {
        await first(tx, users);
        firstDone();
        await thenIsTurn;
        await then(tx, users);
      }, as ? { as: alice } : {});
      const pid = await held.pid;
      await firstIsDone;
      const leave = asUser(bob, (tx) => tx`delete from public.list_members where list_id = ${list} and user_id = ${bob.userId}`)
        .then((r) => r.count, (error: { code?: string }) => `${error.code} ${String(error)}`);
      await waitersOf(pid, 1); // the leave waits for that transaction
      thenTurn();
      await Promise.race([held.ran, held.done]);
      held.commit();
      const kept = await held.done.then(() => "committed", (error: { code?: string }) => `${error.code} ${String(error)}`);

      expect([kept, await leave]).toEqual(["committed", 1]);
      expect([await usage(alice), await usage(bob)]).toEqual([before[0] + change[0], before[1] + change[1]]);
      const [task] = await adminSql<{ title: string; created_by: string }[]>`
        select t.title, s.created_by from public.tasks t join app_private.sync_records s on s.collection = 'tasks' and s.id = t.id where t.id = ${bobTask.id}`;
      expect(task).toEqual({ title: "edited", created_by: alice.userId });
    });
  }
});

describe("a member's loss of a list meets a push that creates rows and adds one to that list", () => {
  // Alice's push creates a list (her usage row, at its first statement) and a task in her shared
  // list, while Bob leaves that list. The leave locks the list (FOR UPDATE), then hands Bob's rows
  // to Alice, waiting for her usage row; the push's task insert checks its foreign key (FOR KEY
  // SHARE on the list) only at its second statement: before the push took the scope rows it
  // writes into first, the two crossed (40P01; the leave waited first, so it was the one rolled
  // back: a 500 through the Data API). Here the push's task insert waits at the task's id (a
  // transaction holds a row with that id, rolled back later) while the leave starts.
  it("Bob leaves while Alice's push waits between its list's create and its task's: both done, no deadlock", async () => {
    const { alice, bob, list } = await aTaskEach();
    const task = randomUUID();
    const holder = holdTransaction((tx) => tx`insert into public.tasks (id, list_id, title) values (${task}, ${alice.userId}, 'holds the id')`);
    let leave: Promise<number | string> | undefined;
    let pushed: Promise<ApiResponse> | undefined;
    try {
      await holder.ran;
      const pid = await holder.pid;
      pushed = push(alice, { ops: [upsert("lists", randomUUID(), { title: "New" }), upsert("tasks", task, { list_id: list, title: "Alice's new" })] });
      await waitersOf(pid, 1); // the push waits at the task's id
      leave = asUser(bob, (tx) => tx`delete from public.list_members where list_id = ${list} and user_id = ${bob.userId}`)
        .then((r) => r.count, (error: { code?: string }) => `${error.code} ${String(error)}`);
      await waitersOf(pid, 2); // and the leave behind it
    } finally {
      holder.rollBack();
    }
    await holder.done;
    const response = await pushed!;
    expect(syncBatchResponseSchema.parse(response.body).results.map((r) => r.status)).toEqual(["applied", "applied"]);
    expect(await deadlockRetried(response)).toBe(false);
    expect(await leave).toBe(1);
  });
});

/**
 * A transaction holds `lowest` (the lower of two lists) FOR UPDATE while `purged`'s hand-over
 * queues for it, then `send` (a push touching both lists) behind them; then it lets go. Returns
 * the push's answer and how the hand-over ended. Every session ends whatever happens.
 */
async function behindPurge(lowest: string, purged: TestUser, send: () => Promise<ApiResponse>) {
  const held = holdTransaction((tx) => tx`select 1 from public.lists where id = ${lowest} for update`);
  let purge: Promise<string> | undefined;
  let pushed: Promise<ApiResponse> | undefined;
  try {
    await held.ran;
    const pid = await held.pid;
    purge = adminSql`select app_private.hand_over_lists(${purged.userId})`
      .then(() => "handed over", (error: { code?: string }) => `${error.code} ${String(error)}`);
    await waitersOf(pid, 1); // the hand-over waits for the lower list
    pushed = send();
    await waitersOf(pid, 2); // and the push behind it (before: holding the higher one)
  } finally {
    held.commit();
  }
  await held.done;
  return { response: await pushed!, purge: await purge! };
}

/** Both ops of the push applied without a deadlock retried, and the hand-over done. */
async function expectBothDone({ response, purge }: { response: ApiResponse; purge: string }) {
  expect(response.status, response.text).toBe(200);
  expect(syncBatchResponseSchema.parse(response.body).results.map((r) => r.status)).toEqual(["applied", "applied"]);
  expect(await deadlockRetried(response)).toBe(false);
  expect(purge).toBe("handed over");
}

describe("a push that changes a membership and writes into another list meets an account purge", () => {
  // Alice's push removes Bob from her list L2 and adds a task to her list L1 (L1's id the lower),
  // while Carol, a viewer of both, is purged: the purge's hand-over locks Carol's lists FOR UPDATE
  // in id order, L1 then L2. The push took its list locks in two statements, each in id order but
  // not together: L2 (the membership's list, FOR NO KEY UPDATE), then L1 (written into, FOR KEY
  // SHARE): holding L2, it waited for L1, which the hand-over held while it waited for L2 (40P01,
  // DBA review). It now takes every list lock of the batch in one pass in id order. Here a
  // transaction holds L1 while the hand-over queues for it, then the push behind it.
  it("the purge's hand-over and the push both done, no deadlock", async () => {
    const [alice, bob, carol] = await Promise.all([createTestUser(), createTestUser(), createTestUser()]);
    const [l1, l2] = [randomUUID(), randomUUID()].sort();
    await pushOk(alice, { ops: [upsert("lists", l1, { title: "L1" }), upsert("lists", l2, { title: "L2" })] });
    await share(alice, l1, carol, "viewer");
    await share(alice, l2, carol, "viewer");
    await share(alice, l2, bob, "viewer");
    const [membership] = await adminSql<{ id: string; version: number }[]>`
      select m.id::text, s.version::int from public.list_members m
        join app_private.sync_records s on s.collection = 'list_members' and s.id = m.id
       where m.list_id = ${l2} and m.user_id = ${bob.userId}`;
    await expectBothDone(await behindPurge(l1, carol,
      () => push(alice, { ops: [remove("list_members", membership.id, membership.version), upsert("tasks", randomUUID(), { list_id: l1, title: "Alice's new" })] })));
  });
});

describe("a viewer's push that leaves a list and writes into or leaves another meets an account purge", () => {
  // Dan, a viewer of LA and an editor of LB (LA's id the lower), leaves LA and, in the same push,
  // adds a task to LB or leaves LB too, while Carol, a viewer of both, is purged: the hand-over
  // locks her lists FOR UPDATE in id order, LA then LB. The push's locks skipped LA (the list's
  // policies refuse a viewer its FOR NO KEY UPDATE) and took LB (FOR KEY SHARE to write into it,
  // FOR NO KEY UPDATE to leave it); the leave's delete policy then locked LA FOR UPDATE, out of
  // order: holding LB, it waited for LA, which the hand-over held while it waited for LB (40P01,
  // DBA review). Every batch that changes a membership now takes its lists in one ordered pass,
  // which locks a list its policies refuse FOR UPDATE by membership, in its place. Here a
  // transaction holds LA while the hand-over queues for it, then the push.
  const andThen = {
    "adds a task to LB": (lb: string, _: { id: string; version: number }) => upsert("tasks", randomUUID(), { list_id: lb, title: "Dan's new" }),
    "leaves LB": (_: string, inLb: { id: string; version: number }) => remove("list_members", inLb.id, inLb.version),
  };
  for (const [second, op] of Object.entries(andThen)) {
    it(`Dan leaves LA and ${second}: the purge's hand-over and the push both done, no deadlock`, async () => {
      const [alice, carol, dan] = await Promise.all([createTestUser(), createTestUser(), createTestUser()]);
      const [la, lb] = [randomUUID(), randomUUID()].sort();
      await pushOk(alice, { ops: [upsert("lists", la, { title: "LA" }), upsert("lists", lb, { title: "LB" })] });
      await share(alice, la, carol, "viewer");
      await share(alice, lb, carol, "viewer");
      await share(alice, la, dan, "viewer");
      await share(alice, lb, dan, "editor");
      const memberships = await adminSql<{ list_id: string; id: string; version: number }[]>`
        select m.list_id::text, m.id::text, s.version::int from public.list_members m
          join app_private.sync_records s on s.collection = 'list_members' and s.id = m.id
         where m.user_id = ${dan.userId} and m.list_id in (${la}, ${lb})`;
      const [inLa, inLb] = [la, lb].map((list) => memberships.find((m) => m.list_id === list)!);
      await expectBothDone(await behindPurge(la, carol, () => push(dan, { ops: [remove("list_members", inLa.id, inLa.version), op(lb, inLb)] })));
    });
  }
});

describe("a push whose moves of two users' tasks take several statements meets a transaction taking their usage rows in user_id order", () => {
  // Xavier moves a task of Alice's and one of Bob's (Alice's user id the lower) from his list L1,
  // where they are editors, to his list L2, where they are not: each task passes to him, a change
  // of three users' usage. Unannounced, each of the push's statements locked its own rows'
  // creators' usage rows: Bob's task's statement ran first and took Bob's, the next one waited for
  // Alice's, which a transaction taking them in user_id order held while it waited for Bob's
  // (40P01; the push, run once more, answered after deadlock_timeout). An edit group runs as one
  // statement per set of changed columns when a trigger watches one of its columns (here UPDATE
  // OF notes), and its rows one by one when the database refuses one of them. Both are now
  // announced: the first statement to change a usage locks every row named, in order.
  let probe: ProbeStack;
  beforeAll(async () => {
    probe = await startProbeStack("usage_statements", [
      `create function public.tidesync_test_notes_edited() returns trigger language plpgsql set search_path = '' as $$ begin return new; end $$`,
      `create trigger tidesync_test_notes_edited after update of notes on public.tasks for each row execute function public.tidesync_test_notes_edited()`,
      // A refusal only the database knows (the push checks a title's length itself).
      `alter table public.tasks add constraint tidesync_test_title_refused check (title <> 'refused')`,
    ]);
  }, 120_000);
  afterAll(async () => {
    await probe?.stop();
  });

  type Task = { id: string; version: number };
  const cases: { name: string; ops: (to: string, tasks: { alice: Task; bob: Task; xavier: Task }) => Op[]; statuses: string[] }[] = [
    { name: "an edit group split by a trigger on UPDATE OF notes: Bob's task moved, Alice's moved with a note", statuses: ["applied", "applied"],
      ops: (to, { alice, bob }) => [upsert("tasks", bob.id, { list_id: to }, bob.version), upsert("tasks", alice.id, { list_id: to, notes: "moved" }, alice.version)] },
    { name: "an edit group retried row by row: Bob's task moved, Alice's moved, and a title only the table refuses", statuses: ["applied", "applied", "rejected"],
      ops: (to, { alice, bob, xavier }) => [upsert("tasks", bob.id, { list_id: to }, bob.version), upsert("tasks", alice.id, { list_id: to }, alice.version),
                                           upsert("tasks", xavier.id, { title: "refused" }, xavier.version)] },
  ];
  for (const { name, ops, statuses } of cases) {
    it(`${name}: applied, no deadlock`, async () => {
      const [alice, bob] = (await Promise.all([probe.newUser(), probe.newUser()])).sort((a, b) => (a.userId < b.userId ? -1 : 1));
      const xavier = await probe.newUser();
      const [l1, l2] = [randomUUID(), randomUUID()];
      await pushOk(xavier.token, { ops: [upsert("lists", l1, { title: "L1" }), upsert("lists", l2, { title: "L2" })] }, probe.apiUrl);
      await probe.admin`insert into public.list_members (list_id, user_id, role) values (${l1}, ${alice.userId}, 'editor'), (${l1}, ${bob.userId}, 'editor')`;
      // Bob's task's id the lower too: first in the group, whatever orders its rows.
      const [bobsId, alicesId] = [randomUUID(), randomUUID()].sort();
      const task = async (user: { token: string }, id: string): Promise<Task> => {
        const { results: [result] } = await pushOk(user.token, { ops: [upsert("tasks", id, { list_id: l1, title: "mine" })] }, probe.apiUrl);
        return { id, version: result.record!.version };
      };
      const tasks = { alice: await task(alice, alicesId), bob: await task(bob, bobsId), xavier: await task(xavier, randomUUID()) };

      const taker = await takingUsageRows(alice.userId, bob.userId, probe.admin);
      const pushed = push(xavier.token, { ops: ops(l2, tasks) }, probe.apiUrl);
      await taker.afterOneWaiter(); // the push waits for Alice's row

      const response = await pushed;
      expect(response.status, response.text).toBe(200);
      expect(syncBatchResponseSchema.parse(response.body).results.map((r) => r.status)).toEqual(statuses);
      expect((await requestLogLine(probe.logFile, response.headers.get("x-request-id")!)).deadlock_retried).not.toBe(true);
      // Both tasks in L2, in Xavier's usage now (neither creator is a member of L2).
      const moved = await probe.admin<{ id: string; list_id: string; created_by: string }[]>`
        select t.id::text, t.list_id::text, s.created_by::text from public.tasks t
          join app_private.sync_records s on s.collection = 'tasks' and s.id = t.id
         where t.id in (${tasks.alice.id}, ${tasks.bob.id}) order by t.id`;
      expect(moved).toEqual([tasks.bob.id, tasks.alice.id].map((id) => ({ id, list_id: l2, created_by: xavier.userId })));
    });
  }
});

describe("app_private.lock_scopes_written_into (the push's first lock of the lists it writes into)", () => {
  const forUpdate = (id: string) =>
    adminSql.begin((tx) => tx`select 1 from public.lists where id = ${id} for update nowait`).then(() => "free", (error: { code?: string }) => error.code);

  it("locks the caller's lists FOR KEY SHARE until their transaction ends, and nothing of a list they are no member of", async () => {
    const { bob, list } = await aTaskEach();
    const carol = await createTestUser();
    const locks = holdTransaction(
      (tx) => tx`select app_private.lock_scopes_written_into('public.lists', 'public.list_members', ${[list, bob.userId, carol.userId]}::uuid[])`,
      { as: bob },
    );
    await locks.ran;
    try {
      // Alice's list Bob is a member of, and his personal list: held; Carol's list: free.
      expect([await forUpdate(list), await forUpdate(bob.userId), await forUpdate(carol.userId)]).toEqual(["55P03", "55P03", "free"]);
    } finally {
      locks.commit();
    }
    await locks.done;
    expect(await forUpdate(list)).toBe("free");
  });

  it("locks nothing for a signed-out session's claims (a token still within its exp), not even their own list", async () => {
    const { bob, list } = await aTaskEach();
    await adminSql`delete from auth.sessions where id = ${bob.sessionId}`;
    const locks = holdTransaction(
      (tx) => tx`select app_private.lock_scopes_written_into('public.lists', 'public.list_members', ${[list, bob.userId]}::uuid[])`,
      { as: bob },
    );
    await locks.ran;
    try {
      expect([await forUpdate(list), await forUpdate(bob.userId)]).toEqual(["free", "free"]);
    } finally {
      locks.commit();
    }
    await locks.done;
  });

  it("lock_scopes_in_order (a batch changing lists and writing into lists) locks the lists it changes and writes into, and nothing of a list the caller is no member of", async () => {
    const { bob, list } = await aTaskEach();
    const carol = await createTestUser();
    let answered: string[] = [];
    const locks = holdTransaction(async (tx) => {
      answered = (await tx<{ id: string }[]>`
        select l.id::text from app_private.lock_scopes_in_order('public.lists', 'public.list_members',
          ${[bob.userId, carol.userId]}::uuid[], ${[list, carol.userId]}::uuid[], '{}'::uuid[]) as l(id)`).map((r) => r.id);
    }, { as: bob });
    await locks.ran;
    try {
      expect(answered).toEqual([bob.userId]); // the rows it may change
      expect([await forUpdate(list), await forUpdate(bob.userId), await forUpdate(carol.userId)]).toEqual(["55P03", "55P03", "free"]);
    } finally {
      locks.commit();
    }
    await locks.done;
  });
});

describe("a push that meets a deadlock", () => {
  /**
   * Bob's batch edits a task of his (its id below every other: the push locks the rows it names
   * in id order) and deletes Alice's, while a transaction holds Alice's usage row; once Bob's
   * delete waits for that row, the transaction asks for Alice's task, which Bob's push holds: a
   * deadlock, which Postgres breaks by rolling Bob's push back (it waited first: its
   * deadlock_timeout ends first). `then` runs in that transaction once Bob's push waits for it
   * again (for Alice's task), before it commits.
   */
  async function bobPushesThroughADeadlock(then: (tx: postgres.TransactionSql, bobsTask: string) => Promise<unknown> = async () => {}) {
    const { alice, bob, list, aliceTask } = await aTaskEach();
    const bobsTask = randomUUID().replace(/^.{8}/, "00000000");
    const { results: [created] } = await pushOk(bob, { ops: [upsert("tasks", bobsTask, { list_id: list, title: "Bob's first" })] });
    const before = await usage(alice);
    let usageHeld!: () => void;
    const usageIsHeld = new Promise<void>((resolve) => (usageHeld = resolve));
    let deadlock!: () => void;
    const closeTheCycle = new Promise<void>((resolve) => (deadlock = resolve));
    let taskHeld!: () => void;
    const taskIsHeld = new Promise<void>((resolve) => (taskHeld = resolve));
    let pushed!: Promise<ApiResponse>;
    const held = holdTransaction(async (tx) => {
      await tx`set local deadlock_timeout = '1min'`; // never this transaction's own check
      await tx`select 1 from app_private.sync_usage where user_id = ${alice.userId} for update`;
      usageHeld();
      await closeTheCycle;
      await tx`select 1 from public.tasks where id = ${aliceTask.id} for update`;
      taskHeld();
      const [{ pid }] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
      await Promise.race([waitersOf(pid, 1), pushed]); // (answered already when it is not run again)
      await then(tx, bobsTask);
    });
    const pid = await held.pid;
    await usageIsHeld;
    pushed = push(bob, { ops: [upsert("tasks", bobsTask, { title: "edited" }, created.record!.version), remove("tasks", aliceTask.id, aliceTask.version)] });
    await waitersOf(pid, 1);
    deadlock();
    await taskIsHeld; // Bob's push was rolled back, its locks with it
    await Promise.race([held.ran, held.done]);
    held.commit();
    await held.done;
    return { response: await pushed, alice, before };
  }

  it("is run once more in a new transaction and applied", async () => {
    const { response, alice, before } = await bobPushesThroughADeadlock();
    expect(response.status, response.text).toBe(200);
    expect(syncBatchResponseSchema.parse(response.body).results.map((r) => r.status)).toEqual(["applied", "applied"]);
    expect(await deadlockRetried(response)).toBe(true);
    expect(await usage(alice)).toBe(before - 1);
  });

  it("only once: a second deadlock answers 503 UNAVAILABLE, retryable, and nothing of the batch is kept", async () => {
    // Bob's second push holds his task and waits for Alice's: asked for his, a second deadlock.
    const { response, alice, before } = await bobPushesThroughADeadlock((tx, bobsTask) => tx`select 1 from public.tasks where id = ${bobsTask} for update`);
    expect(response.status, response.text).toBe(503);
    expect(response.body.error).toMatchObject({ code: "UNAVAILABLE", retryable: true });
    expect(await deadlockRetried(response)).toBe(true);
    expect(await usage(alice)).toBe(before);
  });
});
