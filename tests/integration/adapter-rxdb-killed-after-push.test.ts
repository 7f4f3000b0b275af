// A RxDB app killed after a push reached the server (the server applied or
// judged it; its ledger holds the answer) but before RxDB recorded the push:
// the restarted app hands the same documents to the push again, under a new
// op_id when the adapter had already stored the answer, the same one when the
// answer never reached it. However the server answers that resend (applied,
// duplicate, a conflict on the stale base, a refusal the server never judged),
// the device ends holding the server's record, field for field, and the app
// is told at most once. Killed a moment earlier, as the adapter stores the
// push's corrections, the app sends nothing again (the answered ops stand).
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { FetchFunction } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import { clientDevice, taskOnServer } from "../support/client-device.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { rxdbTasksDevice } from "../support/rxdb-tasks-device.ts";
import { pushOk, settled, share, upsert } from "../support/shared-lists.ts";

/** Over the default max_body_bytes (1 MiB) even as a batch of this op alone: refused unjudged (413). */
const PASTED = "x".repeat(1_100_000);

const told = (events: SyncEvent[]) =>
  events.map((e) => e.type === "op_rejected" ? [e.type, e.error.code, e.op.record_id] : e.type === "write_discarded" ? [e.type, e.reason, e.record_id] : [e.type]);

/** A device of `user` whose push answers a test can drop (`dropNextAnswer`), killing the app as it does. */
async function phone(user: TestUser) {
  let drop = false;
  const fetch: FetchFunction = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    if (drop && String(input).includes("/v1/sync/batch")) {
      drop = false;
      // The server answered; the app dies before the answer is read.
      void device.replication.state.cancel();
      throw new TypeError("the app was killed");
    }
    return response;
  };
  const device = await rxdbTasksDevice(user, fetch);
  await device.sync();
  return { ...device, dropNextAnswer: () => void (drop = true) };
}

/** The statuses the server's ledger holds for the user's ops on a record, oldest first. */
async function ledgerOf(user: TestUser, id: string): Promise<string[]> {
  return (await adminSql<{ status: string }[]>`select status from app_private.sync_ops where user_id = ${user.userId} and record_id = ${id} order by created_at`).map((op) => op.status);
}


