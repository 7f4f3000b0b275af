// The real client (client/) on two users' devices against real Deno +
// Postgres: Alice shares a list with Bob as a viewer (the Data API calls an
// app makes with supabase-js), Bob's device receives it, his edit comes back
// FORBIDDEN as an event with his row back at the server's state, and once
// Alice removes him his next sync drops the list, its tasks and his queued op;
// memberships sync too: a role changed on the owner's device, a member leaving.
// A task Bob created offline in the shared list and then moved to his own list
// is kept when he loses the shared list before his device syncs: his last
// write makes the record one the server takes.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { FetchFunction } from "../../client/api-client.ts";
import { TidesyncClient, type TidesyncClientOptions } from "../../client/sync-client.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { clientDevice } from "../support/client-device.ts";
import { asUser, removeMember, settled, share } from "../support/shared-lists.ts";

/**
 * A phone of `user`: session bound to a new installation, the real client on an in-memory store.
 * `network.loseBatchAnswer`: the next push reaches the server, and its answer is lost.
 */
async function device(user: TestUser, options: Pick<TidesyncClientOptions, "backoff" | "maxOpsPerBatch"> = {}) {
  const network = { loseBatchAnswer: false, whileLost: async () => {} };
  const fetch: FetchFunction = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    if (!network.loseBatchAnswer || !String(input).endsWith("/v1/sync/batch")) return response;
    network.loseBatchAnswer = false;
    await response.arrayBuffer();
    await network.whileLost();
    throw new TypeError("connection reset (test: the answer is lost)");
  };
  const { client, events } = await clientDevice(user, { fetch, ...options });
  return { client, events, network };
}

const titles = async (client: TidesyncClient, collection: string) => (await client.list(collection)).map((r) => r.data?.title).sort();

