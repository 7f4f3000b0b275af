// A row written with the sync triggers off (session_replication_role = replica, as Supabase's
// restore guide loads data: docs/sync.md "Writes the triggers cannot see") has no sync state.
// Its first edit with the triggers on gives it the sync state an insert by that writer would
// (migration 20261128008500): before, the edit wrote a change entry alone, so every pull listed
// the row as live while GET /v1/sync/records answered 404 and every push op on it NOT_FOUND.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { adminSql, call, createTestUser, type TestUser } from "../support/harness.ts";
import { asUser, pullAll, pushOk, upsert } from "../support/shared-lists.ts";

async function usage(user: TestUser): Promise<number> {
  const [row] = await adminSql<{ n: number }[]>`select coalesce((select live_records from app_private.sync_usage where user_id = ${user.userId}), 0) as n`;
  return row.n;
}

/** Tasks inserted into `user`'s personal list with the triggers off, as a restore does. */
async function restoredTasks(user: TestUser, titles: string[]): Promise<string[]> {
  const ids = titles.map(() => randomUUID());
  await adminSql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    for (const [i, id] of ids.entries()) {
      await tx`insert into public.tasks (id, list_id, title, created_by) values (${id}, ${user.userId}, ${titles[i]}, ${user.userId})`;
    }
  });
  return ids;
}

describe("a row loaded with the sync triggers off", () => {
  it("is in no pull until its first edit, then is an ordinary synced row: read, edited by a push, counted", async () => {
    const alice = await createTestUser();
    const start = await pullAll(alice);
    const before = await usage(alice);
    const [task] = await restoredTasks(alice, ["restored"]);
    expect((await pullAll(alice)).changes.map((c) => c.id)).not.toContain(task);
    expect((await call(`/v1/sync/records/tasks/${task}`, { token: alice.token })).status).toBe(404);

    // The web dashboard ticks it off (PostgREST: as authenticated, triggers on).
    await asUser(alice, (tx) => tx`update public.tasks set done = true where id = ${task}`);
    const listed = (await pullAll(alice, start.cursor)).changes.find((c) => c.id === task);
    expect(listed).toMatchObject({ deleted: false, data: { title: "restored", done: true } });
    expect((await pullAll(alice)).changes.find((c) => c.id === task)).toEqual(listed);
    const record = await call(`/v1/sync/records/tasks/${task}`, { token: alice.token });
    expect(record.status, record.text).toBe(200);
    expect(record.body).toMatchObject({ id: task, version: listed!.version, deleted: false });
    // Counted as Alice's insert would be.
    expect(await usage(alice)).toBe(before + 1);

    // Her phone edits it at the listed version: applied, not NOT_FOUND.
    const { results: [edit] } = await pushOk(alice, { ops: [upsert("tasks", task, { title: "edited on the phone" }, listed!.version)] });
    expect(edit.status).toBe("applied");
    expect(edit.record!.data).toMatchObject({ title: "edited on the phone", done: true });
  });

  it("one update touching synced rows and loaded ones gives the loaded ones sync state and keeps the others' stamps", async () => {
    const alice = await createTestUser();
    const synced = randomUUID();
    const { results: [created] } = await pushOk(alice, { ops: [upsert("tasks", synced, { list_id: alice.userId, title: "synced" })] });
    const loaded = await restoredTasks(alice, ["a", "b"]);
    const before = await usage(alice);

    await asUser(alice, (tx) => tx`update public.tasks set done = true where list_id = ${alice.userId}`);
    const pulled = new Map((await pullAll(alice)).changes.map((c) => [c.id, c]));
    for (const id of [synced, ...loaded]) {
      expect(pulled.get(id), id).toMatchObject({ deleted: false, data: { done: true } });
      expect((await call(`/v1/sync/records/tasks/${id}`, { token: alice.token })).status).toBe(200);
    }
    expect(await usage(alice)).toBe(before + 2);
    // The synced row's title keeps its stamp: an offline title edit based on its first version merges.
    const { results: [merged] } = await pushOk(alice, { ops: [upsert("tasks", synced, { title: "offline" }, created.record!.version)] });
    expect(merged.status).toBe("applied");
    expect(merged.record!.data).toMatchObject({ title: "offline", done: true });
  });

  it("an update that touches them and changes nothing gives each its sync state, and leaves synced rows as they were", async () => {
    const alice = await createTestUser();
    const synced = randomUUID();
    const { results: [created] } = await pushOk(alice, { ops: [upsert("tasks", synced, { list_id: alice.userId, title: "synced" })] });
    const loaded = await restoredTasks(alice, ["a", "b"]);
    const before = await usage(alice);

    // An admin script, as the owner (docs/sync.md "Writes the triggers cannot see").
    await adminSql`update public.tasks set title = title where list_id = ${alice.userId}`;
    const pulled = new Map((await pullAll(alice)).changes.map((c) => [c.id, c]));
    expect(pulled.get(synced)!.version).toBe(created.record!.version);
    for (const id of loaded) expect((await call(`/v1/sync/records/tasks/${id}`, { token: alice.token })).status).toBe(200);
    expect(loaded.map((id) => pulled.get(id)?.data?.title)).toEqual(["a", "b"]);
    // The owner's write counts for nobody, as the owner's insert would.
    expect(await usage(alice)).toBe(before);
  });
});
