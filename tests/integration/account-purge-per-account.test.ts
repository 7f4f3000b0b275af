// The account purge as pg_cron runs it (the DO block of `app_private.purge_run_command()`,
// as the owner role) commits after each account: while a later account of the
// same run is still in progress (here it waits for a write of that user's own
// session, held open by the test), what the earlier accounts did is done and
// nothing of theirs is held. A co-member pushes into the list the run handed
// over to them, a user whose account the run refused (Storage objects left)
// cancels, and every user's pulls deliver new writes; and a push that meets
// the purge in the opposite lock order (a deadlock) still answers 200.
// Until migration 20261128003300 the run was one transaction: the push and
// the cancel answered 503 after 8 s and pulls delivered nothing new until the
// whole run ended.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { changesResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { adminSql, call, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { runPurgeBlock } from "../support/account-purge.ts";
import { type HeldTransaction, holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { pullAll, push, pushOk, remove, share, upsert } from "../support/shared-lists.ts";

/** The owner (hosted `postgres`, not a superuser): what pg_cron runs the purge as. */
const ownerSql = postgres(stack.ownerDbUrl, { max: 2, onnotice: () => {} });
afterAll(async () => {
  await ownerSql.end({ timeout: 5 });
});

/** pg_cron's command, at `now` (a date long past: other files' requests, due now, are not taken). */
async function runPurge(now: Date, batch: number): Promise<void> {
  await runPurgeBlock(ownerSql, now, batch);
}

/** Deletion requests of `users`, due long ago one second apart in this order; returns the last one's date. */
async function dueInOrder(...users: TestUser[]): Promise<Date> {
  const first = Date.UTC(2001, 0, 1, 0, 0, Math.floor(Math.random() * 80_000));
  for (const [i, user] of users.entries()) {
    const due = new Date(first + i * 1000);
    await adminSql`insert into app_private.account_deletion_requests (user_id, requested_at, scheduled_for)
      values (${user.userId}, ${due}::timestamptz - interval '7 days', ${due})`;
  }
  return new Date(first + (users.length - 1) * 1000);
}

/** A write of `user`'s own session in flight (a list created, not committed): the purge's delete of the user waits for it. */
async function writeInFlight(user: TestUser): Promise<HeldTransaction> {
  const held = holdTransaction((tx) => tx`insert into public.lists (id, title) values (${randomUUID()}, 'in flight')`, { as: user });
  await held.ran;
  return held;
}

async function userExists(user: TestUser): Promise<boolean> {
  const rows = await adminSql`select 1 from auth.users where id = ${user.userId}`;
  return rows.length === 1;
}

/** Pulls from `cursor` until `id` is among the changes (a pull stops below the oldest open transaction of the cluster: other files' end soon). */
async function pullsUntilSeen(user: TestUser, cursor: string, id: string): Promise<boolean> {
  for (let i = 0; i < 150; i++) {
    const response = await call(`/v1/sync/changes?cursor=${encodeURIComponent(cursor)}&limit=1000`, { token: user.token });
    expect(response.status, response.text).toBe(200);
    if (changesResponseSchema.parse(response.body).changes.some((c) => c.id === id)) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

describe("the account purge commits after each account", () => {
  it("while a later account is in progress, a co-member pushes into the list handed over to them and every user's pulls go on", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const xavier = await createTestUser();
    const carol = await createTestUser();
    const list = randomUUID();
    await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" })] });
    await share(alice, list, bob, "editor");
    const { cursor } = await pullAll(carol);
    const last = await dueInOrder(alice, xavier);

    // Alice's account waits for a write of hers; meanwhile Carol (no part in
    // the purge) writes: after the run has begun, before its later account.
    const alicesWrite = await writeInFlight(alice);
    const run = runPurge(last, 2);
    await waitersOf(await alicesWrite.pid);
    const carolsTask = randomUUID();
    await pushOk(carol, { ops: [upsert("tasks", carolsTask, { list_id: carol.userId, title: "written during the purge" })] });
    // Xavier's account, next, waits for a write of his, held until the end.
    const xaviersWrite = await writeInFlight(xavier);
    alicesWrite.commit();
    await alicesWrite.done;
    await waitersOf(await xaviersWrite.pid);

    try {
      // Alice's account is gone, her list Bob's, as everyone sees it.
      expect.soft(await userExists(alice)).toBe(false);
      const [bobs] = await adminSql`select role from public.list_members where list_id = ${list} and user_id = ${bob.userId}`;
      expect.soft(bobs.role).toBe("owner");
      const bobsPush = await push(bob, { ops: [upsert("tasks", randomUUID(), { list_id: list, title: "Bob's, in his list now" })] });
      expect.soft(bobsPush.status, bobsPush.text).toBe(200);
      expect.soft(await pullsUntilSeen(carol, cursor, carolsTask), "Carol's other device pulls her task").toBe(true);
    } finally {
      xaviersWrite.commit();
      await xaviersWrite.done;
      await run;
    }
    expect(await userExists(xavier)).toBe(false);
  }, 120_000);

  it("a user whose account the run refused cancels while a later account is in progress", async () => {
    const alice = await createTestUser();
    const xavier = await createTestUser();
    const bucket = `purge-${randomUUID()}`;
    await adminSql`insert into storage.buckets (id, name) values (${bucket}, ${bucket})`;
    await adminSql`insert into storage.objects (bucket_id, name, owner_id) values (${bucket}, 'avatar.png', ${alice.userId})`;
    const last = await dueInOrder(alice, xavier);

    const xaviersWrite = await writeInFlight(xavier);
    const run = runPurge(last, 2);
    await waitersOf(await xaviersWrite.pid);
    try {
      const cancel = await call("/v1/users/me/deletion", { method: "DELETE", token: alice.token });
      expect(cancel.status, cancel.text).toBe(204);
    } finally {
      xaviersWrite.commit();
      await xaviersWrite.done;
      await run;
    }
    expect(await userExists(alice)).toBe(true);
    expect(await adminSql`select 1 from app_private.account_deletion_requests where user_id = ${alice.userId}`).toEqual([]);
    expect(await userExists(xavier)).toBe(false);
  }, 120_000);

  for (const op of ["delete", "edit"] as const) {
    it(`a co-member's push [${op} the owner's task, create one in the list] meets the purge holding the list: 200, and the account goes or stays whole`, async () => {
      const alice = await createTestUser();
      const bob = await createTestUser();
      const list = randomUUID();
      await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" })] });
      await share(alice, list, bob, "editor");
      const task = randomUUID();
      const { results: [written] } = await pushOk(alice, { ops: [upsert("tasks", task, { list_id: list, title: "Alice's" })] });
      const [token] = await adminSql`insert into auth.refresh_tokens (token, user_id, revoked, created_at, updated_at, session_id)
        values (${randomUUID()}, ${alice.userId}, false, now(), now(), ${alice.sessionId}) returning id`;
      const last = await dueInOrder(alice);

      // Supabase Auth refreshing Alice's session: the purge, past the hand-over (the list locked), waits for it.
      const refresh = holdTransaction((tx) => tx`select 1 from auth.refresh_tokens where id = ${token.id} for update`);
      await refresh.ran;
      const run = runPurge(last, 1);
      await waitersOf(await refresh.pid);
      // Bob's push takes Alice's task, then waits for the list behind the purge.
      const pushing = push(bob, {
        ops: [op === "delete" ? remove("tasks", task, written.record!.version) : upsert("tasks", task, { title: "Bob's edit" }, written.record!.version),
              upsert("tasks", randomUUID(), { list_id: list, title: "Bob's" })],
      });
      await waitersOf(await refresh.pid, 2);
      refresh.commit();
      await refresh.done;
      await run;

      const answer = await pushing;
      expect(answer.status, answer.text).toBe(200);
      // The purge lost the deadlock (that account's attempt only: retried next run) or the push did (retried at once).
      const requestLeft = (await adminSql`select 1 from app_private.account_deletion_requests where user_id = ${alice.userId}`).length === 1;
      expect(await userExists(alice)).toBe(requestLeft);
    }, 120_000);
  }
});

/** pg_cron's command on a connection of its own, with `statement_timeout` set for it as Supabase sets one for every role (2 min for postgres). */
async function runPurgeWithin(statementTimeout: string, now: Date, batch: number): Promise<void> {
  const conn = await ownerSql.reserve();
  try {
    await conn`select set_config('statement_timeout', ${statementTimeout}, false)`;
    await runPurgeBlock(conn, now, batch);
  } finally {
    await conn`reset statement_timeout`.catch(() => {});
    conn.release();
  }
}

describe("one account that waits does not stop the purge for the accounts due after it", () => {
  it("an account waiting on a lock is given up after lock_timeout, and the run purges the next one", async () => {
    const xavier = await createTestUser();
    const yann = await createTestUser();
    const last = await dueInOrder(xavier, yann);
    const xaviersWrite = await writeInFlight(xavier);
    try {
      // Until migration 20261128004000 the run waited for Xavier's write for as long as it lasted (here, until this bound cancelled it).
      await runPurgeWithin("60s", last, 2);
      expect(await userExists(yann)).toBe(false);
      expect(await userExists(xavier)).toBe(true);
    } finally {
      xaviersWrite.commit();
      await xaviersWrite.done;
    }
    await runPurge(last, 2);
    expect(await userExists(xavier)).toBe(false);
  }, 120_000);

  it("a run cancelled by statement_timeout during one account tries the others first the next time", async () => {
    const xavier = await createTestUser();
    const yann = await createTestUser();
    const last = await dueInOrder(xavier, yann);
    // Xavier's account waits longer than the run may last (statement_timeout spans the whole CALL, below lock_timeout).
    const xaviersWrite = await writeInFlight(xavier);
    try {
      await expect(runPurgeWithin("3s", last, 2)).rejects.toMatchObject({ code: "57014" });
      expect(await userExists(yann), "the run ended during Xavier's account, the first due").toBe(true);
      // Until migration 20261128004000 every run took Xavier first again and Yann was never reached.
      await expect(runPurgeWithin("3s", last, 2)).rejects.toMatchObject({ code: "57014" });
      expect(await userExists(yann), "the next run took Yann first").toBe(false);
      expect(await userExists(xavier)).toBe(true);
    } finally {
      xaviersWrite.commit();
      await xaviersWrite.done;
    }
    await runPurge(last, 2);
    expect(await userExists(xavier)).toBe(false);
  }, 120_000);
});
