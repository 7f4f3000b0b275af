// A row moved out of its creator's reach stops counting against them
// (migration 20261128001550_moved_rows_count_for_their_mover, docs/sync.md
// "Limits and their errors"): an editor who moves a member's tasks into a list
// the member is not in becomes their creator, in the live-records usage too, so
// nobody is charged for rows they can no longer read or delete.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MAX_LIVE_RECORDS_PER_USER } from "../../functions/_shared/sync-quota.generated.ts";
import { adminSql } from "../support/harness.ts";
import { asUser, pushOk, remove, sharedList, upsert } from "../support/shared-lists.ts";

async function usage(userId: string): Promise<number> {
  const [row] = await adminSql<{ n: number }[]>`select coalesce((select live_records from app_private.sync_usage where user_id = ${userId}), 0) as n`;
  return row.n;
}

/** What the triggers must keep the usage equal to: the user's live rows in sync_records. */
async function recount(userId: string): Promise<number> {
  const [row] = await adminSql<{ n: number }[]>`
    select count(*)::int as n from app_private.sync_records where created_by = ${userId} and not deleted`;
  return row.n;
}

/** Alice's shared list with Bob as an editor, and three tasks Alice pushed into it. */
async function aliceTasksInSharedList() {
  const { alice, bob, list } = await sharedList("editor");
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  const pushed = await pushOk(alice, { ops: ids.map((id, i) => upsert("tasks", id, { list_id: list, title: `alice ${i}` })) });
  expect(pushed.results.map((r) => r.status)).toEqual(["applied", "applied", "applied"]);
  expect(await usage(alice.userId)).toBe(4); // the list and its three tasks
  return { alice, bob, list, ids };
}

describe("the live-records quota follows a row moved out of its creator's reach", () => {
  it("an editor moves the creator's tasks into his personal list (Data API): they count for him, and usage equals a recount", async () => {
    const { alice, bob, list } = await aliceTasksInSharedList();
    const moved = await asUser(bob, (tx) => tx`update public.tasks set list_id = ${bob.userId} where list_id = ${list}`);
    expect(moved.count).toBe(3);
    expect(await usage(alice.userId)).toBe(1);
    expect(await usage(bob.userId)).toBe(3);
    expect(await usage(alice.userId)).toBe(await recount(alice.userId));
    expect(await usage(bob.userId)).toBe(await recount(bob.userId));
  });

  it("the creator at the quota, whose tasks an editor moved away, can create again", async () => {
    const { alice, bob, list } = await aliceTasksInSharedList();
    await adminSql`update app_private.sync_usage set live_records = ${MAX_LIVE_RECORDS_PER_USER} where user_id = ${alice.userId}`;
    await asUser(bob, (tx) => tx`update public.tasks set list_id = ${bob.userId} where list_id = ${list}`);
    expect(await usage(alice.userId)).toBe(MAX_LIVE_RECORDS_PER_USER - 3);
    const created = await pushOk(alice, { ops: [upsert("tasks", randomUUID(), { list_id: list, title: "room again" })] });
    expect(created.results[0].status).toBe("applied");
  });

  it("a push that moves them is held to the mover's quota: QUOTA_EXCEEDED at it, applied with room", async () => {
    const { bob, ids } = await aliceTasksInSharedList();
    await adminSql`insert into app_private.sync_usage (user_id, live_records) values (${bob.userId}, ${MAX_LIVE_RECORDS_PER_USER})
                   on conflict (user_id) do update set live_records = excluded.live_records`;
    const [row] = await adminSql<{ version: string }[]>`select version::text from app_private.sync_records where collection = 'tasks' and id = ${ids[0]}`;
    const version = Number(row.version);
    const refused = await pushOk(bob, { ops: [upsert("tasks", ids[0], { list_id: bob.userId }, version)] });
    expect(refused.results[0]).toMatchObject({ status: "rejected", error: { code: "QUOTA_EXCEEDED" } });
    await adminSql`update app_private.sync_usage set live_records = 0 where user_id = ${bob.userId}`;
    const applied = await pushOk(bob, { ops: [upsert("tasks", ids[0], { list_id: bob.userId }, version)] });
    expect(applied.results[0].status).toBe("applied");
    expect(await usage(bob.userId)).toBe(1);
  });
});

// A member who loses a list stops counting the rows he created there: they pass to its owner
// (migration 20261128005700_lost_members_rows_pass_to_owner; pgTAP 166 covers removal, leave,
// demotion and re-adding).
describe("the live-records quota follows the rows a member leaves in a list", () => {
  it("a member who pushes his leave after a create: the tasks he left count for the owner, his create for him, and usage equals a recount", async () => {
    const { alice, bob, list } = await sharedList("editor");
    const left = await pushOk(bob, { ops: [upsert("tasks", randomUUID(), { list_id: list, title: "bob 1" }), upsert("tasks", randomUUID(), { list_id: list, title: "bob 2" })] });
    expect(left.results.map((r) => r.status)).toEqual(["applied", "applied"]);
    const [membership] = await adminSql<{ id: string; version: string }[]>`
      select m.id::text, s.version::text from public.list_members m
        join app_private.sync_records s on s.collection = 'list_members' and s.id = m.id
       where m.list_id = ${list} and m.user_id = ${bob.userId}`;
    const pushed = await pushOk(bob, { ops: [
      upsert("tasks", randomUUID(), { list_id: bob.userId, title: "mine" }),
      remove("list_members", membership.id, Number(membership.version)),
    ] });
    expect(pushed.results.map((r) => r.status)).toEqual(["applied", "applied"]);
    expect(await usage(bob.userId)).toBe(1);
    expect(await usage(alice.userId)).toBe(3); // her list and the two tasks Bob left there
    for (const user of [alice, bob]) expect(await usage(user.userId)).toBe(await recount(user.userId));
  });
});
