// A member's write into a list racing their removal from it (docs/sync.md,
// "Access changes"). Alice removes Bob and holds her transaction open; Bob's
// push creates a task in the list meanwhile (its policy check still sees him
// as a member). Whatever Bob's push answers, his device must end up holding
// nothing of the list once it has applied that answer and its next pull:
// before the fix his task was applied, numbered after the removal, and no pull
// ever removed it.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { syncBatchResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { adminSql, createTestUser } from "../support/harness.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { applyChanges, asUser, pullAll, push, pushOk, share, upsert } from "../support/shared-lists.ts";

describe("a member removed while their push writes into the list", () => {
  it("the removal waits for the push or the push waits for it; either way the device is left with nothing of the list", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const [list, oldTask, newTask] = [randomUUID(), randomUUID(), randomUUID()];
    await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", oldTask, { list_id: list, title: "old" })] });
    await share(alice, list, bob, "editor");

    // Bob's device: everything he can see, and his cursor.
    const start = await pullAll(bob);
    const device = new Map<string, Record<string, unknown>>();
    applyChanges(device, start.changes);
    expect(device.has(`tasks/${oldTask}`)).toBe(true);

    const removal = holdTransaction(
      (tx) => tx`delete from public.list_members where list_id = ${list} and user_id = ${bob.userId}`,
      { as: alice },
    );
    let bobPush: Promise<Awaited<ReturnType<typeof push>>> | undefined;
    try {
      await removal.ran;
      bobPush = push(bob, { ops: [upsert("tasks", newTask, { list_id: list, title: "written while removed" })] });
      // Either Bob's push is done (it did not wait), or it waits for the removal.
      const alicePid = await removal.pid;
      await Promise.race([bobPush, waitersOf(alicePid).catch(() => {})]);
    } finally {
      removal.commit();
    }
    await removal.done;
    const answered = syncBatchResponseSchema.parse((await bobPush!).body).results[0];
    if (answered.status === "applied" && answered.record?.data) device.set(`tasks/${newTask}`, answered.record.data);

    const next = await pullAll(bob, start.cursor);
    applyChanges(device, next.changes);
    expect([...device.keys()].filter((key) => key === `lists/${list}` || key === `tasks/${oldTask}` || key === `tasks/${newTask}`)).toEqual([]);
    // And nothing of the list is listed to him ever again.
    expect((await pullAll(bob, next.cursor)).changes).toEqual([]);
  });

  it("an edit written before the removal committed, its batch committing after it, is applied (the serial order edit, then removal); the removal's listing still takes the task off the device", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const [list, task] = [randomUUID(), randomUUID()];
    await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", task, { list_id: list, title: "before" })] });
    await share(alice, list, bob, "editor");
    const start = await pullAll(bob);
    const device = new Map<string, Record<string, unknown>>();
    applyChanges(device, start.changes);
    const version = (start.changes.find((change) => change.id === task) as { version: number }).version;
    const op = upsert("tasks", task, { title: "edited by bob" }, version);
    // An uncommitted ledger row with the op's id, rolled back later: Bob's batch writes the task (its role
    // rechecked), then waits at its ledger write.
    const ledger = holdTransaction((tx) => tx`insert into app_private.sync_ops (user_id, op_id, record_id, type, status, version)
                                            values (${bob.userId}, ${op.op_id}, ${task}, 'upsert', 'applied', 1)`);
    let bobPush: ReturnType<typeof push> | undefined;
    try {
      await ledger.ran;
      bobPush = push(bob, { ops: [op] });
      await waitersOf(await ledger.pid);
      // The removal takes no lock the edit holds: it commits while Bob's batch is still open.
      await asUser(alice, (tx) => tx`delete from public.list_members where list_id = ${list} and user_id = ${bob.userId}`);
    } finally {
      ledger.rollBack();
    }
    await ledger.done;
    const answered = syncBatchResponseSchema.parse((await bobPush!).body).results[0];
    expect(answered.status).toBe("applied");
    expect((await adminSql<{ title: string }[]>`select title from public.tasks where id = ${task}`)[0].title).toBe("edited by bob");
    if (answered.record?.data) device.set(`tasks/${task}`, answered.record.data);
    const next = await pullAll(bob, start.cursor);
    applyChanges(device, next.changes);
    expect(device.has(`tasks/${task}`)).toBe(false);
    expect(device.has(`lists/${list}`)).toBe(false);
  });
});
