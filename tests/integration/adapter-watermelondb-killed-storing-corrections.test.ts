// A WatermelonDB app killed once its push was answered and its outbox emptied,
// but before the push's corrections were stored: the next sync hands the same
// changes over again. The app must be told each answer exactly once, and the
// device must end holding the server's record.
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

/** A sync killed as its adapter stores the push's corrections (the outbox already emptied). */
async function syncKilledStoringCorrections(device: Device): Promise<void> {
  const syncer = device.syncer();
  const inner = syncer as unknown as { store: KeyValueStore };
  const store = inner.store;
  inner.store = {
    get: (key) => store.get(key),
    set: async (key, value) => {
      if (key === "tidesync.corrections") throw new Error("the app was killed");
      await store.set(key, value);
    },
  };
  await expect(syncer.sync()).rejects.toThrow("the app was killed");
}

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
