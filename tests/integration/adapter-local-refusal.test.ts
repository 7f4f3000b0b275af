// An op the server refuses even alone, as a whole batch (413 over
// max_body_bytes: text pasted into notes), is refused locally: its record
// shows the server's state again, as the core client's does, and the app is
// told once (op_rejected with dropped: false, write_discarded). The adapters
// took the refusal for a record the server does not have and removed an
// existing task from the device, while the server and the other devices kept
// it (and later pulls did not bring it back). A create the server never
// stored leaves the device, as in the core client (which checks notes'
// max_length before it queues a write: its local refusal, rejectLocally, is
// the reference, not run here).
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { SyncEvent } from "../../client/events.ts";
import { rxdbDevice } from "../adapters/rxdb-device.ts";
import type { DeviceFactory } from "../adapters/scenario.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";
import { clientDevice } from "../support/client-device.ts";
import { openDevice, syncTwice } from "../support/adapter-device.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { settled } from "../support/shared-lists.ts";

/** Over the default max_body_bytes (1 MiB) even as a batch of this op alone (the server's notes are at most 10,000 characters). */
const PASTED = "x".repeat(1_100_000);

const phone = (factory: DeviceFactory, user: TestUser) => openDevice(factory, user, { name: "refusal" });

const told = (events: SyncEvent[]) =>
  events.map((e) => e.type === "op_rejected" ? [e.type, e.error.code, e.dropped, e.op.record_id] : e.type === "write_discarded" ? [e.type, e.reason, e.record_id] : [e.type]);

for (const [label, factory] of [["WatermelonDB", watermelonDevice], ["RxDB", rxdbDevice]] as const) {
  for (const elsewhere of [false, true]) {
    it(`${label}: an edit refused even alone (413) leaves the record as the server has it${elsewhere ? " (changed by another device meanwhile)" : ""}, told once, dropped: false`, async () => {
      const alice = await createTestUser();
      const p = await phone(factory, alice);
      const task = randomUUID();
      await p.device.write("tasks", task, { list_id: alice.userId, title: "Milk", notes: "2 litres", done: false, position: 0 });
      await syncTwice(p.device);
      // Another device ticks the task (or only reads it): the server's state may be newer than what this device last synced.
      const other = await clientDevice(alice);
      await other.client.sync();
      if (elsewhere) await other.client.upsert("tasks", task, { done: true });
      await other.client.sync();
      const version = (await other.client.get("tasks", task))!.version;
      await settled();

      await p.device.write("tasks", task, { notes: PASTED });
      await syncTwice(p.device);
      await syncTwice(p.device);

      expect(await adminSql`select notes, done from public.tasks where id = ${task}`).toEqual([{ notes: "2 litres", done: elsewhere }]);
      const local = (await p.device.records()).get(`tasks/${task}`);
      expect(local?.data).toMatchObject({ title: "Milk", notes: "2 litres", done: elsewhere });
      expect(local?.version).toBe(version);
      expect(told(p.events)).toEqual([
        ["op_rejected", "PAYLOAD_TOO_LARGE", false, task],
        ["write_discarded", "rejected", task],
      ]);
      await p.device.close();
    }, 90_000);
  }

  it(`${label}: a create refused even alone (413) leaves the device, as the server never stored it, told once, dropped: false`, async () => {
    const alice = await createTestUser();
    const p = await phone(factory, alice);
    const kept = randomUUID();
    await p.device.write("tasks", kept, { list_id: alice.userId, title: "Milk", done: false, position: 0 });
    await syncTwice(p.device);
    const task = randomUUID();
    await p.device.write("tasks", task, { list_id: alice.userId, title: "Recipe", notes: PASTED, done: false, position: 1 });
    await syncTwice(p.device);
    await syncTwice(p.device);

    expect(told(p.events)).toEqual([
      ["op_rejected", "PAYLOAD_TOO_LARGE", false, task],
      ["write_discarded", "rejected", task],
    ]);
    expect(await adminSql`select id from public.tasks where id = ${task}`).toEqual([]);
    expect([...(await p.device.records()).keys()].filter((key) => key.startsWith("tasks/"))).toEqual([`tasks/${kept}`]);
    await p.device.close();
  }, 90_000);
}
