// A personal list another owner deleted after its user had left it (docs/security-model.md, the
// personal list): while the deleted list's history is kept, its user cannot create it again, and
// gets the answer of any taken id. Created again, it would continue that history, and the user's
// pulls would list the ids, versions and times of what others put in it after they left. Had the
// user still been a member when it was deleted, they create it again, as any member of a deleted list.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { asUser, pushOk, removeMember, share, upsert } from "../support/shared-lists.ts";

const insertList = (user: TestUser, id: string) =>
  asUser(user, (tx) => tx`insert into public.lists (id, title) values (${id}, 'Personal') returning id`)
    .then(() => "created", (e: any) => `${e.code} ${e.message} ${e.detail ?? ""}`);

/** Carol makes Dave an owner of her personal list; Dave adds a task; Carol leaves, or stays; Dave deletes it. */
async function deletedByTheOtherOwner(carolLeavesFirst: boolean) {
  const carol = await createTestUser();
  const dave = await createTestUser();
  await share(carol, carol.userId, dave, "owner");
  if (carolLeavesFirst) await removeMember(carol, carol.userId, carol);
  await pushOk(dave, { ops: [upsert("tasks", randomUUID(), { list_id: carol.userId, title: "Dave's" })] });
  await asUser(dave, (tx) => tx`delete from public.lists where id = ${carol.userId}`);
  expect(await adminSql`select 1 from public.lists where id = ${carol.userId}`).toHaveLength(0);
  return { carol, dave };
}

describe("a personal list deleted by another owner of it", () => {
  it("is refused to its user who had left it, as a taken id, by the Data API and the push", async () => {
    const { carol } = await deletedByTheOtherOwner(true);
    const taken = randomUUID();
    await pushOk(await createTestUser(), { ops: [upsert("lists", taken, { title: "Someone's" })] });

    expect(await insertList(carol, carol.userId))
      .toBe(`23505 duplicate key value violates unique constraint "lists_pkey" Key (id)=(${carol.userId}) already exists.`);
    const pushed = await pushOk(carol, { ops: [upsert("lists", carol.userId, { title: "Personal" })] });
    const pushedTaken = await pushOk(carol, { ops: [upsert("lists", taken, { title: "Personal" })] });
    expect(pushed.results[0]).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });
    expect(pushed.results[0].error).toEqual(pushedTaken.results[0].error);
  });

  it("is created again by its user who was still a member of it", async () => {
    const { carol } = await deletedByTheOtherOwner(false);
    expect(await insertList(carol, carol.userId)).toBe("created");
  });
});
