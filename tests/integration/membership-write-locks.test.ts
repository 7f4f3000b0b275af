// A change of one membership locks that membership's list, and no other list of
// the caller. The list_members UPDATE and DELETE policies end in a locking
// function (lock_list_for_member_change); migration 20261128007800 made their
// list an index condition, and then a push's update or delete of one membership
// read every membership of the owner's lists and locked every one of those lists,
// out of the id order the push keeps: a push removing a member of L1 waited for
// any write into the owner's other list L0 (3 s in the review, 40P01 under
// load). Migration 20261128007900 made them filters again, which was not enough
// (the select policy's index condition applies to an update's and a delete's rows
// too); migration 20261128008000 fixed it: sync_apply names its rows by id first,
// so the policies' functions see those rows only, whatever the policies' form.
// Before it (b53c530, fce2202) the pushes below held by a rename, and the removal
// held by an insert, answer 503 after the lock timeout. (A change of Dan's role
// held by an insert never waited: only an owner's membership locks the list, and
// FOR NO KEY UPDATE lets a KEY SHARE be. The Data API delete names its own row
// and never read the other lists: it pins the same answer, not the bug.) Here
// Carol, a member of L0 only, holds a write into L0 open (an insert of a task:
// KEY SHARE on the list; a rename of the list: NO KEY UPDATE), and a change of
// Dan's membership of L1 must answer while it is still open. (Carol, a member of
// L0 only: nothing of Dan's own is held, so only a lock of L0 could stall it.)
import { randomUUID } from "node:crypto";
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { syncBatchResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { type HeldTransaction, holdTransaction } from "../support/held-transactions.ts";
import { push, pushOk, remove, share, upsert } from "../support/shared-lists.ts";
import { syncState } from "../support/sync-records.ts";

/** Long enough for any answer on a loaded machine; a change that waits for the held write never answers within it. */
const ANSWER_WITHIN_MS = 10_000;

/** Alice's lists L0 and L1, Dan an editor of both, Carol an editor of L0. */
async function twoLists() {
  const [alice, dan, carol] = await Promise.all([createTestUser(), createTestUser(), createTestUser()]);
  const [l0, l1] = [randomUUID(), randomUUID()];
  await pushOk(alice, { ops: [upsert("lists", l0, { title: "L0" }), upsert("lists", l1, { title: "L1" })] });
  await share(alice, l0, dan, "editor");
  await share(alice, l1, dan, "editor");
  await share(alice, l0, carol, "editor");
  const [row] = await adminSql<{ id: string }[]>`select id::text from public.list_members where list_id = ${l1} and user_id = ${dan.userId}`;
  return { alice, dan, carol, l0, l1, dansL1: row.id, dansL1Version: (await syncState("list_members", row.id))!.version };
}

/** A write into L0 as a Data API request still running (role authenticated, the writer's claims). */
const writesIntoL0 = {
  "a task inserted": (l0: string) => (tx: postgres.TransactionSql) =>
    tx`insert into public.tasks (id, list_id, title) values (${randomUUID()}, ${l0}, 'held')`,
  "the list renamed": (l0: string) => (tx: postgres.TransactionSql) => tx`update public.lists set title = 'L0 renamed' where id = ${l0}`,
};

/** `change` while `writer` holds `write` into L0 open; whether it answered before the writer let go. Every session ends whatever happens. */
async function whileL0IsWritten<T>(writer: TestUser, write: (tx: postgres.TransactionSql) => Promise<unknown>, change: () => Promise<T>) {
  const held: HeldTransaction = holdTransaction(write, { as: writer });
  try {
    await held.ran;
    const answer = change();
    const first = await Promise.race([
      answer.then(() => "answered" as const),
      new Promise<"waited">((resolve) => setTimeout(() => resolve("waited"), ANSWER_WITHIN_MS)),
    ]);
    held.commit();
    return { first, value: await answer };
  } finally {
    held.commit();
    await held.done;
  }
}

describe("a change of one membership leaves the owner's other lists unlocked", () => {
  for (const [writeName, write] of Object.entries(writesIntoL0)) {
    it(`Alice's push removing Dan from L1 answers while Carol's write into L0 is open (${writeName})`, async () => {
      const { alice, carol, l0, dansL1, dansL1Version } = await twoLists();
      const out = await whileL0IsWritten(carol, write(l0), () => push(alice, { ops: [remove("list_members", dansL1, dansL1Version)] }));
      expect(out.first).toBe("answered");
      expect(out.value.status, out.value.text).toBe(200);
      expect(syncBatchResponseSchema.parse(out.value.body).results.map((r) => r.status)).toEqual(["applied"]);
      expect(await adminSql`select 1 from public.list_members where id = ${dansL1}`).toHaveLength(0);
    });

    it(`Alice's push making Dan an owner of L1 answers while Carol's write into L0 is open (${writeName})`, async () => {
      const { alice, carol, l0, dansL1, dansL1Version } = await twoLists();
      const out = await whileL0IsWritten(carol, write(l0),
        () => push(alice, { ops: [upsert("list_members", dansL1, { role: "owner" }, dansL1Version)] }));
      expect(out.first).toBe("answered");
      expect(out.value.status, out.value.text).toBe(200);
      expect(syncBatchResponseSchema.parse(out.value.body).results.map((r) => r.status)).toEqual(["applied"]);
      expect(await adminSql`select role from public.list_members where id = ${dansL1}`).toEqual([{ role: "owner" }]);
    });
  }

  it("Alice's Data API delete of Dan's L1 membership by its id answers while Carol's task insert into L0 is open", async () => {
    const { alice, carol, l0, dansL1 } = await twoLists();
    const out = await whileL0IsWritten(carol, writesIntoL0["a task inserted"](l0), () => {
      const request = holdTransaction((tx) => tx`delete from public.list_members where id = ${dansL1}`, { as: alice });
      request.commit();
      return request.done;
    });
    expect(out.first).toBe("answered");
    expect(await adminSql`select 1 from public.list_members where id = ${dansL1}`).toHaveLength(0);
  });
});

describe("a viewer's membership op that is refused takes no lock of the list", () => {
  // Only a viewer's leave locks the list FOR UPDATE in the push's ordered pass (migration
  // 20261128008100, the leave's delete policy's lock taken in its place). A viewer's op the
  // policies refuse (another member's role or removal) locked it too (hostile review): it waited
  // behind any member's write into the list and answered 503 instead of FORBIDDEN, and every
  // write into the list queued behind it meanwhile (migration 20261128008200).
  async function viewerOfL0() {
    const { alice, carol, l0 } = await twoLists();
    const dan = await createTestUser();
    await share(alice, l0, dan, "viewer");
    const memberships = await adminSql<{ user_id: string; id: string }[]>`
      select user_id::text, id::text from public.list_members where list_id = ${l0}`;
    const idOf = (user: TestUser) => memberships.find((m) => m.user_id === user.userId)!.id;
    return { alice, carol, dan, l0, idOf };
  }
  const refused = {
    "the owner's role changed": { whose: "alice", op: (id: string, version: number) => upsert("list_members", id, { role: "viewer" }, version) },
    "another member removed": { whose: "carol", op: (id: string, version: number) => remove("list_members", id, version) },
  } as const;
  for (const [name, { whose, op: opOf }] of Object.entries(refused)) {
    it(`${name}: FORBIDDEN while Carol's task insert into the list is open`, async () => {
      const { alice, carol, dan, l0, idOf } = await viewerOfL0();
      const id = idOf({ alice, carol }[whose]);
      const op = opOf(id, (await syncState("list_members", id))!.version);
      const out = await whileL0IsWritten(carol, writesIntoL0["a task inserted"](l0), () => push(dan, { ops: [op] }));
      expect(out.first).toBe("answered");
      expect(out.value.status, out.value.text).toBe(200);
      const [result] = syncBatchResponseSchema.parse(out.value.body).results;
      expect(result.status).toBe("rejected");
      expect(result.error?.code).toBe("FORBIDDEN");
    });
  }
});