describe("the client on shared lists", () => {
  it("share as viewer → Bob's device receives the list; his edit is FORBIDDEN and reverted; removal drops the list from his device", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const aliceDevice = await device(alice);
    const bobDevice = await device(bob);
    await settled();
    await bobDevice.client.sync();
    expect(await titles(bobDevice.client, "lists")).toEqual(["Personal"]);

    // Alice creates a list offline-first; a task id as Swift's UUID().uuidString writes it.
    const list = await aliceDevice.client.create("lists", { title: "Groceries" });
    const milk = randomUUID().toUpperCase();
    await aliceDevice.client.upsert("tasks", milk, { list_id: list, title: "Milk" });
    const bread = await aliceDevice.client.create("tasks", { list_id: list, title: "Bread" });
    await aliceDevice.client.sync();
    expect((await aliceDevice.client.get("tasks", milk))).toMatchObject({ id: milk.toLowerCase(), pending: false, data: { title: "Milk" } });
    expect(aliceDevice.client.schema?.collections).toEqual(expect.arrayContaining(["lists", "tasks"]));

    // supabase-js: rpc('create_list_invite', { p_list_id, p_role: 'viewer' }) by Alice, rpc('accept_list_invite', { p_code }) by Bob.
    await share(alice, list, bob, "viewer");
    await settled();
    await bobDevice.client.sync();
    expect(await titles(bobDevice.client, "lists")).toEqual(["Groceries", "Personal"]);
    expect(await titles(bobDevice.client, "tasks")).toEqual(["Bread", "Milk"]);
    // Who shares the list, with which role, is on his device too (list_members is synced).
    const members = (await bobDevice.client.list("list_members")).filter((m) => m.data?.list_id === list);
    expect(members.map((m) => [m.data?.user_id, m.data?.role]).sort()).toEqual([[alice.userId, "owner"], [bob.userId, "viewer"]].sort());

    // Bob edits offline; Alice renames the task meanwhile.
    await bobDevice.client.upsert("tasks", milk, { title: "Viewer edit" });
    expect((await bobDevice.client.get("tasks", milk))).toMatchObject({ pending: true, data: { title: "Viewer edit" } });
    await aliceDevice.client.upsert("tasks", milk, { title: "Milk (2 l)" });
    await aliceDevice.client.sync();
    const report = await bobDevice.client.sync();
    expect(report).toMatchObject({ rejected: 1, applied: 0 });
    expect(bobDevice.events).toContainEqual(expect.objectContaining({
      type: "op_rejected",
      error: expect.objectContaining({ code: "FORBIDDEN" }),
      op: expect.objectContaining({ record_id: milk.toLowerCase() }),
      record: expect.objectContaining({ data: expect.objectContaining({ title: "Milk (2 l)" }) }),
      dropped: false,
    }));
    expect((await bobDevice.client.get("tasks", milk))).toMatchObject({ pending: false, data: { title: "Milk (2 l)" } });
    expect(bobDevice.client.status.pending).toBe(0);

    // Bob queues another edit; Alice removes him: from('list_members').delete().eq('list_id', list).eq('user_id', bob).
    await bobDevice.client.upsert("tasks", bread, { done: true });
    await removeMember(alice, list, bob);
    bobDevice.events.length = 0;
    await settled();
    await bobDevice.client.sync();
    expect(await titles(bobDevice.client, "lists")).toEqual(["Personal"]);
    expect((await bobDevice.client.list("tasks"))).toEqual([]);
    // What stays: his personal list and his membership of it.
    const kept = await bobDevice.client.serverRecords();
    expect(kept.map((r) => `${r.collection} of ${r.collection === "lists" ? r.id : r.data?.list_id}`).sort())
      .toEqual([`list_members of ${bob.userId}`, `lists of ${bob.userId}`]);
    expect(bobDevice.client.pendingOps()).toEqual([]);
    // His queued op was pushed first: NOT_FOUND (he can no longer see the task), reported, dropped.
    expect(bobDevice.events).toContainEqual(expect.objectContaining({
      type: "op_rejected", error: expect.objectContaining({ code: "NOT_FOUND" }), op: expect.objectContaining({ record_id: bread }), dropped: true,
    }));
    expect(bobDevice.events).toContainEqual(expect.objectContaining({ type: "write_discarded", reason: "rejected", record_id: bread }));

    // Nothing of the list comes back; Alice's device still has all of it.
    await aliceDevice.client.upsert("tasks", bread, { title: "Rye bread" });
    await aliceDevice.client.sync();
    await settled();
    await bobDevice.client.sync();
    expect((await bobDevice.client.list("tasks"))).toEqual([]);
    expect(await titles(aliceDevice.client, "tasks")).toEqual(["Milk (2 l)", "Rye bread"]);
  });

  it("memberships on devices: an owner's device changes a role offline, a member's device leaves the list by deleting its own", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const aliceDevice = await device(alice);
    const bobDevice = await device(bob);
    const list = await aliceDevice.client.create("lists", { title: "Team" });
    await aliceDevice.client.create("tasks", { list_id: list, title: "Plan" });
    await aliceDevice.client.sync();
    await share(alice, list, bob, "viewer");
    await settled();
    await aliceDevice.client.sync();
    await bobDevice.client.sync();
    const membership = async (client: TidesyncClient, user: TestUser) =>
      (await client.list("list_members")).find((m) => m.data?.list_id === list && m.data?.user_id === user.userId);

    // Alice makes Bob an editor on her device, offline; it syncs; Bob's device learns it and his edit goes through.
    const bobs = (await membership(aliceDevice.client, bob))!;
    await aliceDevice.client.upsert("list_members", bobs.id, { role: "editor" });
    expect(await aliceDevice.client.sync()).toMatchObject({ applied: 1, rejected: 0 });
    await settled();
    await bobDevice.client.sync();
    expect((await membership(bobDevice.client, bob))?.data?.role).toBe("editor");
    const [task] = await bobDevice.client.list("tasks");
    await bobDevice.client.upsert("tasks", task.id, { done: true });
    expect(await bobDevice.client.sync()).toMatchObject({ applied: 1, rejected: 0 });

    // Bob leaves: his device deletes his membership; the list leaves his device, and Alice's shows him gone.
    await bobDevice.client.delete("list_members", bobs.id);
    expect(await bobDevice.client.sync()).toMatchObject({ applied: 1, rejected: 0 });
    // (the removal is listed once every transaction older than the leave has ended, in the whole
    // cluster: other test files hold theirs open)
    await settled();
    await bobDevice.client.sync();
    expect(await titles(bobDevice.client, "lists")).toEqual(["Personal"]);
    expect(await bobDevice.client.list("tasks")).toEqual([]);
    await settled();
    await aliceDevice.client.sync();
    expect(await membership(aliceDevice.client, bob)).toBeUndefined();
    expect((await aliceDevice.client.list("tasks")).map((t) => t.data?.done)).toEqual([true]);
  });

  it("an edit queued behind an unanswered create, then the list is taken away: NOT_FOUND and dropped, not a create refused for list_id", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const aliceDevice = await device(alice);
    const bobDevice = await device(bob, { backoff: { baseMs: 1, maxMs: 1, maxAttempts: 1 } });
    const list = await aliceDevice.client.create("lists", { title: "Team" });
    await aliceDevice.client.sync();
    await share(alice, list, bob, "editor");
    await settled();
    await bobDevice.client.sync();

    // Bob's create reaches the server; its answer is lost while he edits the task.
    const task = await bobDevice.client.create("tasks", { list_id: list, title: "Draft" });
    bobDevice.network.loseBatchAnswer = true;
    bobDevice.network.whileLost = () => bobDevice.client.upsert("tasks", task, { title: "Final" });
    await expect(bobDevice.client.sync()).rejects.toThrow();
    expect(bobDevice.client.pendingOps().map((p) => [p.sent, p.op.base_version])).toEqual([[true, null], [false, null]]);

    // Alice removes him before his device is back.
    await removeMember(alice, list, bob);
    await settled();
    const report = await bobDevice.client.sync();
    expect(report).toMatchObject({ duplicates: 1, rejected: 1 });
    expect(bobDevice.events.filter((e) => e.type === "op_rejected")).toEqual([expect.objectContaining({
      error: expect.objectContaining({ code: "NOT_FOUND" }), op: expect.objectContaining({ record_id: task, data: { title: "Final" } }), dropped: true,
    })]);
    expect(bobDevice.events).toContainEqual(expect.objectContaining({ type: "write_discarded", reason: "rejected", record_id: task }));
    expect(await bobDevice.client.get("tasks", task)).toBeUndefined();
    expect(bobDevice.client.pendingOps()).toEqual([]);
    // The task Bob created stays in Alice's list as his first push wrote it.
    await settled();
    await aliceDevice.client.sync();
    expect(await aliceDevice.client.get("tasks", task)).toMatchObject({ data: { title: "Draft", list_id: list } });
  });
});

