// A member removed from a list keeps its task ids on their device. A push creating a task with one
// of them in a list of their own is answered as one with an unknown id that another user's row has:
// rejected, NOT_FOUND, exactly as a delete of an unknown id, whether the task is still in the list,
// was moved to another user's list, or was deleted there (its tombstone kept). Until migration
// 20261128005500 the deleted task's id was created again (applied), telling it from the others.
// A task deleted in the caller's own list is created again as before.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { adminSql, createTestUser } from "../support/harness.ts";
import { pullAll, pushOk, remove, removeMember, share, upsert } from "../support/shared-lists.ts";

describe("a push creating a task with the id of a task the caller cannot see", () => {
  it("is answered NOT_FOUND, as a delete of an unknown id, whether the task is live, moved or deleted", async () => {
    const alice = await createTestUser();
    const carol = await createTestUser();
    const team = randomUUID();
    const [live, moved, gone] = [randomUUID(), randomUUID(), randomUUID()];
    const created = await pushOk(alice, {
      ops: [
        upsert("lists", team, { title: "Team" }),
        upsert("tasks", live, { list_id: team, title: "still there" }),
        upsert("tasks", moved, { list_id: team, title: "moved away" }),
        upsert("tasks", gone, { list_id: team, title: "deleted" }),
      ],
    });
    await share(alice, team, carol, "editor");
    expect((await pullAll(carol)).changes.map((c) => c.id)).toEqual(expect.arrayContaining([live, moved, gone]));
    await removeMember(alice, team, carol);
    await pushOk(alice, {
      ops: [upsert("tasks", moved, { list_id: alice.userId }, created.results[2].record!.version), remove("tasks", gone, created.results[3].record!.version)],
    });

    const mine = randomUUID();
    await pushOk(carol, { ops: [upsert("lists", mine, { title: "Mine" })] });
    const create = async (id: string) => (await pushOk(carol, { ops: [upsert("tasks", id, { list_id: mine, title: "probe" })] })).results[0];
    const { op_id: _unknownOp, ...unknown } = (await pushOk(carol, { ops: [remove("tasks", randomUUID(), 1)] })).results[0];
    expect(unknown).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });
    for (const id of [live, moved, gone]) {
      const { op_id: _op, ...answer } = await create(id);
      expect(answer, id).toEqual(unknown);
    }
    expect(await adminSql`select id::text, list_id::text, title from public.tasks where id in ${adminSql([live, moved, gone])} order by title`).toEqual([
      { id: moved, list_id: alice.userId, title: "moved away" },
      { id: live, list_id: team, title: "still there" },
    ]);

    // In a list she only views, the hidden id is answered the same (by the id alone); a new id is a viewer's create.
    const viewed = randomUUID();
    await pushOk(alice, { ops: [upsert("lists", viewed, { title: "Viewed" })] });
    await share(alice, viewed, carol, "viewer");
    const intoViewed = async (id: string) => (await pushOk(carol, { ops: [upsert("tasks", id, { list_id: viewed, title: "probe" })] })).results[0];
    const { op_id: _viewedOp, ...hiddenIntoViewed } = await intoViewed(gone);
    expect(hiddenIntoViewed).toEqual(unknown);
    expect(await intoViewed(randomUUID())).toMatchObject({ status: "rejected", error: { code: "FORBIDDEN" } });

    // Her own list's deleted task is hers to create again, and a new id is created.
    const own = randomUUID();
    const ownCreated = await pushOk(carol, { ops: [upsert("tasks", own, { list_id: mine, title: "mine" })] });
    const ownDeleted = await pushOk(carol, { ops: [remove("tasks", own, ownCreated.results[0].record!.version)] });
    const again = await pushOk(carol, { ops: [upsert("tasks", own, { list_id: mine, title: "mine again" }, ownDeleted.results[0].record!.version)] });
    expect(again.results[0]).toMatchObject({ status: "applied", record: { deleted: false } });
    expect((await create(randomUUID())).status).toBe("applied");
  });
});
