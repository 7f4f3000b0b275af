// A personal list's id (its user's id) can be taken by nobody else, even after the user deleted
// the list (migration 20261127000500): another user's push creating a list with it is that op's
// rejection, answered NOT_FOUND as for an unknown id, and the user's own re-create applies.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTestUser } from "../support/harness.ts";
import { pullAll, pushOk, remove, upsert } from "../support/shared-lists.ts";

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
});
