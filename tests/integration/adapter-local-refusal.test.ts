// An op the server refuses even alone, as a whole batch (413 over
// max_body_bytes: text pasted into notes), is refused locally: its record
// shows the server's state again, as the core client's does, and the app is
// told once (op_rejected with dropped: false, write_discarded). The adapters
// took the refusal for a record the server does not have and removed an
// existing task from the device, while the server and the other devices kept
// it (and later pulls did not bring it back). A create the server never
// stored leaves the device, as in the core client (which checks notes'
// max_length before it queues a write: its local refusal, rejectLocally, is
// the reference, not run here). The server's record is read with one
// request (GET /v1/sync/records/{collection}/{id}), not by listing the
// record's whole collection.
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { FetchFunction } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import { rxdbDevice } from "../adapters/rxdb-device.ts";
import type { DeviceFactory } from "../adapters/scenario.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";
import { clientDevice } from "../support/client-device.ts";
import { openDevice, syncTwice } from "../support/adapter-device.ts";
import { adminSql, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { settled } from "../support/shared-lists.ts";

/** Over the default max_body_bytes (1 MiB) even as a batch of this op alone (the server's notes are at most 10,000 characters). */
const PASTED = "x".repeat(1_100_000);

/** A fetch that notes each request as "METHOD /v1/…?query". */
function recordingFetch(): { fetch: FetchFunction; requests: string[] } {
  const requests: string[] = [];
  const fetch: FetchFunction = (input, init) => {
    const url = new URL(input);
    requests.push(`${init.method ?? "GET"} ${url.pathname.slice(new URL(stack.apiUrl).pathname.length)}${url.search}`);
    return globalThis.fetch(input, init);
  };
  return { fetch, requests };
}

/** Pages of 2: a look-up that lists the record's collection takes several requests. */
const phone = (factory: DeviceFactory, user: TestUser, fetch: FetchFunction) =>
  openDevice(factory, user, { name: "refusal", fetch, setup: { pullLimit: 2 } });

/**
 * The requests that look a record up: reads of one record, or listings without a cursor (the
 * device's own pulls, after its first sync, go on from its cursors).
 */
const lookUps = (requests: string[]) => requests.filter((r) => r.startsWith("GET /v1/sync/records/") || (r.startsWith("GET /v1/sync/changes") && !/[?&]cursor=/.test(r)));

const told = (events: SyncEvent[]) =>
  events.map((e) => e.type === "op_rejected" ? [e.type, e.error.code, e.dropped, e.op.record_id] : e.type === "write_discarded" ? [e.type, e.reason, e.record_id] : [e.type]);

for (const [label, factory] of [["WatermelonDB", watermelonDevice], ["RxDB", rxdbDevice]] as const) {
  for (const elsewhere of [false, true]) {
    it(`${label}: an edit refused even alone (413) leaves the record as the server has it${elsewhere ? " (changed by another device meanwhile)" : ""}, told once, dropped: false`, async () => {
      const alice = await createTestUser();
      const network = recordingFetch();
      const p = await phone(factory, alice, network.fetch);
      const task = randomUUID();
      await p.device.write("tasks", task, { list_id: alice.userId, title: "Milk", notes: "2 litres", done: false, position: 0 });
      for (const position of [1, 2, 3, 4]) await p.device.write("tasks", randomUUID(), { list_id: alice.userId, title: `Other ${position}`, done: false, position });
      await syncTwice(p.device);
      // Another device ticks the task (or only reads it): the server's state may be newer than what this device last synced.
      const other = await clientDevice(alice);
      await other.client.sync();
      if (elsewhere) await other.client.upsert("tasks", task, { done: true });
      await other.client.sync();
      const version = (await other.client.get("tasks", task))!.version;
      await settled();

      network.requests.length = 0;
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
      expect(lookUps(network.requests)).toEqual([`GET /v1/sync/records/tasks/${task}`]);
      await p.device.close();
    }, 90_000);
  }

  it(`${label}: a create refused even alone (413) leaves the device, as the server never stored it, told once, dropped: false`, async () => {
    const alice = await createTestUser();
    const network = recordingFetch();
    const p = await phone(factory, alice, network.fetch);
    const kept = randomUUID();
    await p.device.write("tasks", kept, { list_id: alice.userId, title: "Milk", done: false, position: 0 });
    await syncTwice(p.device);
    const task = randomUUID();
    network.requests.length = 0;
    await p.device.write("tasks", task, { list_id: alice.userId, title: "Recipe", notes: PASTED, done: false, position: 1 });
    await syncTwice(p.device);
    await syncTwice(p.device);

    expect(told(p.events)).toEqual([
      ["op_rejected", "PAYLOAD_TOO_LARGE", false, task],
      ["write_discarded", "rejected", task],
    ]);
    expect(await adminSql`select id from public.tasks where id = ${task}`).toEqual([]);
    expect([...(await p.device.records()).keys()].filter((key) => key.startsWith("tasks/"))).toEqual([`tasks/${kept}`]);
    // The server never stored it: nothing to look up.
    expect(lookUps(network.requests)).toEqual([]);
    await p.device.close();
  }, 90_000);
}
