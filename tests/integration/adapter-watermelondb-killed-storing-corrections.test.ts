// A WatermelonDB app killed between two of the adapter's storage writes: once
// its push was answered (before the outbox dropped the answered ops, or before
// the push's corrections were stored), or once a pull applied the corrections
// (before they were dropped). The next sync hands the same changes over again.
// The app must be told each answer exactly once, and the device must end
// holding the server's record.
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { SyncEvent } from "../../client/events.ts";
import type { KeyValueStore } from "../../client/adapters/core/key-value.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";
import { openDevice, syncTwice } from "../support/adapter-device.ts";
import { createTestUser } from "../support/harness.ts";
import { pushOk, settled, share, upsert } from "../support/shared-lists.ts";

type Device = Awaited<ReturnType<typeof watermelonDevice>>;

const told = (events: SyncEvent[]) =>
  events.map((e) => e.type === "op_rejected" ? [e.type, e.error.code, e.op.record_id] : e.type === "write_discarded" ? [e.type, e.reason, e.record_id] : [e.type]);

/** A sync killed at the first write `killsAt` picks (each write of the adapter's store is offered to it, before it is stored). */
async function syncKilled(device: Device, killsAt: (key: string, value: unknown, store: KeyValueStore) => Promise<boolean>): Promise<void> {
  const syncer = device.syncer();
  const inner = syncer as unknown as { store: KeyValueStore };
  const store = inner.store;
  inner.store = {
    get: (key) => store.get(key),
    set: async (key, value) => {
      if (await killsAt(key, value, store)) throw new Error("the app was killed");
      await store.set(key, value);
    },
  };
  await expect(syncer.sync()).rejects.toThrow("the app was killed");
}

/** A sync killed as its adapter stores the push's corrections (the outbox already emptied). */
const syncKilledStoringCorrections = (device: Device) => syncKilled(device, async (key) => key === "tidesync.corrections");

it("WatermelonDB: a viewer's rename refused, the app killed before the correction was stored: told once, the device holds the server's title", async () => {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const [list, task] = [randomUUID(), randomUUID()];
  await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", task, { list_id: list, title: "one" })] });
  await share(alice, list, bob, "viewer");
  await settled();
  const { device, events } = await openDevice(watermelonDevice, bob, { name: "killed-storing" });
  await syncTwice(device);
  await device.write("tasks", task, { title: "bob's" });

  await syncKilledStoringCorrections(device);
  await syncTwice(device);

  expect(told(events)).toEqual([["op_rejected", "FORBIDDEN", task], ["write_discarded", "rejected", task]]);
  expect((await device.records()).get(`tasks/${task}`)?.data).toMatchObject({ title: "one" });
}, 90_000);

it("WatermelonDB: a viewer's rename refused, the app killed after the answered batch was stored, before the outbox dropped it: told once", async () => {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const [list, task] = [randomUUID(), randomUUID()];
  await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", task, { list_id: list, title: "one" })] });
  await share(alice, list, bob, "viewer");
  await settled();
  const { device, events } = await openDevice(watermelonDevice, bob, { name: "killed-emptying-outbox" });
  await syncTwice(device);
  await device.write("tasks", task, { title: "bob's" });

  // The answered batch is stored (tidesync.answered_ops.0); the app dies as the outbox is emptied.
  await syncKilled(device, async (key, value) => key === "tidesync.sent_ops" && (value as unknown[]).length === 0);
  await syncTwice(device);

  // (Before: the op went again from the outbox, answered duplicate, and was told again.)
  expect(told(events)).toEqual([["op_rejected", "FORBIDDEN", task], ["write_discarded", "rejected", task]]);
  expect((await device.records()).get(`tasks/${task}`)?.data).toMatchObject({ title: "one" });
}, 90_000);

it("WatermelonDB: the app killed after a pull applied a correction and saved its cursor, before the correction was dropped: a newer version pulled meanwhile is kept", async () => {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const [list, task] = [randomUUID(), randomUUID()];
  const created = await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", task, { list_id: list, title: "one" })] });
  await share(alice, list, bob, "viewer");
  await settled();
  const { device } = await openDevice(watermelonDevice, bob, { name: "killed-dropping-corrections" });
  await syncTwice(device);
  await device.write("tasks", task, { title: "bob's" });

  let stored = false;
  await syncKilled(device, async (key, value, store) => {
    if (key !== "tidesync.corrections") return false;
    if (stored) return (value as unknown[]).length === 0;
    // The refused rename's correction ("one") is stored; Alice renames the task before Bob's next pull.
    stored = true;
    await store.set(key, value);
    await pushOk(alice, { ops: [upsert("tasks", task, { title: "two" }, created.results[1].record!.version)] });
    await settled();
    return false;
  });
  await syncTwice(device);
  await syncTwice(device);

  // (Before: the cursor, saved first, was past "two": the stale correction put "one" back for good.)
  expect((await device.records()).get(`tasks/${task}`)?.data).toMatchObject({ title: "two" });
}, 90_000);