describe("a task created offline in a shared list, then moved to the user's own list, when the shared list is lost before the device syncs", () => {
  // Another write between the create and the move, so the two writes of the task are two ops.
  const losses = {
    "Bob removed from the list": { code: "NOT_FOUND", lose: (alice: TestUser, list: string, bob: TestUser) => removeMember(alice, list, bob) },
    "the list deleted": { code: "NOT_FOUND", lose: (alice: TestUser, list: string) => asUser(alice, (tx) => tx`delete from public.lists where id = ${list}`) },
    "Bob demoted to viewer": { code: "FORBIDDEN", lose: (alice: TestUser, list: string, bob: TestUser) => asUser(alice, (tx) => tx`update public.list_members set role = 'viewer' where list_id = ${list} and user_id = ${bob.userId}`) },
  } as const;
  for (const [loss, { code, lose }] of Object.entries(losses)) {
    for (const maxOpsPerBatch of [500, 1]) {
      it(`${loss}, ${maxOpsPerBatch} op(s) per batch: the task ends in his own list with its title and notes; the create in the shared list is told refused (${code})`, async () => {
        const alice = await createTestUser();
        const bob = await createTestUser();
        const aliceDevice = await device(alice);
        const bobDevice = await device(bob, { backoff: { baseMs: 1, maxMs: 1, maxAttempts: 1 }, maxOpsPerBatch });
        const list = await aliceDevice.client.create("lists", { title: "Team" });
        await aliceDevice.client.sync();
        await share(alice, list, bob, "editor");
        await settled();
        await bobDevice.client.sync();

        const task = await bobDevice.client.create("tasks", { list_id: list, title: "Call the plumber", notes: "0123 456" });
        const other = await bobDevice.client.create("tasks", { list_id: bob.userId, title: "Something else" });
        await bobDevice.client.upsert("tasks", task, { list_id: bob.userId });
        const [created, moved] = bobDevice.client.pendingOps().filter((p) => p.op.record_id === task).map((p) => p.op);
        expect([created.data, moved.data]).toEqual([{ list_id: list, title: "Call the plumber", notes: "0123 456" }, { list_id: bob.userId }]);

        await lose(alice, list, bob);
        await settled();
        const report = await bobDevice.client.sync();
        expect(report).toMatchObject({ rejected: 1, queued: 0 });

        const [row] = await adminSql<{ list_id: string; title: string; notes: string }[]>`select list_id, title, notes from public.tasks where id = ${task}`;
        expect(row).toEqual({ list_id: bob.userId, title: "Call the plumber", notes: "0123 456" });
        expect(await bobDevice.client.get("tasks", task)).toMatchObject({ pending: false, data: { list_id: bob.userId, title: "Call the plumber", notes: "0123 456" } });
        expect(await bobDevice.client.get("tasks", other)).toMatchObject({ pending: false, data: { title: "Something else" } });
        // The app hears of the create refused in the shared list, carried on by the move: nothing of the task is lost.
        const told = bobDevice.events.filter((e) => "record_id" in e ? e.record_id === task : "op" in e && e.op.record_id === task);
        expect(told).toEqual([expect.objectContaining({
          type: "op_rejected", op: created, error: expect.objectContaining({ code }), dropped: false, foldedInto: moved.op_id,
        })]);
        expect(bobDevice.client.pendingOps()).toEqual([]);
      });
    }
  }
});

