// A member's offline delete of a record whose creator's account was purged meanwhile (review:
// data loss). The purge sets the record's created_by to null (the foreign key's on delete set
// null), and the sync trigger stamps that change like any other, by no device. A column no
// client writes is bookkeeping, not something another device wrote, so the delete applies: the
// record is gone on the member's device and on the server, as without the purge.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { adminSql, call, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { clientDevice } from "../support/client-device.ts";
import { pullAll, push, remove, settled, share, upsert } from "../support/shared-lists.ts";

/** The owner (hosted `postgres`): what pg_cron runs the purge as. */
const ownerSql = postgres(stack.ownerDbUrl, { max: 2, onnotice: () => {} });
afterAll(async () => { await ownerSql.end({ timeout: 5 }); });

async function purgeAccount(user: TestUser) {
  const requested = await call("/v1/users/me/deletion", { method: "POST", token: user.token, body: { confirm: "delete my account" } });
  expect(requested.status, requested.text).toBe(202);
  await adminSql`update app_private.account_deletion_requests
                    set requested_at = now() - interval '30 days', scheduled_for = now() - interval '1 second'
                  where user_id = ${user.userId}`;
  await ownerSql`select * from app_private.run_account_deletions()`;
  const [left] = await adminSql<{ n: number }[]>`select count(*)::int as n from auth.users where id = ${user.userId}`;
  expect(left.n).toBe(0);
}

const device = (user: TestUser) => clientDevice(user);

async function tasksOnServer(id: string): Promise<number> {
  const [row] = await adminSql<{ n: number }[]>`select count(*)::int as n from public.tasks where id = ${id}`;
  return row.n;
}

describe("an offline delete of a record whose creator was purged meanwhile", () => {
  it("is applied: the task is gone on the member's device and on the server, nothing discarded", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const a = await device(alice);
    const b = await device(bob);
    const list = await a.client.create("lists", { title: "Shared" });
    const task = await a.client.create("tasks", { list_id: list, title: "Alice's task" });
    await a.client.sync();
    await share(alice, list, bob, "editor");
    await settled();
    await b.client.sync();
    expect((await b.client.get("tasks", task))?.data?.title).toBe("Alice's task");

    await b.client.delete("tasks", task); // offline
    await purgeAccount(alice);
    await settled();
    await b.client.sync();
    await settled();
    await b.client.sync();

    expect(await b.client.get("tasks", task)).toBeFalsy();
    expect(await tasksOnServer(task)).toBe(0);
    expect(b.events.filter((e) => e.type === "conflict" || e.type === "write_discarded")).toEqual([]);
  });

  it("the push answers applied, and a change another member made since the base still conflicts", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const carol = await createTestUser();
    const list = randomUUID();
    const [kept, gone] = [randomUUID(), randomUUID()];
    expect((await push(alice, { ops: [upsert("lists", list, { title: "Alice shares" })] })).status).toBe(200);
    await share(alice, list, bob, "editor");
    await share(alice, list, carol, "editor");
    expect((await push(alice, { ops: [upsert("tasks", kept, { list_id: list, title: "k" }), upsert("tasks", gone, { list_id: list, title: "g" })] })).status).toBe(200);
    const seen = await pullAll(bob);
    const base = (id: string) => seen.changes.find((c) => c.id === id)!.version;

    await purgeAccount(alice);
    // Carol edits one of the tasks after the purge: Bob's delete of it, based before, must not lose that.
    expect((await push(carol, { ops: [upsert("tasks", kept, { done: true }, (await pullAll(carol)).changes.find((c) => c.id === kept)!.version)] })).status).toBe(200);

    const answer = await push(bob, { ops: [remove("tasks", gone, base(gone)), remove("tasks", kept, base(kept))] });
    expect(answer.status, answer.text).toBe(200);
    const [deleted, conflicted] = answer.body.results;
    expect(deleted).toMatchObject({ status: "applied", record: { deleted: true } });
    expect(conflicted).toMatchObject({ status: "conflict", conflicting_fields: ["done"] });
    expect(await tasksOnServer(gone)).toBe(0);
    expect(await tasksOnServer(kept)).toBe(1);
  });
});