/** Waits until the replication has stopped (the app killed as the push's answer came back), however slow the push: fails if it never does. */
async function untilStopped(p: { replication: { state: { isStopped(): boolean } } }, what: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; !p.replication.state.isStopped();) {
    if (Date.now() > deadline) throw new Error(`${what} (30 s)`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Syncs until the device and the server settled (the corrections delivered by a pull). */
async function syncTwice(device: { sync(): Promise<void> }) {
  await device.sync();
  await settled();
  await device.sync();
}

it("a create killed after the server applied it, before RxDB recorded it: sent again, applied; the device holds the server's record", async () => {
  const alice = await createTestUser();
  const p = await phone(alice);
  const task = randomUUID();
  const killed = p.killAfterNextPush();
  await p.tasks.insert({ id: task, list_id: alice.userId, title: "Recipe", notes: null, done: false, position: 1 });
  await killed;
  expect(await adminSql`select title from public.tasks where id = ${task}`).toEqual([{ title: "Recipe" }]);

  await p.restart();
  await syncTwice(p);
  expect(await p.record(task)).toEqual(await taskOnServer(alice, task));
  expect(told(p.events)).toEqual([]);
  // Sent again under a new op_id (the answer was stored): the create twice.
  expect(await ledgerOf(alice, task)).toEqual(["applied", "applied"]);
  await p.close();
}, 90_000);

it("a create killed after the server applied it, then refused unjudged when sent again (413): the device keeps the server's record, told once", async () => {
  const alice = await createTestUser();
  const p = await phone(alice);
  const task = randomUUID();
  const killed = p.killAfterNextPush();
  await p.tasks.insert({ id: task, list_id: alice.userId, title: "Recipe", notes: null, done: false, position: 1 });
  await killed;
  // The app restarts offline; the user pastes a recipe into the new task's notes, then goes online.
  await (await p.tasks.findOne(task).exec())!.incrementalPatch({ notes: PASTED });
  await p.restart();
  await syncTwice(p);
  await syncTwice(p);

  const server = await taskOnServer(alice, task);
  expect(server?.data).toMatchObject({ title: "Recipe", notes: null });
  // (Before: the task left the device, the server and every other device kept it.)
  expect(await p.record(task)).toEqual(server);
  expect(told(p.events)).toEqual([
    ["op_rejected", "PAYLOAD_TOO_LARGE", task],
    ["write_discarded", "rejected", task],
  ]);
  await p.close();
}, 90_000);

it("a create killed after the server applied it, then deleted on the device before the restart: the delete reaches the server", async () => {
  const alice = await createTestUser();
  const p = await phone(alice);
  const task = randomUUID();
  const killed = p.killAfterNextPush();
  await p.tasks.insert({ id: task, list_id: alice.userId, title: "Recipe", notes: null, done: false, position: 1 });
  await killed;
  await (await p.tasks.findOne(task).exec())!.remove();
  await p.restart();
  await syncTwice(p);

  expect(await p.record(task)).toBeUndefined();
  expect(await taskOnServer(alice, task)).toBeUndefined();
  expect(told(p.events)).toEqual([]);
  await p.close();
}, 90_000);

for (const elsewhere of [false, true]) {
  it(`an edit killed after the server applied it, sent again on a stale base${elsewhere ? " after another device changed the field (conflict)" : " (applied)"}: the device holds the server's record`, async () => {
    const alice = await createTestUser();
    const p = await phone(alice);
    const task = randomUUID();
    await p.tasks.insert({ id: task, list_id: alice.userId, title: "Milk", notes: null, done: false, position: 1 });
    await syncTwice(p);
    const killed = p.killAfterNextPush();
    await (await p.tasks.findOne(task).exec())!.incrementalPatch({ title: "Milk, 2 litres" });
    await killed;
    expect(await adminSql`select title from public.tasks where id = ${task}`).toEqual([{ title: "Milk, 2 litres" }]);
    if (elsewhere) {
      const other = await clientDevice(alice);
      await other.client.sync();
      await other.client.upsert("tasks", task, { title: "Oat milk" });
      await other.client.sync();
    }

    await p.restart();
    await syncTwice(p);
    const server = await taskOnServer(alice, task);
    expect(server?.data?.title).toBe(elsewhere ? "Oat milk" : "Milk, 2 litres");
    expect(await p.record(task)).toEqual(server);
    // Once: the other device's later title replaced this one's (reported as a conflict with it).
    expect(told(p.events)).toEqual(elsewhere ? [["conflict"], ["write_discarded", "conflict", task]] : []);
    // The create, the edit, and the edit sent again under a new op_id (the other device's edit between them).
    expect(await ledgerOf(alice, task)).toEqual(elsewhere ? ["applied", "applied", "applied", "conflict"] : ["applied", "applied", "applied"]);
    await p.close();
  }, 90_000);
}

it("an edit the server rejected, its answer lost as the app was killed: answered again from the ledger, the device back to the server's record, told once", async () => {
  const alice = await createTestUser();
  const p = await phone(alice);
  const task = randomUUID();
  await p.tasks.insert({ id: task, list_id: alice.userId, title: "Milk", notes: null, done: false, position: 1 });
  await syncTwice(p);
  p.dropNextAnswer();
  // Over the server's 200 characters of title: rejected (VALIDATION_FAILED), with the record.
  await (await p.tasks.findOne(task).exec())!.incrementalPatch({ title: "M".repeat(201) });
  await untilStopped(p, "the push never went");
  await p.restart();
  await syncTwice(p);

  const server = await taskOnServer(alice, task);
  expect(server?.data?.title).toBe("Milk");
  expect(await p.record(task)).toEqual(server);
  expect(told(p.events)).toEqual([
    ["op_rejected", "VALIDATION_FAILED", task],
    ["write_discarded", "rejected", task],
  ]);
  await p.close();
}, 90_000);

it("a delete whose answer was lost as the app was killed: sent again with its op_id, the task gone from the device and the server", async () => {
  const alice = await createTestUser();
  const p = await phone(alice);
  const task = randomUUID();
  await p.tasks.insert({ id: task, list_id: alice.userId, title: "Milk", notes: null, done: false, position: 1 });
  await syncTwice(p);
  p.dropNextAnswer();
  await (await p.tasks.findOne(task).exec())!.remove();
  await untilStopped(p, "the delete never went");
  expect(await adminSql`select id from public.tasks where id = ${task}`).toEqual([]);
  await p.restart();
  await syncTwice(p);

  expect(await p.record(task)).toBeUndefined();
  expect(await taskOnServer(alice, task)).toBeUndefined();
  expect(told(p.events)).toEqual([]);
  // The create, and the delete once: sent again with its op_id (a duplicate, not logged again).
  expect(await ledgerOf(alice, task)).toEqual(["applied", "applied"]);
  await p.close();
}, 90_000);

/** The app is killed at the first write of the adapter's local documents `killsAt` picks (before it is stored). */
function killWriting(p: Awaited<ReturnType<typeof phone>>, killsAt: (key: string, value: unknown) => boolean): Promise<void> {
  const upsertLocal = p.tasks.upsertLocal;
  return new Promise((killed) => {
    p.tasks.upsertLocal = function (this: typeof p.tasks, id: string, data: unknown) {
      if (!killsAt(id, (data as { value: unknown }).value)) return upsertLocal.call(this, id, data);
      p.tasks.upsertLocal = upsertLocal;
      void p.replication.state.cancel();
      killed();
      return Promise.reject(new Error("the app was killed"));
    } as typeof upsertLocal;
  });
}

/** The app is killed as the adapter stores the next push's corrections (every op answered, RxDB not told). */
const killStoringCorrections = (p: Awaited<ReturnType<typeof phone>>) => killWriting(p, (key) => key === "tidesync.corrections");

it("an edit the server rejected, the app killed as the adapter stored its correction: not sent again, told once, the device back to the server's record", async () => {
  const alice = await createTestUser();
  const p = await phone(alice);
  const task = randomUUID();
  await p.tasks.insert({ id: task, list_id: alice.userId, title: "Milk", notes: null, done: false, position: 1 });
  await syncTwice(p);
  const killed = killStoringCorrections(p);
  // Over the server's 200 characters of title: rejected (VALIDATION_FAILED), with the record.
  await (await p.tasks.findOne(task).exec())!.incrementalPatch({ title: "M".repeat(201) });
  await killed;
  await p.restart();
  await syncTwice(p);

  const server = await taskOnServer(alice, task);
  expect(server?.data?.title).toBe("Milk");
  expect(await p.record(task)).toEqual(server);
  // (Before: the restarted app sent the edit again as a new op, refused again and told twice.)
  expect(told(p.events)).toEqual([
    ["op_rejected", "VALIDATION_FAILED", task],
    ["write_discarded", "rejected", task],
  ]);
  expect(await ledgerOf(alice, task)).toEqual(["applied", "rejected"]);
  await p.close();
}, 90_000);

for (const when of ["as the adapter stored its correction", "as the held-back delete was cleared"] as const) {
it(`a viewer's delete refused, the app killed ${when}: the task back on the device, told once`, async () => {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const [list, task] = [randomUUID(), randomUUID()];
  await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", task, { list_id: list, title: "Milk" })] });
  await share(alice, list, bob, "viewer");
  const p = await phone(bob);
  await syncTwice(p);
  expect((await p.record(task))?.data).toMatchObject({ title: "Milk" });
  const killed = when === "as the adapter stored its correction"
    ? killStoringCorrections(p)
    : killWriting(p, (key, value) => key === "tidesync.held_deletes" && (value as unknown[]).length === 0);
  // A delete is held back until every collection is in sync, then sent with the others (push-order.ts).
  await (await p.tasks.findOne(task).exec())!.remove();
  await killed;
  await p.restart();
  await syncTwice(p);
  await syncTwice(p);

  // (Before: the held delete was cleared before its correction was stored: the task stayed off the device;
  // and once its answer was dropped, a kill before the clearing sent it again: told twice.)
  expect(await p.record(task)).toEqual(await taskOnServer(alice, task));
  expect(told(p.events)).toEqual([
    ["op_rejected", "FORBIDDEN", task],
    ["write_discarded", "rejected", task],
  ]);
  await p.close();
}, 90_000);
}

it("an edit the server rejected, the app killed once the pull handed its correction to RxDB, before RxDB stored the page: the device back to the server's record", async () => {
  const alice = await createTestUser();
  const p = await phone(alice);
  const task = randomUUID();
  await p.tasks.insert({ id: task, list_id: alice.userId, title: "Milk", notes: null, done: false, position: 1 });
  await syncTwice(p);
  const killed = p.killAfterNextPullWithDocuments();
  // Over the server's 200 characters of title: rejected (VALIDATION_FAILED), with the record.
  await (await p.tasks.findOne(task).exec())!.incrementalPatch({ title: "M".repeat(201) });
  await killed;
  await p.restart();
  await syncTwice(p);

  const server = await taskOnServer(alice, task);
  // (Before: the pull had dropped the correction as it handed it over: the refused title stayed for good.)
  expect(await p.record(task)).toEqual(server);
  expect(server?.data?.title).toBe("Milk");
  expect(told(p.events)).toEqual([
    ["op_rejected", "VALIDATION_FAILED", task],
    ["write_discarded", "rejected", task],
  ]);
  // Delivered once RxDB stored the page: another device's later title is not overruled by it again.
  const other = await clientDevice(alice);
  await other.client.sync();
  await other.client.upsert("tasks", task, { title: "Oat milk" });
  await other.client.sync();
  await syncTwice(p);
  await syncTwice(p);
  expect(await p.record(task)).toEqual(await taskOnServer(alice, task));
  expect((await p.record(task))?.data.title).toBe("Oat milk");
  await p.close();
}, 90_000);

it("a viewer's delete refused, the app killed as the send's answers were dropped: the send completes at the restart, and its correction never comes back over a later title", async () => {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const [list, task, own] = [randomUUID(), randomUUID(), randomUUID()];
  const created = await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", task, { list_id: list, title: "Milk" })] });
  await share(alice, list, bob, "viewer");
  const p = await phone(bob);
  await p.tasks.insert({ id: own, list_id: bob.userId, title: "Mine", notes: null, done: false, position: 1 });
  await syncTwice(p);
  const killed = killWriting(p, (key, value) => key === "tidesync.held_deletes.answered.0" && (value as unknown[]).length === 0);
  await (await p.tasks.findOne(task).exec())!.remove();
  await killed;
  await p.restart();
  await syncTwice(p);
  // Alice renames the task; Bob's device pulls it, then deletes a task of his own (a delete is held back, then sent).
  await pushOk(alice, { ops: [upsert("tasks", task, { title: "Oat milk" }, created.results[1].record!.version)] });
  await syncTwice(p);
  await (await p.tasks.findOne(own).exec())!.remove();
  await syncTwice(p);
  await syncTwice(p);

  // (Before: the killed send's answers stayed until the next held delete, whose send handed the old correction over again: "Milk".)
  expect(await p.record(task)).toEqual(await taskOnServer(alice, task));
  expect((await p.record(task))?.data.title).toBe("Oat milk");
  expect(await p.record(own)).toBeUndefined();
  expect(told(p.events)).toEqual([
    ["op_rejected", "FORBIDDEN", task],
    ["write_discarded", "rejected", task],
  ]);
  await p.close();
}, 90_000);
