// supabase-js upsert() (PostgREST: insert … on conflict (id) do update) of another user's personal
// list shared with the caller (migration 20261128008400): a member's upsert goes on to its update,
// which the list's policies decide, as for any other list; a non-member's is answered as for any
// taken id, telling nothing of whose id it is. Before, every such upsert failed 23505.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTestUser, type TestUser } from "../support/harness.ts";
import { asUser, pullAll, pushOk, share, upsert } from "../support/shared-lists.ts";

const upsertTitle = (user: TestUser, listId: string, title: string) =>
  asUser(user, (tx) => tx`insert into public.lists as l (id, title) values (${listId}, ${title})
     on conflict (id) do update set id = excluded.id, title = excluded.title returning title`)
    .then((rows) => rows[0]?.title ?? "no row", (e: any) => `${e.code} ${e.message}`);

describe("supabase-js upsert() of another user's personal list", () => {
  it("updates it for an editor, is refused by the policy for a viewer, and answers a stranger as a taken id", async () => {
    const alice = await createTestUser();
    const editor = await createTestUser();
    const viewer = await createTestUser();
    const stranger = await createTestUser();
    await share(alice, alice.userId, editor, "editor");
    await share(alice, alice.userId, viewer, "viewer");
    const other = randomUUID();
    await pushOk(alice, { ops: [upsert("lists", other, { title: "Groceries" })] });

    expect(await upsertTitle(editor, alice.userId, "Renamed by the editor")).toBe("Renamed by the editor");
    expect(await upsertTitle(viewer, alice.userId, "Renamed by the viewer")).toMatch(/^42501 /);
    const strangers = await upsertTitle(stranger, alice.userId, "Squat");
    expect(strangers).toBe('23505 duplicate key value violates unique constraint "lists_pkey"');
    expect(strangers).toBe(await upsertTitle(stranger, other, "Squat"));
  });

  it("leaves the push's upsert of it to the editor as before", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    await share(alice, alice.userId, bob, "editor");
    const personal = (await pullAll(bob)).changes.find((c) => c.id === alice.userId)!;

    const pushed = await pushOk(bob, { ops: [upsert("lists", alice.userId, { title: "Ours" }, personal.version)] });
    expect(pushed.results[0].status).toBe("applied");
    expect((await pullAll(alice)).changes.find((c) => c.id === alice.userId)!.data).toMatchObject({ title: "Ours" });
  });
});
