// The WatermelonDB adapter keeps the version each of its upserts got (Watermelon
// pulls before it pushes, so the row's version lags: adapter-changes-after-first-sync)
// and bases the record's next change on it. That version stands for the record
// the server's answer holds, which is not always what the row shows: another
// device's edit of a field can land between the phone's pull and its push (the
// answer's record holds it, the row does not), and a conflict's rebased op
// leaves the server's value in a field the row still shows the phone's for.
// A base covering a change the row does not show lets the next edit overwrite
// it with no conflict: the other device's edit was lost, with nothing told (or
// after the app was told the server's value won). Below, the other device
// writes just before the phone's push goes out.
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { SyncEvent } from "../../client/events.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";
import { clientDevice } from "../support/client-device.ts";
import { openDevice, syncTwice } from "../support/adapter-device.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { settled } from "../support/shared-lists.ts";

/** A WatermelonDB phone that has pulled the task; `beforePush` runs once, before its next /v1/sync/batch request. */
async function phone(user: TestUser) {
  let beforePush: (() => Promise<void>) | null = null;
  const fetch = async (input: string, init: RequestInit) => {
    const hook = input.includes("/v1/sync/batch") ? beforePush : null;
    if (hook) {
      beforePush = null;
      await hook();
    }
    return await globalThis.fetch(input, init);
  };
  const { device, events } = await openDevice(watermelonDevice, user, { name: "applied", fetch });
  return { device, events, beforePush: (hook: () => Promise<void>) => (beforePush = hook) };
}

/** A task the other device created and the phone pulled. */
async function pulledTask() {
  const alice = await createTestUser();
  const other = await clientDevice(alice);
  const task = randomUUID();
  await other.client.upsert("tasks", task, { list_id: alice.userId, title: "Milk", done: false, position: 0 });
  await other.client.sync();
  await settled();
  const p = await phone(alice);
  expect((await p.device.records()).get(`tasks/${task}`)?.data.title).toBe("Milk");
  const writeNotes = async () => {
    await other.client.upsert("tasks", task, { notes: "other device's notes" });
    await other.client.sync();
  };
  return { p, task, writeNotes };
}

const serverTask = async (id: string) => (await adminSql<{ title: string; notes: string | null; done: boolean; version: number }[]>`
  select t.title, t.notes, t.done, r.version::int as version from public.tasks t
  join app_private.sync_records r on r.collection = 'tasks' and r.id = t.id where t.id = ${id}`)[0];

/** The conflicts and discarded writes the app was told about the record. */
function told(events: SyncEvent[], id: string) {
  return events.flatMap<unknown[]>((e) => {
    if (e.type === "conflict") return e.op.record_id === id ? [["conflict", e.op.type]] : [];
    if (e.type === "write_discarded") return e.record_id === id ? [["write_discarded", e.reason, e.fields]] : [];
    return [];
  });
}

it("WatermelonDB: a rename pushed after another device wrote the notes shows those notes by the end of the sync, so a later notes edit is made on them", async () => {
  const { p, task, writeNotes } = await pulledTask();
  await p.device.write("tasks", task, { title: "Milk, 2 litres" });
  p.beforePush(writeNotes);
  await p.device.sync();
  await settled();
  const server = await serverTask(task);
  expect(server).toMatchObject({ title: "Milk, 2 litres", notes: "other device's notes" });
  // The row holds the record the rename's answer held: notes and version.
  expect((await p.device.records()).get(`tasks/${task}`)).toMatchObject({ version: server.version, data: { title: "Milk, 2 litres", notes: "other device's notes" } });

  // Made on the other device's notes: applied, with nothing to report.
  await p.device.write("tasks", task, { notes: "phone's notes" });
  await syncTwice(p.device);
  expect(told(p.events, task)).toEqual([]);
  expect(await serverTask(task)).toMatchObject({ title: "Milk, 2 litres", notes: "phone's notes" });
  await p.device.close();
}, 60_000);

it("WatermelonDB: notes written on the phone while its rename is pushed, after another device wrote them, answer conflict and the other device's notes stay", async () => {
  const { p, task, writeNotes } = await pulledTask();
  await p.device.write("tasks", task, { title: "Milk, 2 litres" });
  p.beforePush(async () => {
    await writeNotes();
    // The row is changed while the push runs: it stays dirty, the rename's answer never reaches it.
    await p.device.write("tasks", task, { notes: "phone's notes" });
  });
  await syncTwice(p.device);
  expect(told(p.events, task)).toEqual([["conflict", "upsert"], ["write_discarded", "conflict", ["notes"]]]);
  expect(await serverTask(task)).toMatchObject({ title: "Milk, 2 litres", notes: "other device's notes" });
  expect((await p.device.records()).get(`tasks/${task}`)?.data).toMatchObject({ title: "Milk, 2 litres", notes: "other device's notes" });
  await p.device.close();
}, 60_000);

it("WatermelonDB: notes the server kept in a conflict (write_discarded) are not sent again by the next round when the task was ticked during the push", async () => {
  const { p, task, writeNotes } = await pulledTask();
  await p.device.write("tasks", task, { title: "Milk, 2 litres", notes: "phone's notes" });
  p.beforePush(async () => {
    await writeNotes();
    await p.device.write("tasks", task, { done: true });
  });
  await syncTwice(p.device);
  const discarded = told(p.events, task).filter(([type]) => type === "write_discarded");
  expect(discarded.length).toBeGreaterThan(0);
  expect(discarded.every((event) => JSON.stringify(event) === JSON.stringify(["write_discarded", "conflict", ["notes"]]))).toBe(true);
  expect(await serverTask(task)).toMatchObject({ title: "Milk, 2 litres", notes: "other device's notes", done: true });
  expect((await p.device.records()).get(`tasks/${task}`)?.data).toMatchObject({ title: "Milk, 2 litres", notes: "other device's notes", done: true });
  await p.device.close();
}, 60_000);
