// A write of a user whose role in a list is being taken away, made through the
// Data API (role authenticated with their claims, as PostgREST runs it) or the
// push. Alice demotes or removes Bob and holds her transaction open; Bob's write
// passes its policy check (it still sees him in his role), then waits for the
// list lock her change holds. Once she commits, his write must be judged by his
// new role: refused 42501 (the Data API's 403), or per op FORBIDDEN / NOT_FOUND
// (the push). Before migration 20261127000400 the Data API's went through: a
// demoted owner deleted the list, a removed owner removed another member, a
// removed editor's task landed in the list they had lost.
import { randomUUID } from "node:crypto";
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../functions/_shared/limits.ts";
import { syncBatchResponseSchema, type SyncOpEnvelope } from "../../functions/_shared/schemas/sync.ts";
import { pushBatch, StaleBatch } from "../../functions/api/sync/push-store.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { holdTransaction, type Isolation, waitersOf } from "../support/held-transactions.ts";
import { asUser, pullAll, push, pushOk, remove, removeMember, share, upsert } from "../support/shared-lists.ts";

type Role = "owner" | "editor" | "viewer";
type Change = "demote" | "remove";

/** Alice's list "L" with Bob in `role` (and Carol, an editor, when asked). */
async function listWith(role: Role, withCarol = false) {
  const [alice, bob, carol] = [await createTestUser(), await createTestUser(), await createTestUser()];
  const list = randomUUID();
  const created = await pushOk(alice, { ops: [upsert("lists", list, { title: "L" })] });
  await share(alice, list, bob, role);
  if (withCarol) await share(alice, list, carol, "editor");
  return { alice, bob, carol, list, version: created.results[0].record!.version as number };
}

const changeOf = (change: Change, bob: TestUser, list: string) => (tx: postgres.TransactionSql) =>
  change === "demote"
    ? tx`update public.list_members set role = 'viewer' where list_id = ${list} and user_id = ${bob.userId}`
    : tx`delete from public.list_members where list_id = ${list} and user_id = ${bob.userId}`;

/**
 * Alice's change runs and stays open; Bob's `write` starts and must wait for it
 * (the test sees it wait); then Alice commits. Returns how Bob's write settled.
 */
async function whileAliceChangesBob<T>(
  alice: TestUser,
  change: (tx: postgres.TransactionSql) => Promise<unknown>,
  write: () => Promise<T>,
  isolation: Isolation = "read committed",
): Promise<{ ok: true; value: T } | { ok: false; error: { code?: string } }> {
  const held = holdTransaction(change, { as: alice, isolation });
  let settled: Promise<{ ok: true; value: T } | { ok: false; error: { code?: string } }> | undefined;
  try {
    await Promise.race([held.ran, held.done.then(() => { throw new Error("Alice's change ended early"); })]);
    settled = write().then((value) => ({ ok: true as const, value }), (error) => ({ ok: false as const, error }));
    await waitersOf(await held.pid);
  } finally {
    held.commit();
  }
  await held.done;
  return await settled!;
}

async function title(list: string): Promise<string | undefined> {
  return (await adminSql<{ title: string }[]>`select title from public.lists where id = ${list}`)[0]?.title;
}

