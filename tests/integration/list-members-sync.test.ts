// list_members as a synced collection, through the real function: a member's
// device pulls who shares each of their lists, with which role; a role change
// or a member leaving can be a push op, decided by the same policies as the
// Data API's (owners manage members, everyone may leave, nobody else writes);
// a membership is never created by an op (members join through invites).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { metaResponseSchema } from "../../functions/_shared/schemas/meta.ts";
import { adminSql, call, createTestUser } from "../support/harness.ts";
import { asUser, membershipIds, pullAll, pushOk, remove, sharedList, upsert } from "../support/shared-lists.ts";

/** A device's view of the memberships of `list` in a pull: user → [role, membership id, version]. */
function membersIn(changes: { collection: string; id: string; version: number; deleted: boolean; data: Record<string, unknown> | null }[], list: string) {
  return new Map(changes.filter((c) => c.collection === "list_members" && !c.deleted && c.data?.list_id === list)
    .map((c) => [String(c.data!.user_id), { role: c.data!.role, id: c.id, version: c.version }]));
}

describe("list_members synced", () => {
  it("GET /v1/meta lists list_members with its fields; a member's pull holds every membership of their lists", async () => {
    const { alice, bob, list } = await sharedList("viewer");
    const meta = await call("/v1/meta", { token: bob.token });
    expect(meta.status, meta.text).toBe(200);
    const schemas = metaResponseSchema.parse(meta.body);
    expect(schemas.collections).toContain("list_members");
    expect(schemas.collection_schemas.list_members.scope).toBe("list_id");
    // only the role is written by users, and only by an update
    expect(Object.entries(schemas.collection_schemas.list_members.fields).map(([name, f]) => [name, f.insertable, f.updatable])).toEqual([
      ["list_id", false, false], ["user_id", false, false], ["role", false, true], ["created_at", false, false],
    ]);
    const members = membersIn((await pullAll(bob)).changes, list);
    expect([...members].map(([user, m]) => [user, m.role]).sort()).toEqual([[alice.userId, "owner"], [bob.userId, "viewer"]].sort());
    expect([...members.values()].map((m) => m.id).sort()).toEqual((await membershipIds(list)).sort());
    // and the owner's device learns who joined
    expect([...membersIn((await pullAll(alice)).changes, list).keys()].sort()).toEqual([alice.userId, bob.userId].sort());
  });

  it("an owner's role change by push reaches the member, and decides their next write", async () => {
    const { alice, bob, list } = await sharedList("editor");
    const aliceView = await pullAll(alice);
    const bobView = await pullAll(bob);
    const bobs = membersIn(aliceView.changes, list).get(bob.userId)!;
    const task = randomUUID();
    const changed = await pushOk(alice, { ops: [upsert("list_members", bobs.id, { role: "viewer" }, bobs.version), upsert("tasks", task, { list_id: list, title: "t" })] });
    expect(changed.results.map((r) => r.status)).toEqual(["applied", "applied"]);
    expect(changed.results[0].record).toMatchObject({ collection: "list_members", id: bobs.id, data: { list_id: list, user_id: bob.userId, role: "viewer" } });
    const next = await pullAll(bob, bobView.cursor);
    expect(membersIn(next.changes, list).get(bob.userId)).toMatchObject({ role: "viewer", version: changed.results[0].record!.version });
    const edit = await pushOk(bob, { ops: [upsert("tasks", task, { title: "bob's" }, changed.results[1].record!.version)] });
    expect(edit.results[0]).toMatchObject({ status: "rejected", error: { code: "FORBIDDEN" } });
  });

  it("a Data API role change (from('list_members').update) shows up in pulls like a push's", async () => {
    const { alice, bob, list } = await sharedList("viewer");
    const bobView = await pullAll(bob);
    await asUser(alice, (tx) => tx`update public.list_members set role = 'editor' where list_id = ${list} and user_id = ${bob.userId}`);
    const next = await pullAll(bob, bobView.cursor);
    expect(next.changes.map((c) => [c.collection, c.data?.user_id, c.data?.role])).toEqual([["list_members", bob.userId, "editor"]]);
  });

  it("members cannot manage members: an editor's role change is FORBIDDEN, the rest of the batch runs; a stranger's is NOT_FOUND", async () => {
    const { alice, bob, list } = await sharedList("editor");
    const stranger = await createTestUser();
    const view = await pullAll(bob);
    const alices = membersIn(view.changes, list).get(alice.userId)!;
    const task = randomUUID();
    const body = await pushOk(bob, { ops: [
      upsert("list_members", alices.id, { role: "viewer" }, alices.version),
      remove("list_members", alices.id, alices.version),
      upsert("tasks", task, { list_id: list, title: "still works" }),
    ] });
    expect(body.results.map((r) => [r.status, r.error?.code])).toEqual([["rejected", "FORBIDDEN"], ["rejected", "FORBIDDEN"], ["applied", undefined]]);
    expect(body.results[0].record).toMatchObject({ id: alices.id, data: { role: "owner" } });
    const outside = await pushOk(stranger, { ops: [upsert("list_members", alices.id, { role: "viewer" }, alices.version), remove("list_members", alices.id, null)] });
    expect(outside.results.map((r) => [r.status, r.error?.code, r.record])).toEqual([["rejected", "NOT_FOUND", undefined], ["rejected", "NOT_FOUND", undefined]]);
  });

  it("only the role changes, and no op creates a membership (members join through invites)", async () => {
    const { alice, bob, list } = await sharedList("editor");
    const outsider = await createTestUser();
    const view = await pullAll(alice);
    const bobs = membersIn(view.changes, list).get(bob.userId)!;
    const body = await pushOk(alice, { ops: [
      upsert("list_members", bobs.id, { user_id: outsider.userId }, bobs.version),
      upsert("list_members", randomUUID(), { list_id: list, user_id: outsider.userId, role: "editor" }),
      upsert("list_members", randomUUID(), {}),
      upsert("list_members", bobs.id, { role: "admin" }, bobs.version),
    ] });
    expect(body.results.map((r) => [r.status, r.error?.code, r.error?.details?.map((d) => `${d.field} ${d.code}`)])).toEqual([
      ["rejected", "VALIDATION_FAILED", ["/ops/0/data/user_id read_only"]],
      ["rejected", "FORBIDDEN", undefined],
      ["rejected", "FORBIDDEN", undefined],
      ["rejected", "VALIDATION_FAILED", ["/ops/3/data/role check_failed"]],
    ]);
    expect(body.results[1].error!.message).toBe("you may not create records in this collection");
    expect((await membershipIds(list)).sort()).toEqual([...membersIn((await pullAll(alice)).changes, list).values()].map((m) => m.id).sort());
    expect([...membersIn((await pullAll(alice)).changes, list)].map(([user, m]) => [user, m.role]).sort()).toEqual([[alice.userId, "owner"], [bob.userId, "editor"]].sort());
  });

  it("a member leaves by deleting their membership: applied, and their next pull removes the list; the last owner cannot", async () => {
    const { alice, bob, list } = await sharedList("viewer");
    const task = randomUUID();
    await pushOk(alice, { ops: [upsert("tasks", task, { list_id: list, title: "t" })] });
    const bobView = await pullAll(bob);
    const bobs = membersIn(bobView.changes, list).get(bob.userId)!;
    const left = await pushOk(bob, { ops: [remove("list_members", bobs.id, bobs.version)] });
    expect(left.results[0]).toMatchObject({ status: "applied", record: { id: bobs.id, deleted: true, data: null } });
    const after = await pullAll(bob, bobView.cursor);
    expect(after.changes.map((c) => [c.id, c.deleted]).sort()).toEqual([list, task, ...[...membersIn(bobView.changes, list).values()].map((m) => m.id)].map((id) => [id, true]).sort());

    // Alice is the last owner: her leaving is refused by the database's rule, the rest of the batch runs.
    const aliceView = await pullAll(alice);
    const alices = membersIn(aliceView.changes, list).get(alice.userId)!;
    const listVersion = aliceView.changes.find((c) => c.id === list)!.version;
    const last = await pushOk(alice, { ops: [remove("list_members", alices.id, alices.version), upsert("lists", list, { title: "renamed" }, listVersion)] });
    expect(last.results.map((r) => [r.status, r.error?.code, r.error?.details?.[0]?.code])).toEqual([
      ["rejected", "VALIDATION_FAILED", "check_failed"], ["applied", undefined, undefined],
    ]);
    expect(last.results[0].error!.message).toContain("list_members_keep_an_owner");
    expect(last.results[0].record).toMatchObject({ id: alices.id, deleted: false, data: { role: "owner" } });
  });

  it("a member's last edits and their leaving in one batch are all applied, as in two batches; ops after the leave are decided while still a member", async () => {
    const { alice, bob, list } = await sharedList("editor");
    const task = randomUUID();
    const created = await pushOk(alice, { ops: [upsert("tasks", task, { list_id: list, title: "Plan" })] });
    const view = await pullAll(bob);
    const mine = membersIn(view.changes, list).get(bob.userId)!;
    const handover = randomUUID();
    const body = await pushOk(bob, { ops: [
      upsert("tasks", task, { title: "Plan (Bob's final notes)" }, created.results[0].record!.version),
      remove("list_members", mine.id, mine.version),
      upsert("tasks", handover, { list_id: list, title: "Handover for Alice" }),
    ] });
    expect(body.results.map((r) => [r.status, r.error?.code])).toEqual([["applied", undefined], ["applied", undefined], ["applied", undefined]]);
    expect(body.results[0].record).toMatchObject({ id: task, data: { title: "Plan (Bob's final notes)" } });
    expect((await asUser(alice, (tx) => tx<{ title: string }[]>`select title from public.tasks where list_id = ${list} order by title`)).map((r) => r.title))
      .toEqual(["Handover for Alice", "Plan (Bob's final notes)"]);
    // …and then the list leaves his device.
    const after = await pullAll(bob, view.cursor);
    expect(after.changes.filter((c) => !c.deleted)).toEqual([]);
    expect(after.changes.map((c) => c.id)).toEqual(expect.arrayContaining([list, task, handover]));
  });

  it("a member leaving after the owner changed their role: the leave is applied (the DELETE policy decides, not a conflict on a field they cannot write)", async () => {
    const { alice, bob, list } = await sharedList("editor");
    const bobView = await pullAll(bob);
    const mine = membersIn(bobView.changes, list).get(bob.userId)!;
    const onAlice = membersIn((await pullAll(alice)).changes, list).get(bob.userId)!;
    await pushOk(alice, { ops: [upsert("list_members", onAlice.id, { role: "viewer" }, onAlice.version)] });
    const left = await pushOk(bob, { ops: [remove("list_members", mine.id, mine.version)] });
    expect(left.results[0]).toMatchObject({ status: "applied", record: { id: mine.id, deleted: true } });
    const remaining = await asUser(alice, (tx) => tx<{ user_id: string }[]>`select user_id::text from public.list_members where list_id = ${list}`);
    expect(remaining.map((r) => r.user_id)).toEqual([alice.userId]);
    expect((await pullAll(bob, bobView.cursor)).changes.filter((c) => !c.deleted)).toEqual([]);
  });

  it("an owner's delete of a membership a co-owner changed since (on the older version): a conflict on the role, the member stays", async () => {
    const { alice, bob, list } = await sharedList("editor");
    const carol = await createTestUser();
    const [code] = await asUser(alice, (tx) => tx<{ code: string }[]>`select public.create_list_invite(${list}, 'owner') as code`);
    await asUser(carol, (tx) => tx`select public.accept_list_invite(${code.code})`);
    const seen = membersIn((await pullAll(alice)).changes, list).get(bob.userId)!;
    const onCarol = membersIn((await pullAll(carol)).changes, list).get(bob.userId)!;
    expect((await pushOk(carol, { ops: [upsert("list_members", onCarol.id, { role: "viewer" }, onCarol.version)] })).results[0].status).toBe("applied");
    const removal = await pushOk(alice, { ops: [remove("list_members", seen.id, seen.version)] });
    expect(removal.results[0]).toMatchObject({ status: "conflict", conflicting_fields: ["role"], record: { id: seen.id, deleted: false, data: { role: "viewer" } } });
    const members = await asUser(alice, (tx) => tx<{ user_id: string }[]>`select user_id::text from public.list_members where list_id = ${list}`);
    expect(members.map((m) => m.user_id)).toContain(bob.userId);
  });

  it("a viewer's delete of a task: FORBIDDEN on the current version; on an older one, a conflict first (another's newer edit is never deleted unseen)", async () => {
    const { alice, bob, list } = await sharedList("viewer");
    const task = randomUUID();
    const created = await pushOk(alice, { ops: [upsert("tasks", task, { list_id: list, title: "t" })] });
    const edited = await pushOk(alice, { ops: [upsert("tasks", task, { title: "t2" }, created.results[0].record!.version)] });
    const body = await pushOk(bob, { ops: [remove("tasks", task, created.results[0].record!.version), remove("tasks", task, edited.results[0].record!.version)] });
    expect(body.results.map((r) => [r.status, r.error?.code, r.conflicting_fields])).toEqual([["conflict", undefined, ["title"]], ["rejected", "FORBIDDEN", undefined]]);
    expect(body.results[1].record).toMatchObject({ id: task, deleted: false, data: { title: "t2" } });
  });

  it("an owner's role change and the list's delete in one batch are both applied (the membership goes with the list)", async () => {
    const { alice, bob, list } = await sharedList("editor");
    const view = await pullAll(alice);
    const bobs = membersIn(view.changes, list).get(bob.userId)!;
    const listVersion = view.changes.find((c) => c.id === list)!.version;
    const body = await pushOk(alice, { ops: [upsert("list_members", bobs.id, { role: "viewer" }, bobs.version), remove("lists", list, listVersion)] });
    expect(body.results.map((r) => [r.status, r.error?.code])).toEqual([["applied", undefined], ["applied", undefined]]);
    expect(await membershipIds(list)).toEqual([]);
  });

  it("an owner stepping down and handing the list over in one batch: the same answers whether or not another of their ops is refused", async () => {
    for (const withRefusal of [false, true]) {
      const { alice, bob, list } = await sharedList("editor");
      const view = await pullAll(alice);
      const members = membersIn(view.changes, list);
      const [alices, bobs] = [members.get(alice.userId)!, members.get(bob.userId)!];
      const personal = membersIn(view.changes, alice.userId).get(alice.userId)!;
      const body = await pushOk(alice, { ops: [
        upsert("list_members", alices.id, { role: "editor" }, alices.version),
        upsert("list_members", bobs.id, { role: "owner" }, bobs.version),
        // the only owner of her personal list cannot step down there: the database refuses it
        ...(withRefusal ? [upsert("list_members", personal.id, { role: "viewer" }, personal.version)] : []),
      ] });
      expect(body.results.map((r) => [r.status, r.error?.code]), `with a refusal: ${withRefusal}`).toEqual([
        ["applied", undefined], ["applied", undefined], ...(withRefusal ? [["rejected", "VALIDATION_FAILED"]] : []),
      ]);
      if (withRefusal) expect(body.results[2].error!.message).toMatch(/owner/);
      const roles = await adminSql<{ user_id: string; role: string }[]>`select user_id::text, role::text from public.list_members where list_id = ${list}`;
      expect(new Map(roles.map((r) => [r.user_id, r.role]))).toEqual(new Map([[alice.userId, "editor"], [bob.userId, "owner"]]));
    }
  });

  it("a co-owner's list delete and their leaving or stepping down, in one batch: the list is deleted", async () => {
    for (const then of ["leave", "step down", "leave first"] as const) {
      const { alice, bob, list } = await sharedList("owner");
      const task = randomUUID();
      const created = await pushOk(alice, { ops: [upsert("tasks", task, { list_id: list, title: "t" })] });
      const view = await pullAll(bob);
      const bobs = membersIn(view.changes, list).get(bob.userId)!;
      const listVersion = view.changes.find((c) => c.id === list)!.version;
      const aliceCursor = (await pullAll(alice)).cursor;
      const deleteList = remove("lists", list, listVersion);
      const own = then === "step down" ? upsert("list_members", bobs.id, { role: "editor" }, bobs.version) : remove("list_members", bobs.id, bobs.version);
      const body = await pushOk(bob, { ops: [
        ...(then === "leave first" ? [own, deleteList] : [deleteList, own]),
        upsert("tasks", task, { title: "after the delete" }, created.results[0].record!.version),
      ] });
      // The list went (with its task and memberships); the ops after its delete are answered as on
      // records deleted by then: a leave applied, a change a conflict with the tombstone. A leave
      // before it is judged with the batch's other membership writes, after the list's delete.
      expect(body.results.map((r) => [r.status, r.error?.code]), then).toEqual([
        ["applied", undefined], [then === "step down" ? "conflict" : "applied", undefined], ["conflict", undefined],
      ]);
      for (const result of body.results) expect(result.record, then).toMatchObject({ deleted: true, data: null });
      expect(body.results[2].conflicting_fields).toEqual(["*"]);
      expect(await membershipIds(list)).toEqual([]);
      const removed = (await pullAll(alice, aliceCursor)).changes.filter((c) => c.collection !== "list_members");
      expect(removed.map((c) => [c.collection, c.id, c.deleted]).sort(), then).toEqual([["lists", list, true], ["tasks", task, true]]);
    }
  });
});
