// A WatermelonDB app killed after the adapter's push ran to its end (the
// server applied the ops, the adapter stored their answers and emptied its
// outbox) but before Watermelon marked the records synced: the next sync hands
// the same changes to the push again, as new ops on the bases Watermelon still
// holds. However the server answers them (applied, a conflict on the stale
// base, a refusal it never judged), the device ends holding the server's
// record, field for field, and the app is told at most once: the versions the
// server gave the device's upserts, kept with the outbox (APPLIED_KEY), say
// the server holds a create Watermelon still calls "created".
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { SyncEvent } from "../../client/events.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";
import { clientDevice, taskOnServer } from "../support/client-device.ts";
import { openDevice, syncTwice } from "../support/adapter-device.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";

/** Over the default max_body_bytes (1 MiB) even as a batch of this op alone: refused unjudged (413). */
const PASTED = "x".repeat(1_100_000);

type Device = Awaited<ReturnType<typeof watermelonDevice>>;

const told = (events: SyncEvent[]) =>
  events.map((e) => e.type === "op_rejected" ? [e.type, e.error.code, e.op.record_id] : e.type === "write_discarded" ? [e.type, e.reason, e.record_id] : [e.type]);

/** A sync killed once the adapter's push returned, before Watermelon marked what it pushed as synced. */
async function syncKilledAfterPush(device: Device): Promise<void> {
  const syncer = device.syncer();
  const inner = syncer as unknown as { pushChanges(args: unknown): Promise<unknown> };
  const push = inner.pushChanges.bind(syncer);
  inner.pushChanges = async (args) => {
    await push(args);
    throw new Error("the app was killed");
  };
  await expect(syncer.sync()).rejects.toThrow("the app was killed");
}

/** The statuses the server's ledger holds for the user's ops on a record, oldest first. */
async function ledgerOf(user: TestUser, id: string): Promise<string[]> {
  return (await adminSql<{ status: string }[]>`select status from app_private.sync_ops where user_id = ${user.userId} and record_id = ${id} order by created_at`).map((op) => op.status);
}


const phone = (user: TestUser) => openDevice(watermelonDevice, user, { name: "killed" });

it("WatermelonDB: a create killed after its push, sent again as a create: applied, the device holds the server's record", async () => {
  const alice = await createTestUser();
  const p = await phone(alice);
  const task = randomUUID();
  await p.device.write("tasks", task, { list_id: alice.userId, title: "Recipe", notes: null, done: false, position: 1 });
  await syncKilledAfterPush(p.device);
  expect(await adminSql`select title from public.tasks where id = ${task}`).toEqual([{ title: "Recipe" }]);

  await syncTwice(p.device);
  expect((await p.device.records()).get(`tasks/${task}`)).toEqual(await taskOnServer(alice, task));
  expect(told(p.events)).toEqual([]);
  // Sent again under a new op_id (the answer was stored): the create twice.
  expect(await ledgerOf(alice, task)).toEqual(["applied", "applied"]);
}, 90_000);

it("WatermelonDB: a create killed after its push, then refused unjudged when sent again (413): the device keeps the server's record, told once", async () => {
  const alice = await createTestUser();
  const p = await phone(alice);
  const task = randomUUID();
  await p.device.write("tasks", task, { list_id: alice.userId, title: "Recipe", notes: null, done: false, position: 1 });
  await syncKilledAfterPush(p.device);
  await p.device.write("tasks", task, { notes: PASTED });
  await syncTwice(p.device);
  await syncTwice(p.device);

  const server = await taskOnServer(alice, task);
  expect(server?.data).toMatchObject({ title: "Recipe", notes: null });
  expect((await p.device.records()).get(`tasks/${task}`)).toEqual(server);
  expect(told(p.events)).toEqual([
    ["op_rejected", "PAYLOAD_TOO_LARGE", task],
    ["write_discarded", "rejected", task],
  ]);
}, 90_000);

it("WatermelonDB: a create killed after its push, then deleted on the device: the delete reaches the server", async () => {
  const alice = await createTestUser();
  const p = await phone(alice);
  const task = randomUUID();
  await p.device.write("tasks", task, { list_id: alice.userId, title: "Recipe", notes: null, done: false, position: 1 });
  await syncKilledAfterPush(p.device);
  await p.device.remove("tasks", task);
  await syncTwice(p.device);

  expect((await p.device.records()).get(`tasks/${task}`)).toBeUndefined();
  expect(await taskOnServer(alice, task)).toBeUndefined();
  expect(told(p.events)).toEqual([]);
}, 90_000);

for (const elsewhere of [false, true]) {
  it(`WatermelonDB: an edit killed after its push, sent again on a stale base${elsewhere ? " after another device changed the field (conflict)" : " (applied)"}: the device holds the server's record`, async () => {
    const alice = await createTestUser();
    const p = await phone(alice);
    const task = randomUUID();
    await p.device.write("tasks", task, { list_id: alice.userId, title: "Milk", notes: null, done: false, position: 1 });
    await syncTwice(p.device);
    await p.device.write("tasks", task, { title: "Milk, 2 litres" });
    await syncKilledAfterPush(p.device);
    expect(await adminSql`select title from public.tasks where id = ${task}`).toEqual([{ title: "Milk, 2 litres" }]);
    if (elsewhere) {
      const other = await clientDevice(alice);
      await other.client.sync();
      await other.client.upsert("tasks", task, { title: "Oat milk" });
      await other.client.sync();
    }

    await syncTwice(p.device);
    const server = await taskOnServer(alice, task);
    expect(server?.data?.title).toBe(elsewhere ? "Oat milk" : "Milk, 2 litres");
    expect((await p.device.records()).get(`tasks/${task}`)).toEqual(server);
    expect(told(p.events)).toEqual(elsewhere ? [["conflict"], ["write_discarded", "conflict", task]] : []);
    // The create, the edit, and the edit sent again under a new op_id (the other device's edit between them).
    expect(await ledgerOf(alice, task)).toEqual(elsewhere ? ["applied", "applied", "applied", "conflict"] : ["applied", "applied", "applied"]);
  }, 90_000);
}

it("WatermelonDB: a delete killed after its push, sent again: the task gone from the device and the server, nothing told", async () => {
  const alice = await createTestUser();
  const p = await phone(alice);
  const task = randomUUID();
  await p.device.write("tasks", task, { list_id: alice.userId, title: "Milk", notes: null, done: false, position: 1 });
  await syncTwice(p.device);
  await p.device.remove("tasks", task);
  await syncKilledAfterPush(p.device);
  expect(await adminSql`select id from public.tasks where id = ${task}`).toEqual([]);

  await syncTwice(p.device);
  expect((await p.device.records()).get(`tasks/${task}`)).toBeUndefined();
  expect(await taskOnServer(alice, task)).toBeUndefined();
  expect(told(p.events)).toEqual([]);
}, 90_000);
