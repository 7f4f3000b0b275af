// A field a user clears on a synced record reaches the server cleared, and a
// later pull (another device's edit of another field) does not bring the old
// value back: each adapter on its real local database, and the core client.
// RxDB documents clear an optional field by leaving it out (or patching it
// to undefined, which JSON leaves out); the adapter compared only the fields
// the new document holds, so the clearing was never sent: the server and the
// other devices kept the old notes, nothing was reported, and the next pull
// of the record put them back on the device.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { SyncEvent } from "../../client/events.ts";
import { coreClientDevice } from "../adapters/core-client-device.ts";
import { rxdbDevice } from "../adapters/rxdb-device.ts";
import type { AdapterDevice, DeviceFactory } from "../adapters/scenario.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";
import { clientDevice } from "../support/client-device.ts";
import { openDevice, syncTwice } from "../support/adapter-device.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { settled } from "../support/shared-lists.ts";

const phone = <D extends AdapterDevice>(factory: (setup: Parameters<DeviceFactory>[0]) => Promise<D>, user: TestUser) => openDevice(factory, user, { name: "cleared" });

/** A task with notes, created on the device and synced. */
async function taskWithNotes(user: TestUser, device: AdapterDevice): Promise<string> {
  const task = randomUUID();
  await device.write("tasks", task, { list_id: user.userId, title: "Milk", notes: "2 litres", done: false, position: 0 });
  await syncTwice(device);
  return task;
}

/** The notes are cleared on the server and on another device, and stay cleared here after that device edits the task. */
async function expectNotesCleared(user: TestUser, p: { device: AdapterDevice; events: SyncEvent[] }, task: string) {
  expect(p.events).toEqual([]);
  expect(await adminSql`select notes from public.tasks where id = ${task}`).toEqual([{ notes: null }]);
  const other = await clientDevice(user);
  await other.client.sync();
  expect((await other.client.get("tasks", task))?.data?.notes).toBeNull();
  await other.client.upsert("tasks", task, { done: true });
  await other.client.sync();
  await settled();
  await p.device.sync();
  const local = (await p.device.records()).get(`tasks/${task}`)!.data;
  expect(local.done).toBe(true);
  expect(local.notes ?? null).toBeNull();
}

for (const [label, factory] of [["core client", coreClientDevice], ["WatermelonDB", watermelonDevice], ["RxDB", rxdbDevice]] as const) {
  it(`${label}: an optional field set to null is cleared on the server and stays cleared`, async () => {
    const alice = await createTestUser();
    const p = await phone(factory, alice);
    const task = await taskWithNotes(alice, p.device);
    await p.device.write("tasks", task, { notes: null });
    await syncTwice(p.device);
    await expectNotesCleared(alice, p, task);
    await p.device.close();
  }, 60_000);
}

describe("RxDB: a field removed from the document", () => {
  const ways = {
    "left out (incrementalModify)": (doc: Record<string, unknown>, field: string) => {
      delete doc[field];
      return doc;
    },
    "patched to undefined (incrementalPatch)": undefined,
  };
  for (const [way, modify] of Object.entries(ways)) {
    it(`an optional one, ${way}: cleared on the server (null) and stays cleared`, async () => {
      const alice = await createTestUser();
      const p = await phone(rxdbDevice, alice);
      const task = await taskWithNotes(alice, p.device);
      const doc = (await p.device.collection("tasks").findOne(task).exec())!;
      if (modify) await doc.incrementalModify((d) => modify(d, "notes"));
      else await doc.incrementalPatch({ notes: undefined });
      expect((await p.device.collection("tasks").findOne(task).exec())!.toJSON().notes).toBeUndefined();
      await syncTwice(p.device);
      await expectNotesCleared(alice, p, task);
      await p.device.close();
    }, 60_000);
  }

  it("a required one (done: not null on the server): the change is refused and told, and the document gets the server's value back", async () => {
    const alice = await createTestUser();
    const p = await phone(rxdbDevice, alice);
    const task = await taskWithNotes(alice, p.device);
    const doc = (await p.device.collection("tasks").findOne(task).exec())!;
    await doc.incrementalModify((d) => {
      delete d.done;
      return d;
    });
    await syncTwice(p.device);
    expect(p.events.map((e) => e.type === "op_rejected" ? [e.type, e.error.code, e.error.details?.map((d) => d.field)] : [e.type])).toEqual([
      ["op_rejected", "VALIDATION_FAILED", ["/ops/0/data/done"]],
      ["write_discarded"],
    ]);
    expect(await adminSql`select done from public.tasks where id = ${task}`).toEqual([{ done: false }]);
    expect((await p.device.records()).get(`tasks/${task}`)?.data.done).toBe(false);
    await p.device.close();
  }, 60_000);
});
