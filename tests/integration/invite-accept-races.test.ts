// accept_list_invite racing what deletes its list: the accepter gets the
// list, or the answer of a wrong code (P0002), never a database error
// (a foreign key's 23503, a deadlock's 40P01); and a list the accept joined
// is handed over, not deleted, by the purge of its owner. Two connections,
// one held open at a chosen point (tests/support/held-transactions.ts).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { asUser } from "../support/shared-lists.ts";

/** The owner's new list and an editor code to it. */
async function listWithCode(owner: TestUser): Promise<{ list: string; code: string }> {
  const list = randomUUID();
  const code = await asUser(owner, async (tx) => {
    await tx`insert into public.lists (id, title) values (${list}, 'Invited to')`;
    return (await tx<{ code: string }[]>`select public.create_list_invite(${list}, 'editor') as code`)[0].code;
  });
  return { list, code };
}

const accept = (user: TestUser, code: string) =>
  asUser(user, async (tx) => (await tx<{ list: string }[]>`select public.accept_list_invite(${code}) as list`)[0].list);

async function members(list: string): Promise<{ user_id: string; role: string }[]> {
  return await adminSql<{ user_id: string; role: string }[]>`
    select user_id::text, role from public.list_members where list_id = ${list} order by role, user_id`;
}

describe("accept_list_invite racing the list's delete", () => {
  it("waits for a delete in progress, then answers as for a wrong code", async () => {
    const owner = await createTestUser();
    const stranger = await createTestUser();
    const { list, code } = await listWithCode(owner);
    const deleting = holdTransaction((tx) => tx`delete from public.lists where id = ${list}`);
    await deleting.ran;
    const accepting = accept(stranger, code);
    accepting.catch(() => {}); // (it may fail before the assertion below awaits it: not unhandled)
    await waitersOf(await deleting.pid);
    deleting.commit();
    await deleting.done;
    await expect(accepting).rejects.toMatchObject({ code: "P0002", message: "this invite code is not valid (wrong, already used or expired)" });
  });

  it("during the purge of its only member (the list locked, then deleted): no deadlock, the answer of a wrong code", async () => {
    // The account purge locks the user's lists (hand_over_lists), runs the
    // hook and the Storage check, then deletes the lists nobody else is in:
    // an accept that locked the code meanwhile waited for the list while the
    // delete's cascade waited for the code (40P01 for one of them).
    const owner = await createTestUser();
    const stranger = await createTestUser();
    const { list, code } = await listWithCode(owner);
    let proceed!: () => void;
    const gate = new Promise<void>((resolve) => (proceed = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const purge = holdTransaction(async (tx) => {
      await tx`select 1 from public.lists where id = ${list} for update`;
      locked();
      await gate;
      await tx`delete from public.lists l where l.id = ${list}
                  and not exists (select 1 from public.list_members o where o.list_id = l.id and o.user_id <> ${owner.userId})`;
    });
    await lockTaken;
    const accepting = accept(stranger, code);
    accepting.catch(() => {});
    await waitersOf(await purge.pid);
    proceed();
    await purge.ran; // the delete did not wait for the accept
    purge.commit();
    await purge.done;
    await expect(accepting).rejects.toMatchObject({ code: "P0002", message: "this invite code is not valid (wrong, already used or expired)" });
    expect(await members(list)).toEqual([]);
  });
});

describe("the account purge racing an accept into the owner's only list", () => {
  it("hands the list to the member who joined while it waited", async () => {
    const owner = await createTestUser();
    const joiner = await createTestUser();
    const { list, code } = await listWithCode(owner);
    // Due long ago, so that this run takes this request only (other files' are due now).
    const due = new Date(Date.UTC(2001, 0, 1, 0, 0, Math.floor(Math.random() * 86_400)));
    await adminSql`
      insert into app_private.account_deletion_requests (user_id, requested_at, scheduled_for)
      values (${owner.userId}, ${due}::timestamptz - interval '7 days', ${due})`;
    const accepting = holdTransaction((tx) => tx`select public.accept_list_invite(${code})`, { as: joiner });
    await accepting.ran;
    const purge = adminSql<{ users_deleted: number; lists_handed_over: number }[]>`
      select * from app_private.run_account_deletions(${due}::timestamptz, 1)`.execute();
    await waitersOf(await accepting.pid);
    accepting.commit();
    await accepting.done;
    expect(await purge).toEqual([{ users_deleted: 1, lists_handed_over: 1 }]);
    expect(await members(list)).toEqual([{ user_id: joiner.userId, role: "owner" }]);
  });
});