describe("a Data API write that waited for its writer's loss of role is judged by the new role", () => {
  for (const change of ["demote", "remove"] as const) {
    it(`${change} an owner while he deletes the list: 42501, the list stays`, async () => {
      const { alice, bob, list } = await listWith("owner");
      const out = await whileAliceChangesBob(alice, changeOf(change, bob, list),
        () => asUser(bob, (tx) => tx`delete from public.lists where id = ${list}`));
      expect(out).toMatchObject({ ok: false, error: { code: "42501" } });
      expect(await title(list)).toBe("L");
    });

    it(`${change} an owner while he renames the list: 42501, the title stays`, async () => {
      const { alice, bob, list } = await listWith("owner");
      const out = await whileAliceChangesBob(alice, changeOf(change, bob, list),
        () => asUser(bob, (tx) => tx`update public.lists set title = 'by bob' where id = ${list}`));
      expect(out).toMatchObject({ ok: false, error: { code: "42501" } });
      expect(await title(list)).toBe("L");
    });
  }

  it("remove an owner while he removes another member: 42501, she stays", async () => {
    const { alice, bob, carol, list } = await listWith("owner", true);
    const out = await whileAliceChangesBob(alice, changeOf("remove", bob, list),
      () => asUser(bob, (tx) => tx`delete from public.list_members where list_id = ${list} and user_id = ${carol.userId}`));
    expect(out).toMatchObject({ ok: false, error: { code: "42501" } });
    expect(await adminSql`select 1 from public.list_members where list_id = ${list} and user_id = ${carol.userId}`).toHaveLength(1);
  });

  it("remove an editor while he adds a task: 42501, no task in the list he lost", async () => {
    const { alice, bob, list } = await listWith("editor");
    const task = randomUUID();
    const out = await whileAliceChangesBob(alice, changeOf("remove", bob, list),
      () => asUser(bob, (tx) => tx`insert into public.tasks (id, list_id, title) values (${task}, ${list}, 'after removal')`));
    expect(out).toMatchObject({ ok: false, error: { code: "42501" } });
    expect(await adminSql`select 1 from public.tasks where id = ${task}`).toHaveLength(0);
  });

  it("under repeatable read, a rename that waited for the demotion fails as a serialization error", async () => {
    const { alice, bob, list } = await listWith("owner");
    const out = await whileAliceChangesBob(alice, changeOf("demote", bob, list), () =>
      adminSql.begin("isolation level repeatable read", async (tx) => {
        await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: bob.userId, role: "authenticated", session_id: bob.sessionId })}, true),
                        set_config('role', 'authenticated', true)`;
        await tx`update public.lists set title = 'by bob' where id = ${list}`;
      }));
    expect(out).toMatchObject({ ok: false, error: { code: "40001" } });
    expect(await title(list)).toBe("L");
  });

  it("the role kept: an owner's delete that waited for another member's demotion goes through", async () => {
    const { alice, bob, carol, list } = await listWith("owner", true);
    const out = await whileAliceChangesBob(alice,
      (tx) => tx`update public.list_members set role = 'viewer' where list_id = ${list} and user_id = ${carol.userId}`,
      () => asUser(bob, (tx) => tx`delete from public.list_members where list_id = ${list} and user_id = ${carol.userId}`));
    expect(out).toMatchObject({ ok: true });
    expect(await adminSql`select 1 from public.list_members where list_id = ${list} and user_id = ${carol.userId}`).toHaveLength(0);
  });
});

/**
 * Alice holds a row lock on `task` (her edit of it, open); Bob's `write` starts and waits for
 * it (the test sees it wait); Alice removes Bob from the list and commits that, then her edit.
 * Returns how Bob's write settled.
 */
async function whileBobIsRemovedBehindARowLock<T>(alice: TestUser, bob: TestUser, list: string, task: string, write: () => Promise<T>) {
  const held = holdTransaction((tx) => tx`update public.tasks set notes = 'held' where id = ${task}`, { as: alice });
  let settled: Promise<{ ok: true; value: T } | { ok: false; error: { code?: string; message?: string } }> | undefined;
  try {
    await Promise.race([held.ran, held.done.then(() => { throw new Error("Alice's edit ended early"); })]);
    settled = write().then((value) => ({ ok: true as const, value }), (error) => ({ ok: false as const, error }));
    await waitersOf(await held.pid);
    await removeMember(alice, list, bob);
  } finally {
    held.commit();
  }
  await held.done;
  return await settled!;
}

describe("a Data API write out of a list, that waited for a row lock while its writer was removed, is judged by the new role", () => {
  it("Bob's delete of Alice's task: 42501, the task stays and Alice's devices keep it", async () => {
    const { alice, bob, list } = await listWith("editor");
    const task = randomUUID();
    await pushOk(alice, { ops: [upsert("tasks", task, { list_id: list, title: "hers" })] });
    const { cursor } = await pullAll(alice);
    const out = await whileBobIsRemovedBehindARowLock(alice, bob, list, task,
      () => asUser(bob, (tx) => tx`delete from public.tasks where id = ${task}`));
    expect(out).toMatchObject({ ok: false, error: { code: "42501", message: `your role in list ${list} does not allow this write (as last committed: it may have changed while the write waited)`,
      hint: expect.stringContaining("its writer_role_rechecked_on_* trigger refuses") } });
    expect(await adminSql`select list_id from public.tasks where id = ${task}`).toEqual([{ list_id: list }]);
    const { changes } = await pullAll(alice, cursor);
    expect(changes.filter((c) => c.id === task).map((c) => [c.deleted, c.data?.notes])).toEqual([[false, "held"]]);
  });

  it("Bob's move of Alice's task into his personal list: 42501, the task stays in her list", async () => {
    const { alice, bob, list } = await listWith("editor");
    const task = randomUUID();
    await pushOk(alice, { ops: [upsert("tasks", task, { list_id: list, title: "hers" })] });
    const out = await whileBobIsRemovedBehindARowLock(alice, bob, list, task,
      () => asUser(bob, (tx) => tx`update public.tasks set list_id = ${bob.userId} where id = ${task}`));
    expect(out).toMatchObject({ ok: false, error: { code: "42501" } });
    expect(await adminSql`select list_id from public.tasks where id = ${task}`).toEqual([{ list_id: list }]);
    expect(await asUser(bob, (tx) => tx`select 1 from public.tasks where id = ${task}`)).toHaveLength(0);
  });

  it("the push's delete of it, as before: NOT_FOUND, the task stays", async () => {
    const { alice, bob, list } = await listWith("editor");
    const task = randomUUID();
    const created = await pushOk(alice, { ops: [upsert("tasks", task, { list_id: list, title: "hers" })] });
    const out = await whileBobIsRemovedBehindARowLock(alice, bob, list, task,
      () => push(bob, { ops: [remove("tasks", task, created.results[0].record!.version)] }));
    const response = (out as { value: Awaited<ReturnType<typeof push>> }).value;
    expect(syncBatchResponseSchema.parse(response.body).results[0]).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });
    expect(await adminSql`select list_id from public.tasks where id = ${task}`).toEqual([{ list_id: list }]);
  });

  it("the role kept: Bob's delete and move that waited for Alice's edit go through", async () => {
    const { alice, bob, list } = await listWith("editor");
    const [deleted, moved] = [randomUUID(), randomUUID()];
    await pushOk(alice, { ops: [upsert("tasks", deleted, { list_id: list, title: "d" }), upsert("tasks", moved, { list_id: list, title: "m" })] });
    for (const [task, write] of [
      [deleted, () => asUser(bob, (tx) => tx`delete from public.tasks where id = ${deleted}`)],
      [moved, () => asUser(bob, (tx) => tx`update public.tasks set list_id = ${bob.userId} where id = ${moved}`)],
    ] as const) {
      const held = holdTransaction((tx) => tx`update public.tasks set notes = 'held' where id = ${task}`, { as: alice });
      await held.ran;
      const settled = write();
      await waitersOf(await held.pid);
      held.commit();
      await held.done;
      expect((await settled).count).toBe(1);
    }
    expect(await adminSql`select id, list_id from public.tasks where id in (${deleted}, ${moved})`).toEqual([{ id: moved, list_id: bob.userId }]);
  });
});

describe("the push of a writer losing their role answers per op, as before", () => {
  const cases: [Change, "delete" | "rename", string][] = [
    ["demote", "delete", "FORBIDDEN"],
    ["demote", "rename", "FORBIDDEN"],
    ["remove", "delete", "NOT_FOUND"],
    ["remove", "rename", "NOT_FOUND"],
  ];
  for (const [change, write, code] of cases) {
    it(`${change} an owner while his push ${write}s the list: ${code}, the list as it was`, async () => {
      const { alice, bob, list, version } = await listWith("owner");
      const op = write === "delete" ? remove("lists", list, version) : upsert("lists", list, { title: "by bob" }, version);
      const out = await whileAliceChangesBob(alice, changeOf(change, bob, list), () => push(bob, { ops: [op] }));
      expect(out.ok).toBe(true);
      const response = (out as { value: Awaited<ReturnType<typeof push>> }).value;
      expect(response.status).toBe(200);
      expect(syncBatchResponseSchema.parse(response.body).results[0]).toMatchObject({ status: "rejected", error: { code } });
      expect(await title(list)).toBe("L");
    });
  }

  it("remove an editor while his push adds a task: NOT_FOUND, no task in the list", async () => {
    const { alice, bob, list } = await listWith("editor");
    const task = randomUUID();
    const out = await whileAliceChangesBob(alice, changeOf("remove", bob, list),
      () => push(bob, { ops: [upsert("tasks", task, { list_id: list, title: "after removal" })] }));
    const response = (out as { value: Awaited<ReturnType<typeof push>> }).value;
    expect(syncBatchResponseSchema.parse(response.body).results[0]).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });
    expect(await adminSql`select 1 from public.tasks where id = ${task}`).toHaveLength(0);
  });
});

describe("a list delete the database refuses only when the push is planned again", () => {
  it("an owner demoted between the push's two passes (planned again for another refusal): that pass is planned once more, the delete FORBIDDEN and the ops in the list applied as if it stays", async () => {
    const { alice, bob, list, version } = await listWith("owner");
    const [task, added] = [randomUUID(), randomUUID()];
    const created = await pushOk(alice, { ops: [upsert("tasks", task, { list_id: list, title: "t" })] });
    const batch = { ops: [
      upsert("tasks", task, { title: "edited before the delete" }, created.results[0].record!.version),
      remove("lists", list, version),
      upsert("tasks", added, { list_id: list, title: "added after the delete" }),
    ].map((op): SyncOpEnvelope => ({ ...op })) };
    // The first pass (Bob an owner) was rolled back; Alice demotes him before the second one.
    await asUser(alice, (tx) => tx`update public.list_members set role = 'editor' where list_id = ${list} and user_id = ${bob.userId}`);
    const secondPass = (refusedDeletes: StaleBatch["refusedDeletes"]) =>
      asUser(bob, (tx) => pushBatch(tx, batch, { sub: bob.userId, session_id: bob.sessionId }, DEFAULT_LIMITS, new Map(), true, refusedDeletes));
    // Planned as if the list went, its edit left to the cascade and its create NOT_FOUND: not
    // answered so (the edit "applied" unwritten, the create dropped by the client) but rolled back.
    const stale = await secondPass(new Map()).then(() => undefined, (error: unknown) => error);
    expect(stale).toBeInstanceOf(StaleBatch);
    expect([...(stale as StaleBatch).refusedDeletes.keys()]).toEqual([`lists/${list}`]);
    expect(await adminSql`select 1 from public.tasks where id = ${added}`).toHaveLength(0);
    // The pass after it knows the refusal: the list stays, and so do the ops in it.
    const { results } = await secondPass((stale as StaleBatch).refusedDeletes);
    expect(results.map((r) => [r.status, r.error?.code])).toEqual([["applied", undefined], ["rejected", "FORBIDDEN"], ["applied", undefined]]);
    expect(results[0].record).toMatchObject({ id: task, data: { title: "edited before the delete" } });
    expect(results[1].record).toMatchObject({ id: list, deleted: false });
    expect(await title(list)).toBe("L");
    expect(await adminSql`select title from public.tasks where list_id = ${list} order by title`).toEqual([{ title: "added after the delete" }, { title: "edited before the delete" }]);
  });
});
