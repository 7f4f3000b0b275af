// Shared lists through the real function: sharing reaches the new member's
// next pull, roles decide writes, removal and moves reach devices, and a
// direct write through the Data API merges with an offline edit.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { changesResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { adminSql, call, createTestUser } from "../support/harness.ts";
import { applyChanges, asUser, membershipIds, personalKeys, pullAll, pushOk, remove, removeMember, settled, share, upsert } from "../support/shared-lists.ts";

/** Alice's two lists, Bob editor of one ("Edit", holding a task) and viewer of the other ("Read"). */
async function editorAndViewerOfAlice() {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const [editable, readOnly, task] = [randomUUID(), randomUUID(), randomUUID()];
  await pushOk(alice, { ops: [upsert("lists", editable, { title: "Edit" }), upsert("lists", readOnly, { title: "Read" }),
    upsert("tasks", task, { list_id: editable, title: "t" })] });
  await share(alice, editable, bob, "editor");
  await share(alice, readOnly, bob, "viewer");
  return { alice, bob, editable, readOnly, task };
}

describe("shared lists", () => {
  it("share → the member's next pull (with the cursor they hold) delivers the list; the editor's edit reaches the owner", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const list = randomUUID();
    const task = randomUUID();
    const created = await pushOk(alice, { ops: [upsert("lists", list, { title: "Groceries" }), upsert("tasks", task, { list_id: list, title: "Milk" })] });
    expect(created.results.map((r) => r.status)).toEqual(["applied", "applied"]);

    const bobStart = await pullAll(bob);
    expect(bobStart.changes.map((c) => c.id).sort()).toEqual([bob.userId, ...await membershipIds(bob.userId)].sort()); // only his personal list
    await share(alice, list, bob, "editor");
    const bobNext = await pullAll(bob, bobStart.cursor);
    // the list, its task and its two memberships (Alice owner, Bob editor)
    expect(bobNext.changes.filter((c) => !c.deleted).map((c) => c.id).sort()).toEqual([list, task, ...await membershipIds(list)].sort());
    expect(bobNext.changes.filter((c) => c.collection === "list_members").map((c) => [c.data?.user_id, c.data?.role]).sort())
      .toEqual([[alice.userId, "owner"], [bob.userId, "editor"]].sort());

    const aliceStart = await pullAll(alice);
    const version = bobNext.changes.find((c) => c.id === task)!.version;
    const edit = await pushOk(bob, { ops: [upsert("tasks", task, { done: true }, version)] });
    expect(edit.results[0].status, JSON.stringify(edit.results[0])).toBe("applied");
    const aliceNext = await pullAll(alice, aliceStart.cursor);
    expect(aliceNext.changes).toEqual([expect.objectContaining({ id: task, deleted: false, data: expect.objectContaining({ title: "Milk", done: true }) })]);
  });

  it("a viewer's op is rejected FORBIDDEN while the rest of the batch runs; an invisible row is NOT_FOUND", async () => {
    const alice = await createTestUser();
    const vic = await createTestUser();
    const list = randomUUID();
    const task = randomUUID();
    const secret = randomUUID();
    await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", task, { list_id: list, title: "t" }),
      upsert("tasks", secret, { list_id: alice.userId, title: "private" })] });
    await share(alice, list, vic, "viewer");
    const own = randomUUID();
    const body = await pushOk(vic, { ops: [
      upsert("tasks", task, { title: "viewer edit" }, null),
      upsert("tasks", randomUUID(), { list_id: list, title: "viewer add" }),
      upsert("tasks", own, { list_id: vic.userId, title: "mine" }),
      upsert("tasks", secret, { title: "peek" }, 1),
      remove("tasks", secret, null),
      upsert("tasks", secret, { list_id: vic.userId, title: "take over" }),
      remove("tasks", randomUUID(), null),
    ] });
    expect(body.results.map((r) => [r.status, r.error?.code])).toEqual([
      ["rejected", "FORBIDDEN"], ["rejected", "FORBIDDEN"], ["applied", undefined],
      ["rejected", "NOT_FOUND"], ["rejected", "NOT_FOUND"], ["rejected", "NOT_FOUND"], ["rejected", "NOT_FOUND"],
    ]);
    // another user's id and an unknown id get the same answer
    expect(body.results[5].error).toEqual({ ...body.results[6].error, details: body.results[5].error!.details });
    expect(body.results[0].record).toMatchObject({ id: task, data: expect.objectContaining({ title: "t" }) });
    expect(body.results[3].record).toBeUndefined();
  });

  it("rejected ops carry the record as it stands on the server, also when the database refuses a chain of ops on it", async () => {
    const { bob, editable, readOnly, task } = await editorAndViewerOfAlice();
    const seen = (await pullAll(bob)).changes.find((c) => c.id === task)!;

    // Bob may see the viewer's list, so the planner lets the move through; the tasks policy's
    // WITH CHECK refuses it. Every op of that record is rejected, and each says what the record still is.
    const refused = await pushOk(bob, { ops: [
      upsert("tasks", task, { title: "renamed" }, seen.version),
      upsert("tasks", task, { title: "x".repeat(201) }, seen.version),
      upsert("tasks", task, { list_id: readOnly }, seen.version),
    ] });
    expect(refused.results.map((r) => [r.status, r.error?.code])).toEqual([
      ["rejected", "FORBIDDEN"], ["rejected", "VALIDATION_FAILED"], ["rejected", "FORBIDDEN"],
    ]);
    for (const result of refused.results) {
      expect(result.record).toEqual({ collection: "tasks", id: task, version: seen.version, deleted: false, data: seen.data, updated_at: seen.updated_at });
    }

    // Not refused: a rejected op after an applied one carries the record as stored (its real version).
    const chain = await pushOk(bob, { ops: [upsert("tasks", task, { title: "renamed" }, seen.version), upsert("tasks", task, { title: "" }, seen.version)] });
    expect(chain.results.map((r) => r.status)).toEqual(["applied", "rejected"]);
    expect(chain.results[1].record).toEqual(chain.results[0].record);
    const pulled = (await pullAll(bob)).changes.find((c) => c.id === task)!;
    expect(chain.results[1].record).toEqual(pulled);
  });

  it("a task deleted and re-created where the database refuses the new row: the delete stands, the re-create is rejected with the tombstone", async () => {
    const { bob, editable, readOnly, task } = await editorAndViewerOfAlice();
    const start = await pullAll(bob);
    const seen = start.changes.find((c) => c.id === task)!;

    // The planner lets the new row into a list Bob can see; the tasks policy refuses it there.
    const body = await pushOk(bob, { ops: [remove("tasks", task, seen.version), upsert("tasks", task, { list_id: readOnly, title: "t" })] });
    expect(body.results.map((r) => [r.status, r.error?.code])).toEqual([["applied", undefined], ["rejected", "FORBIDDEN"]]);
    expect(body.results[0].record).toMatchObject({ id: task, deleted: true, data: null });
    expect(body.results[0].record!.version).toBeGreaterThan(seen.version);
    expect(body.results[1].record).toEqual(body.results[0].record);
    expect(await adminSql`select 1 from public.tasks where id = ${task}`).toHaveLength(0);
    expect((await pullAll(bob, start.cursor)).changes).toEqual([expect.objectContaining({ id: task, deleted: true, version: body.results[0].record!.version })]);
  });

  it("an editor's delete of the list, refused by the database, does not take the batch's other ops in it down: they apply", async () => {
    const { alice, bob, editable } = await editorAndViewerOfAlice();
    const view = await pullAll(bob);
    const task = randomUUID();
    const body = await pushOk(bob, { ops: [
      remove("lists", editable, view.changes.find((c) => c.id === editable)!.version),
      upsert("tasks", task, { list_id: editable, title: "added with the delete" }),
    ] });
    expect(body.results.map((r) => [r.status, r.error?.code])).toEqual([["rejected", "FORBIDDEN"], ["applied", undefined]]);
    expect(body.results[0].record).toMatchObject({ id: editable, deleted: false, data: { title: "Edit" } });
    expect(await asUser(alice, (tx) => tx`select title from public.tasks where id = ${task}`)).toEqual([{ title: "added with the delete" }]);
    // The same batch again: duplicates with the same answers.
    const again = await pushOk(bob, { ops: body.results.map((r, i) => ({ ...[remove("lists", editable, 0), upsert("tasks", task, {})][i], op_id: r.op_id })) });
    expect(again.results.map((r) => [r.status, r.original_status])).toEqual([["duplicate", "rejected"], ["duplicate", "applied"]]);
  });

  it("removal → the removed member's next pull removes every row of the list, and nothing of it ever again", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const list = randomUUID();
    const tasks = [randomUUID(), randomUUID(), randomUUID()];
    await pushOk(alice, { ops: [upsert("lists", list, { title: "Trip" }), ...tasks.map((id) => upsert("tasks", id, { list_id: list, title: id }))] });
    await share(alice, list, bob, "editor");
    const bobView = await pullAll(bob);
    const local = applyChanges(new Map(), bobView.changes);
    expect(local.size).toBe(8); // his personal list and membership; the list, its 3 tasks and 2 memberships
    const members = await membershipIds(list);
    await removeMember(alice, list, bob);
    await pushOk(alice, { ops: [upsert("tasks", randomUUID(), { list_id: list, title: "after removal" })] });
    const after = await pullAll(bob, bobView.cursor);
    expect(after.changes.every((c) => c.deleted && c.data === null)).toBe(true);
    expect(after.changes.map((c) => c.id).sort()).toEqual([list, ...tasks, ...members].sort());
    expect(after.changes.every((c) => c.reason === "access_revoked")).toBe(true);
    applyChanges(local, after.changes);
    expect([...local.keys()].sort()).toEqual(await personalKeys(bob));
    // his queued op for the list comes back rejected
    const queued = await pushOk(bob, { ops: [upsert("tasks", tasks[0], { done: true }, 1)] });
    expect(queued.results[0]).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });
    await pushOk(alice, { ops: [upsert("tasks", tasks[1], { title: "later" })] });
    expect((await pullAll(bob, after.cursor)).changes).toEqual([]);
  });

  it("a shared list deleted and re-created in one batch is deleted (its tasks and members go, the member's next pull removes it) and created anew", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const [list, oldTask, newTask] = [randomUUID(), randomUUID(), randomUUID()];
    const created = await pushOk(alice, { ops: [upsert("lists", list, { title: "Trip", color: "#aabbcc", position: 3 }), upsert("tasks", oldTask, { list_id: list, title: "old" })] });
    await share(alice, list, bob, "editor");
    const bobView = await pullAll(bob);
    const local = applyChanges(new Map(), bobView.changes);
    expect(local.has(`tasks/${oldTask}`)).toBe(true);
    const aliceView = await pullAll(alice);
    const oldMembers = await membershipIds(list);

    const body = await pushOk(alice, { ops: [
      remove("lists", list, created.results[0].record!.version),
      upsert("lists", list, { title: "Brand new" }),
      upsert("tasks", newTask, { list_id: list, title: "in the new list" }),
    ] });
    expect(body.results.map((r) => r.status)).toEqual(["applied", "applied", "applied"]);
    expect(body.results[1].record!.data).toMatchObject({ title: "Brand new", color: null, position: 0 });
    expect(body.results[0].record).toEqual(body.results[1].record);
    const members = await adminSql<{ user_id: string; role: string }[]>`select user_id::text, role from public.list_members where list_id = ${list}`;
    expect(members).toEqual([{ user_id: alice.userId, role: "owner" }]);
    expect((await adminSql`select id from public.tasks where list_id = ${list}`).map((r) => r.id)).toEqual([newTask]);

    // Bob lost the list with the old row: his next pull removes all of it and shows nothing of the new one.
    const after = await pullAll(bob, bobView.cursor);
    expect(after.changes.map((c) => [c.id, c.deleted]).sort()).toEqual([[list, true], [oldTask, true], ...oldMembers.map((m) => [m, true])].sort());
    applyChanges(local, after.changes);
    expect([...local.keys()].sort()).toEqual(await personalKeys(bob));
    const queued = await pushOk(bob, { ops: [upsert("lists", list, { title: "bob's edit" }, bobView.changes.find((c) => c.id === list)!.version)] });
    expect(queued.results[0]).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });
    // Alice's other device: the new list and its task, the old task removed.
    const aliceNext = await pullAll(alice, aliceView.cursor);
    // (her old membership and Bob's removed, her new one present)
    expect(aliceNext.changes.map((c) => [c.id, c.deleted]).sort())
      .toEqual([[list, false], [oldTask, true], [newTask, false], ...oldMembers.map((m) => [m, true]), ...(await membershipIds(list)).map((m) => [m, false])].sort());
    expect(aliceNext.changes.find((c) => c.id === list)).toEqual(body.results[1].record);
  });

  it("removed and re-added before the device caught up: rows deleted or moved away meanwhile are removed, not kept for ever", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const list = randomUUID();
    const elsewhere = randomUUID();
    const [kept, deleted, moved] = [randomUUID(), randomUUID(), randomUUID()];
    const created = await pushOk(alice, { ops: [
      upsert("lists", list, { title: "Team" }), upsert("lists", elsewhere, { title: "Alice only" }),
      ...[kept, deleted, moved].map((id) => upsert("tasks", id, { list_id: list, title: id })),
    ] });
    await share(alice, list, bob, "editor");
    const start = await pullAll(bob);
    const local = applyChanges(new Map(), start.changes);
    expect(local.has(`tasks/${deleted}`) && local.has(`tasks/${moved}`)).toBe(true);

    // Alice deletes one task and moves another out; then Bob writes in his own list; then Alice removes him.
    const version = (id: string) => created.results.find((r) => r.record?.id === id)!.record!.version;
    await pushOk(alice, { ops: [remove("tasks", deleted, version(deleted)), upsert("tasks", moved, { list_id: elsewhere }, version(moved))] });
    await pushOk(bob, { ops: [upsert("tasks", randomUUID(), { list_id: bob.userId, title: "mine" })] });
    await removeMember(alice, list, bob);
    // Bob's device reads one page: his own write, which comes after Alice's changes (invisible to him now).
    await settled();
    const first = await call(`/v1/sync/changes?limit=1&cursor=${encodeURIComponent(start.cursor)}`, { token: bob.token });
    expect(first.status, first.text).toBe(200);
    const page = changesResponseSchema.parse(first.body);
    expect(page.changes.map((c) => c.data?.title)).toEqual(["mine"]);
    expect(page.has_more).toBe(true);
    applyChanges(local, page.changes);

    // He is back before his device reads on: the rows that left the list meanwhile must leave his device.
    await share(alice, list, bob, "viewer");
    const rest = await pullAll(bob, page.cursor);
    applyChanges(local, rest.changes);
    expect(rest.changes).toEqual(expect.arrayContaining([
      expect.objectContaining({ id: deleted, deleted: true, data: null }),
      expect.objectContaining({ id: moved, deleted: true, data: null }),
      expect.objectContaining({ id: kept, deleted: false }),
    ]));
    expect([...local.keys()].filter((k) => k.startsWith("tasks/") && !local.get(k)?.title?.toString().startsWith("mine")).sort())
      .toEqual([`tasks/${kept}`]);
  });

  it("a deleted list's id: a former member removed before the delete cannot create it again (NOT_FOUND, as a taken id) nor learn what it held after them; a member when it was deleted can", async () => {
    const alice = await createTestUser();
    const carol = await createTestUser();
    const dave = await createTestUser();
    const list = randomUUID();
    const [t1, t2, t3] = [randomUUID(), randomUUID(), randomUUID()];
    await pushOk(alice, { ops: [upsert("lists", list, { title: "Team" }), upsert("tasks", t1, { list_id: list, title: "t1" })] });
    await share(alice, list, carol, "editor");
    const carolStart = await pullAll(carol);
    await removeMember(alice, list, carol);
    const carolRemoved = await pullAll(carol, carolStart.cursor);
    expect(carolRemoved.changes.map((c) => c.id)).toContain(t1);

    // After Carol: Dave joins, t2 and t3 are added, t3 moves to Alice's personal list, the list is deleted.
    await share(alice, list, dave, "viewer");
    const added = await pushOk(alice, { ops: [upsert("tasks", t2, { list_id: list, title: "t2" }), upsert("tasks", t3, { list_id: list, title: "t3" })] });
    const daveMembership = (await adminSql<{ id: string }[]>`select id::text from public.list_members where list_id = ${list} and user_id = ${dave.userId}`)[0].id;
    await pushOk(alice, { ops: [upsert("tasks", t3, { list_id: alice.userId }, added.results[1].record!.version)] });
    const daveView = await pullAll(dave);
    const listVersion = daveView.changes.find((c) => c.id === list)!.version;
    await pushOk(alice, { ops: [remove("lists", list, listVersion)] });

    // Carol's create of the id is answered as a create over another user's list is: nothing says it was one.
    const recreated = await pushOk(carol, { ops: [upsert("lists", list, { title: "Mine now" })] });
    const othersList = randomUUID();
    await pushOk(dave, { ops: [upsert("lists", othersList, { title: "Dave's" })] });
    const taken = await pushOk(carol, { ops: [upsert("lists", othersList, { title: "Mine now" })] });
    expect(recreated.results[0]).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });
    expect(recreated.results[0].error).toEqual(taken.results[0].error);
    expect(recreated.results[0].record).toBeUndefined();
    // Her pull with the cursor she holds lists nothing: not t2, t3 (live in Alice's private list) nor Dave's membership.
    expect((await pullAll(carol, carolRemoved.cursor)).changes).toEqual([]);
    await expect(asUser(carol, (tx) => tx`insert into public.lists (id, title) values (${list}, 'Data API')`)).rejects.toMatchObject({ code: "23505" });

    // Dave, a member when it was deleted, read all of it then: he may create it again.
    const byDave = await pushOk(dave, { ops: [upsert("lists", list, { title: "Dave's again" })] });
    expect(byDave.results[0].status).toBe("applied");
    expect((await pullAll(carol, carolRemoved.cursor)).changes).toEqual([]);
    const daveNext = await pullAll(dave, daveView.cursor);
    expect(daveNext.changes.map((c) => c.id)).toEqual(expect.arrayContaining([list, t2, t3, daveMembership]));
  });

  it("a task moved to another list reaches exactly the members who can see it now and leaves the others", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const carol = await createTestUser();
    const home = randomUUID();
    const work = randomUUID();
    const task = randomUUID();
    const created = await pushOk(alice, { ops: [upsert("lists", home, { title: "Home" }), upsert("lists", work, { title: "Work" }), upsert("tasks", task, { list_id: home, title: "t" })] });
    await share(alice, home, bob, "viewer");
    await share(alice, work, carol, "viewer");
    const bobStart = await pullAll(bob);
    const carolStart = await pullAll(carol);
    expect(bobStart.changes.some((c) => c.id === task)).toBe(true);
    expect(carolStart.changes.some((c) => c.id === task)).toBe(false);
    const moved = await pushOk(alice, { ops: [upsert("tasks", task, { list_id: work }, created.results[2].record!.version)] });
    expect(moved.results[0].status).toBe("applied");
    expect((await pullAll(bob, bobStart.cursor)).changes).toEqual([expect.objectContaining({ id: task, deleted: true, data: null })]);
    expect((await pullAll(carol, carolStart.cursor)).changes).toEqual([expect.objectContaining({ id: task, deleted: false, data: expect.objectContaining({ list_id: work }) })]);
  });

  it("a direct write as `authenticated` (what PostgREST does) merges field by field with an offline edit", async () => {
    const alice = await createTestUser();
    const task = randomUUID();
    const created = await pushOk(alice, { ops: [upsert("tasks", task, { list_id: alice.userId, title: "draft" })] });
    const base = created.results[0].record!.version;
    await asUser(alice, (tx) => tx`update public.tasks set done = true where id = ${task}`);
    const offline = await pushOk(alice, { device_id: undefined, ops: [upsert("tasks", task, { title: "final" }, base)] });
    expect(offline.results[0]).toMatchObject({ status: "applied", record: { data: expect.objectContaining({ title: "final", done: true }) } });
    const direct = await pullAll(alice);
    expect(direct.changes.find((c) => c.id === task)!.data).toMatchObject({ title: "final", done: true });
    // a direct delete reaches devices
    const before = await pullAll(alice);
    await asUser(alice, (tx) => tx`delete from public.tasks where id = ${task}`);
    expect((await pullAll(alice, before.cursor)).changes).toEqual([expect.objectContaining({ id: task, deleted: true })]);
  });
});
