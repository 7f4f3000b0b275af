// A personal list's id (its user's id) can be taken by nobody else, even after the user deleted
// the list (migration 20261127000500): another user's push creating a list with it is that op's
// rejection, answered NOT_FOUND as for an unknown id, and the user's own re-create applies. Also
// once the user's account is purged, with the list and its history (migration 20261128004650): an
// account created again with the id gets its personal list.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { runPurgeBlock } from "../support/account-purge.ts";
import { adminSql, call, createTestUser, stack } from "../support/harness.ts";
import { pullAll, pushOk, remove, upsert } from "../support/shared-lists.ts";

/** The owner (hosted `postgres`), what pg_cron runs the purge as. */
const ownerSql = postgres(stack.ownerDbUrl, { max: 1, onnotice: () => {} });
afterAll(async () => {
  await ownerSql.end({ timeout: 5 });
});

describe("the personal list's id", () => {
  it("is refused to another user after its user deleted the list, and the user re-creates it", async () => {
    const bob = await createTestUser();
    const mallory = await createTestUser();
    const personal = (await pullAll(bob)).changes.find((c) => c.id === bob.userId)!;
    await pushOk(bob, { ops: [remove("lists", bob.userId, personal.version)] });

    // Answered exactly as a create with an unknown id that is taken is: Bob's id reveals nothing.
    const squat = await pushOk(mallory, { ops: [upsert("lists", bob.userId, { title: "Personal" })] });
    const bobsOther = randomUUID();
    await pushOk(bob, { ops: [upsert("lists", bobsOther, { title: "Bob's other list" })] });
    const taken = await pushOk(mallory, { ops: [upsert("lists", bobsOther, { title: "Personal" })] });
    expect(squat.results[0]).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });
    expect(squat.results[0].error).toEqual(taken.results[0].error);

    const recreated = await pushOk(bob, { ops: [upsert("lists", bob.userId, { title: "Personal" })] });
    expect(recreated.results[0].status).toBe("applied");
    expect((await pullAll(mallory)).changes.some((c) => c.id === bob.userId)).toBe(false);
  });

  it("stays its user's after the account is purged, and an account created again with it gets its personal list", async () => {
    const bob = await createTestUser();
    const mallory = await createTestUser();
    const squat = () => pushOk(mallory, { ops: [upsert("lists", bob.userId, { title: "squat" })] });
    const before = await squat();
    expect(before.results[0]).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });

    const requested = await call("/v1/users/me/deletion", { method: "POST", token: bob.token, body: { confirm: "delete my account" } });
    expect(requested.status, requested.text).toBe(202);
    // Due long ago, and the purge run at that date: other files' requests, due now, are not taken.
    const due = new Date(Date.UTC(2001, 0, 2, 0, 0, Math.floor(Math.random() * 80_000)));
    await adminSql`update app_private.account_deletion_requests
      set requested_at = ${due}::timestamptz - interval '7 days', scheduled_for = ${due} where user_id = ${bob.userId}`;
    await runPurgeBlock(ownerSql, due, 1000);
    expect(await adminSql`select 1 from auth.users where id = ${bob.userId}
      union all select 1 from app_private.sync_changes where scope_id = ${bob.userId}`).toHaveLength(0);

    const after = await squat();
    expect(after.results[0]).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });
    expect(after.results[0].error).toEqual(before.results[0].error);

    const bob2 = await createTestUser({ userId: bob.userId });
    expect(await adminSql`select l.created_by, m.user_id, m.role from public.lists l join public.list_members m on m.list_id = l.id
      where l.id = ${bob.userId}`).toEqual([{ created_by: bob.userId, user_id: bob.userId, role: "owner" }]);
    const task = await pushOk(bob2, { ops: [upsert("tasks", randomUUID(), { list_id: bob.userId, title: "mine" })] });
    expect(task.results[0].status).toBe("applied");
    expect((await pullAll(mallory)).changes.some((c) => c.id === bob.userId)).toBe(false);
  });
});
