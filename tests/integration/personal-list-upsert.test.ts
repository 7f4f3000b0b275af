// supabase-js upsert() (PostgREST: insert … on conflict (id) do update) of another user's personal
// list shared with the caller (migrations 20261128008400, 008600): the upsert of a member who may change the
// list (owner, editor) goes on to its update, as for any other list; anyone else's is answered as
// for any taken id, telling nothing of whose id it is. Before, every such upsert failed 23505. The
// way through never lets a co-owner take the id: a list deleted before its insert checks the key
// leaves the id taken as before.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { asUser, pullAll, pushOk, share, upsert } from "../support/shared-lists.ts";

const upsertTitle = (user: TestUser, listId: string, title: string) =>
  asUser(user, (tx) => tx`insert into public.lists as l (id, title) values (${listId}, ${title})
     on conflict (id) do update set id = excluded.id, title = excluded.title returning title`)
    .then((rows) => rows[0]?.title ?? "no row", (e: any) => `${e.code} ${e.message}`);

describe("supabase-js upsert() of another user's personal list", () => {
  it("updates it for an editor, and answers a viewer and a stranger as a taken id", async () => {
    const alice = await createTestUser();
    const editor = await createTestUser();
    const viewer = await createTestUser();
    const stranger = await createTestUser();
    await share(alice, alice.userId, editor, "editor");
    await share(alice, alice.userId, viewer, "viewer");
    const other = randomUUID();
    await pushOk(alice, { ops: [upsert("lists", other, { title: "Groceries" })] });

    expect(await upsertTitle(editor, alice.userId, "Renamed by the editor")).toBe("Renamed by the editor");
    const strangers = await upsertTitle(stranger, alice.userId, "Squat");
    expect(strangers).toBe('23505 duplicate key value violates unique constraint "lists_pkey"');
    expect(strangers).toBe(await upsertTitle(stranger, other, "Squat"));
    // The UPDATE policy does not let a viewer lock the list: answered as before (a plain
    // update() of it is the viewer's 0 rows, as of any list they only read).
    expect(await upsertTitle(viewer, alice.userId, "Renamed by the viewer")).toBe(strangers);
    expect((await adminSql`select title from public.lists where id = ${alice.userId}`)[0].title).toBe("Renamed by the editor");
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

  const attempt = (p: Promise<unknown>) => p.then(() => "created", (e: any) => `${e.code} ${e.message}`);
  const creatorOf = async (id: string) =>
    (await adminSql<{ created_by: string }[]>`select created_by from public.lists where id = ${id}`)[0]?.created_by ?? "none";

  it("never lets a co-owner delete it and create it again as theirs in one statement", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    await share(alice, alice.userId, bob, "owner");
    const out = await attempt(asUser(bob, (tx) => tx`
      with d as (delete from public.lists where id = ${alice.userId} returning id)
      insert into public.lists (id, title) select id, 'Bob owns Alice''s id' from d`));
    expect({ out, creator: await creatorOf(alice.userId) }).toEqual({ out: expect.stringMatching(/^23505 /), creator: alice.userId });
  });

  it("never lets a co-owner create it while their delete of it commits: refused, and its user creates it again", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    await share(alice, alice.userId, bob, "owner");
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let deleted!: () => void;
    const didDelete = new Promise<void>((r) => (deleted = r));
    const deleting = asUser(bob, async (tx) => {
      await tx`delete from public.lists where id = ${alice.userId}`;
      deleted();
      await held;
    });
    await didDelete;
    const inserting = attempt(asUser(bob, (tx) => tx`insert into public.lists (id, title) values (${alice.userId}, 'Bob''s now')`));
    await new Promise((r) => setTimeout(r, 300)); // the insert waits on the delete's row
    release();
    await deleting;
    const out = await inserting;
    const aliceAgain = await attempt(asUser(alice, (tx) => tx`insert into public.lists (id, title) values (${alice.userId}, 'Personal')`));
    expect({ out, aliceAgain, creator: await creatorOf(alice.userId) })
      .toEqual({ out: expect.stringMatching(/^23505 /), aliceAgain: "created", creator: alice.userId });
  });
});