describe("a create refused and carried on by a later write, with a record created in it between the two", () => {
  it("a list whose create is refused (title too long, queued unchecked), a task created in it, then the list renamed: both end on the server and the device", async () => {
    const bob = await createTestUser();
    await settled();
    // A device that never synced queues writes unchecked (the catalog comes with its first sync).
    const bobDevice = await device(bob, { backoff: { baseMs: 1, maxMs: 1, maxAttempts: 1 } });
    const list = await bobDevice.client.create("lists", { title: "x".repeat(250) });
    const task = await bobDevice.client.create("tasks", { list_id: list, title: "Milk" });
    await bobDevice.client.upsert("lists", list, { title: "Groceries" });
    const [createdList, createdTask, renamed] = bobDevice.client.pendingOps().map((p) => p.op);
    const report = await bobDevice.client.sync();
    expect(report).toMatchObject({ rejected: 2, queued: 0 });

    // The task, refused NOT_FOUND while its list did not exist yet, is sent again after the rename that creates the list.
    expect(await adminSql`select title from public.lists where id = ${list}`).toEqual([{ title: "Groceries" }]);
    expect(await adminSql`select list_id, title from public.tasks where id = ${task}`).toEqual([{ list_id: list, title: "Milk" }]);
    expect(await bobDevice.client.get("lists", list)).toMatchObject({ pending: false, data: { title: "Groceries" } });
    expect(await bobDevice.client.get("tasks", task)).toMatchObject({ pending: false, data: { list_id: list, title: "Milk" } });
    const told = bobDevice.events.filter((e) => e.type === "op_rejected" || e.type === "write_discarded");
    expect(told).toEqual([
      expect.objectContaining({ type: "op_rejected", op: createdList, error: expect.objectContaining({ code: "VALIDATION_FAILED" }), dropped: false, foldedInto: renamed.op_id }),
      expect.objectContaining({ type: "op_rejected", op: createdTask, error: expect.objectContaining({ code: "NOT_FOUND" }), dropped: false, foldedInto: expect.any(String) }),
    ]);
    expect(bobDevice.client.pendingOps()).toEqual([]);
  });
});
