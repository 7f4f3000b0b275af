// An owner deletes a list while co-owners demote one another or leave it: the
// changes must queue up behind one another, never deadlock (40P01). A list's
// delete locks the lists row, then its cascade the list's memberships; a
// membership change used to lock its membership rows first and the list only
// after (keep_a_list_owner, track_sync_access): the two orders crossed.
// Deterministic: a third session holds one membership row (or the push's
// task) while the change and the delete line up behind it, as the test sees
// (pg_blocking_pids); then it lets go. Through the Data API (role
// authenticated with the caller's claims, as PostgREST runs it) and through the
// real push.
import { randomUUID } from "node:crypto";
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { syncBatchResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { type HeldTransaction, holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { push, pushOk, share, upsert, remove } from "../support/shared-lists.ts";
import { syncState } from "../support/sync-records.ts";

/** A list created by the first of `roles`' users (its owner), shared with each other one in their role. */
async function listOf(roles: ("owner" | "editor" | "viewer")[]) {
  const users = await Promise.all(roles.map(() => createTestUser()));
  const list = randomUUID();
  await pushOk(users[0], { ops: [upsert("lists", list, { title: "L" })] });
  for (let i = 1; i < users.length; i++) await share(users[0], list, users[i], roles[i]);
  return { users, list };
}

async function membershipOf(list: string, user: TestUser): Promise<string> {
  const [row] = await adminSql<{ id: string }[]>`select id::text from public.list_members where list_id = ${list} and user_id = ${user.userId}`;
  return row.id;
}

const listExists = async (list: string) => (await adminSql`select 1 from public.lists where id = ${list}`).length === 1;

/** A session (as the superuser) that holds the row lock of `table`'s row `id` until commit(). */
async function holdRow(table: "list_members" | "tasks", id: string): Promise<HeldTransaction & { pidNow: number }> {
  const held = holdTransaction((tx) => tx`select 1 from ${tx(`public.${table}`)} where id = ${id} for no key update`);
  await held.ran;
  return { ...held, pidNow: await held.pid };
}

/** `statement` as `user` in a transaction that commits as soon as it has run (a PostgREST request). */
function asRequest(user: TestUser, statement: (tx: postgres.TransactionSql) => Promise<unknown>): HeldTransaction {
  const request = holdTransaction(statement, { as: user });
  request.commit();
  return request;
}

/**
 * `change` starts and waits behind `held`; then `remove` (the list's delete) starts and waits
 * too; then `held` lets go. Returns how each settled. Every session ends whatever happens.
 */
async function lineUp<T>(held: HeldTransaction & { pidNow: number }, change: () => Promise<T>, deleteList: () => HeldTransaction) {
  let changed: Promise<PromiseSettledResult<T>> | undefined;
  let deleted: HeldTransaction | undefined;
  try {
    changed = change().then((value) => ({ status: "fulfilled" as const, value }), (reason) => ({ status: "rejected" as const, reason }));
    await waitersOf(held.pidNow, 1);
    deleted = deleteList();
    await waitersOf(held.pidNow, 2);
  } finally {
    held.commit();
  }
  await held.done;
  return { changed: await changed!, deleted: await deleted!.done.then(() => "committed", (error: { code?: string }) => error.code) };
}

describe("co-owners change roles or leave while another owner deletes the list: they queue up", () => {
  // Repro A of the review: Alice demotes Bob and Dan in one statement while Carol deletes the
  // list and a third session holds one of the two membership rows (either one: whichever the
  // update reaches first, it must not hold a membership while it waits for the list).
  for (const heldOne of ["bob", "dan"] as const) {
    it(`Data API: a demotion of two owners (${heldOne}'s row held) and the list's delete both commit, one after the other`, async () => {
      const { users: [alice, bob, carol, dan], list } = await listOf(["owner", "owner", "owner", "owner"]);
      const held = await holdRow("list_members", await membershipOf(list, heldOne === "bob" ? bob : dan));
      const demote = asRequest(alice, (tx) =>
        tx`update public.list_members set role = 'editor' where list_id = ${list} and user_id in (${bob.userId}, ${dan.userId})`);
      const out = await lineUp(held, () => demote.done,
        () => asRequest(carol, (tx) => tx`delete from public.lists where id = ${list}`));
      expect(out.changed.status, String((out.changed as PromiseRejectedResult).reason)).toBe("fulfilled");
      expect(out.deleted).toBe("committed");
      expect(await listExists(list)).toBe(false);
    });
  }

  for (const leaver of ["owner", "editor", "viewer"] as const) {
    it(`Data API: ${leaver === "viewer" ? "a" : "an"} ${leaver} leaving (their row held) and the list's delete both commit, one after the other`, async () => {
      const { users: [alice, bob], list } = await listOf(["owner", leaver]);
      const held = await holdRow("list_members", await membershipOf(list, bob));
      const leave = asRequest(bob, (tx) => tx`delete from public.list_members where list_id = ${list} and user_id = ${bob.userId}`);
      const out = await lineUp(held, () => leave.done,
        () => asRequest(alice, (tx) => tx`delete from public.lists where id = ${list}`));
      expect(out.changed.status, String((out.changed as PromiseRejectedResult).reason)).toBe("fulfilled");
      expect(out.deleted).toBe("committed");
      expect(await listExists(list)).toBe(false);
    });
  }
});

describe("a push changing memberships while another owner deletes the list: no 503, they queue up", () => {
  // Repro B of the review: Alice's batch demotes her co-owner Bob and edits task T while a
  // session holds T (or Bob's membership); Carol deletes the list meanwhile.
  for (const heldRow of ["task", "membership"] as const) {
    it(`Alice's push (the ${heldRow} held) answers 200 and applies; Carol's delete then commits`, async () => {
      const { users: [alice, bob, carol], list } = await listOf(["owner", "owner", "owner"]);
      const task = randomUUID();
      const created = await pushOk(alice, { ops: [upsert("tasks", task, { list_id: list, title: "t" })] });
      const bobs = await membershipOf(list, bob);
      const bobsVersion = (await syncState("list_members", bobs))!.version;
      const held = await holdRow(heldRow === "task" ? "tasks" : "list_members", heldRow === "task" ? task : bobs);
      const out = await lineUp(held,
        () => push(alice, { ops: [
          upsert("list_members", bobs, { role: "editor" }, bobsVersion),
          upsert("tasks", task, { title: "edited" }, created.results[0].record!.version),
        ] }),
        () => asRequest(carol, (tx) => tx`delete from public.lists where id = ${list}`));
      expect(out.changed.status).toBe("fulfilled");
      const response = (out.changed as PromiseFulfilledResult<Awaited<ReturnType<typeof push>>>).value;
      expect(response.status, response.text).toBe(200);
      expect(syncBatchResponseSchema.parse(response.body).results.map((r) => r.status)).toEqual(["applied", "applied"]);
      expect(out.deleted).toBe("committed");
      expect(await listExists(list)).toBe(false);
    });
  }

  // A batch that holds a task of the list before it writes its memberships (written last, docs/sync.md):
  // it must hold the list first, whichever membership it changes.
  const batches = {
    "an owner's push removing an editor": 0,
    "an editor's push leaving": 1,
  };
  for (const [name, pusher] of Object.entries(batches)) {
    it(`${name} with an edit of a task (the task held) answers 200 and applies; the list's delete then commits`, async () => {
      const { users, list } = await listOf(["owner", "editor", "owner"]);
      const [alice, bob, carol] = users;
      const task = randomUUID();
      const created = await pushOk(alice, { ops: [upsert("tasks", task, { list_id: list, title: "t" })] });
      const bobs = await membershipOf(list, bob);
      const bobsVersion = (await syncState("list_members", bobs))!.version;
      const held = await holdRow("tasks", task);
      const out = await lineUp(held,
        () => push(users[pusher], { ops: [
          upsert("tasks", task, { title: "edited" }, created.results[0].record!.version),
          remove("list_members", bobs, bobsVersion),
        ] }),
        () => asRequest(carol, (tx) => tx`delete from public.lists where id = ${list}`));
      expect(out.changed.status).toBe("fulfilled");
      const response = (out.changed as PromiseFulfilledResult<Awaited<ReturnType<typeof push>>>).value;
      expect(response.status, response.text).toBe(200);
      expect(syncBatchResponseSchema.parse(response.body).results.map((r) => r.status)).toEqual(["applied", "applied"]);
      expect(out.deleted).toBe("committed");
      expect(await listExists(list)).toBe(false);
    });
  }

  it("a viewer's push leaving the list (their membership held) answers 200; the list's delete then commits", async () => {
    const { users: [alice, bob], list } = await listOf(["owner", "viewer"]);
    const bobs = await membershipOf(list, bob);
    const version = (await syncState("list_members", bobs))!.version;
    const held = await holdRow("list_members", bobs);
    const out = await lineUp(held,
      () => push(bob, { ops: [remove("list_members", bobs, version)] }),
      () => asRequest(alice, (tx) => tx`delete from public.lists where id = ${list}`));
    expect(out.changed.status).toBe("fulfilled");
    const response = (out.changed as PromiseFulfilledResult<Awaited<ReturnType<typeof push>>>).value;
    expect(response.status, response.text).toBe(200);
    expect(syncBatchResponseSchema.parse(response.body).results.map((r) => r.status)).toEqual(["applied"]);
    expect(out.deleted).toBe("committed");
    expect(await listExists(list)).toBe(false);
  });
});

describe("app_private.lock_list_for_member_change (the list_members policies' lock of the list)", () => {
  // Executable by authenticated (the policies run as the caller), it locked any list for any
  // signed-in caller: Carol, who cannot see Alice's list, held it FOR UPDATE until her
  // transaction ended, and Alice's edit of her list waited (DBA review).
  const forUpdate = (id: string) =>
    adminSql.begin((tx) => tx`select 1 from public.lists where id = ${id} for update nowait`).then(() => "free", (error: { code?: string }) => error.code);
  const calledBy = (user: TestUser, list: string) =>
    holdTransaction((tx) => tx`select app_private.lock_list_for_member_change(${list}, 'viewer', true)`, { as: user });

  it("locks nothing for a caller who is no member of the list; a member's call (a leave) locks it", async () => {
    const { users: [, bob], list } = await listOf(["owner", "viewer"]);
    const carol = await createTestUser();
    const byCarol = calledBy(carol, list);
    await byCarol.ran;
    try {
      expect(await forUpdate(list)).toBe("free");
    } finally {
      byCarol.commit();
    }
    await byCarol.done;
    const byBob = calledBy(bob, list);
    await byBob.ran;
    try {
      expect(await forUpdate(list)).toBe("55P03");
    } finally {
      byBob.commit();
    }
    await byBob.done;
  });
});
