// A user who signed up before tidesync was installed gets their personal list when migration
// 20261128009700 runs (app_private.create_personal_lists_of_earlier_users(), run here again as the
// migration ran it, as the owner): README's push of a task into list_id = their user id applies, and their
// first full sync lists the list as a sign-up's. Before, only their profile was backfilled: the push
// answered NOT_FOUND. The rules (who gets one, who is left as they are): pgTAP 161.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { createTestUser, stack } from "../support/harness.ts";
import { pullAll, pushOk, upsert } from "../support/shared-lists.ts";

/** The owner (hosted `postgres`), the role `supabase db push` runs the migrations as. */
const ownerSql = postgres(stack.ownerDbUrl, { max: 1, onnotice: () => {} });
afterAll(async () => {
  await ownerSql.end({ timeout: 5 });
});

describe("a user who signed up before tidesync was installed", () => {
  it("gets their personal list from the migration: README's push into list_id = their id applies, and their first full sync lists the list", async () => {
    const early = await createTestUser({ beforeTidesync: true });
    const signedUp = await createTestUser();
    const task = () => upsert("tasks", randomUUID(), { list_id: early.userId, title: "Buy milk" });
    const before = await pushOk(early, { ops: [task()] });
    expect(before.results[0]).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });

    await ownerSql`select app_private.create_personal_lists_of_earlier_users()`;

    // What their first full sync lists of it is what a sign-up's lists, but for the ids and times.
    const listed = async (user: typeof early) => (await pullAll(user)).changes
      .filter((c) => c.collection === "lists" || c.collection === "list_members")
      .map((c) => {
        const { id: _id, created_at: _at, ...data } = JSON.parse(JSON.stringify(c.data ?? {}).replaceAll(user.userId, "<user>"));
        return { collection: c.collection, deleted: c.deleted, data };
      })
      .sort((a, b) => a.collection.localeCompare(b.collection));
    const own = await listed(early);
    expect(own).toEqual(await listed(signedUp));
    expect(own.map((c) => [c.collection, c.data?.title ?? c.data?.role])).toEqual([["list_members", "owner"], ["lists", "Personal"]]);

    const after = await pushOk(early, { ops: [task()] });
    expect(after.results[0].status).toBe("applied");
  });
});
