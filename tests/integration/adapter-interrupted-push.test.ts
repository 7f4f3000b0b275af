// A push that takes several batches (here one op each) and loses the network
// after its first batch was answered: that batch's conflict or rejection is
// the app's to hear then, and the sync that resumes the push must not tell it
// again, nor leave the record as the refused write made it. Neither library
// records a push that failed, so it hands the answered changes over again:
// they used to go out as new ops (answered, and told, a second time), and the
// first answers' corrections were lost with the failed push. Each adapter on
// its real local database (the core client, whose outbox keeps its order,
// passes the same script: left out, its backoff takes a minute).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { FetchFunction } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import type { RecordData } from "../../client/storage.ts";
import { rxdbDevice } from "../adapters/rxdb-device.ts";
import type { DeviceFactory } from "../adapters/scenario.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";
import { openDevice } from "../support/adapter-device.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { pushOk, settled, share, upsert } from "../support/shared-lists.ts";

/** A phone whose network can drop right after a push's first batch was answered (writeAndPushInterrupted). */
async function phone(factory: DeviceFactory, user: TestUser) {
  const net = { blocked: false, armed: false, answered: 0, offline: false };
  let dropped!: () => void;
  const droppedOnce = new Promise<void>((resolve) => (dropped = resolve));
  const fetch: FetchFunction = async (input, init) => {
    if (net.blocked) throw new TypeError("fetch failed");
    if (net.armed && String(input).includes("/v1/sync/batch")) {
      if (net.answered > 0) net.offline = true;
      net.answered++;
    }
    if (net.offline) {
      dropped();
      throw new TypeError("fetch failed");
    }
    return await globalThis.fetch(input, init);
  };
  const { device, events } = await openDevice(factory, user, { name: "interrupted", fetch, setup: { maxOpsPerBatch: 1 } });
  return {
    device,
    events,
    /** The edits (null: a delete) go out in one push, and the network drops after its first batch was answered (the push fails). */
    async writeAndPushInterrupted(collection: string, edits: Record<string, RecordData | null>) {
      // RxDB pushes each write as it is made: with nothing sent meanwhile, a restarted replication pushes them together.
      net.blocked = true;
      for (const [id, data] of Object.entries(edits)) await (data ? device.write(collection, id, data) : device.remove(collection, id));
      await device.restart();
      net.blocked = false;
      net.armed = true;
      await device.sync().catch(() => {});
      await droppedOnce;
      net.armed = false;
      net.offline = false;
    },
  };
}

/** What the app was told about the record, as [type, code]. */
function told(events: SyncEvent[], id: string) {
  return events.flatMap((e) => {
    if (e.type === "conflict") return e.op.record_id === id ? [["conflict", e.server.deleted ? "deleted" : "live"]] : [];
    if (e.type === "op_rejected") return e.op.record_id === id ? [["op_rejected", e.error.code]] : [];
    if (e.type === "write_discarded") return e.record_id === id ? [["write_discarded", e.reason]] : [];
    return [];
  });
}

const serverTitle = async (id: string) => (await adminSql<{ title: string }[]>`select title from public.tasks where id = ${id}`)[0].title;

/** Every task holds the server's title and version on the device, and the app was told `expected` once about each. */
async function expectToldOnce(p: Awaited<ReturnType<typeof phone>>, tasks: string[], expected: unknown[]) {
  await p.device.sync();
  await settled();
  await p.device.sync();
  const records = await p.device.records();
  for (const task of tasks) {
    expect(told(p.events, task), task).toEqual(expected);
    const [server] = await adminSql<{ version: number }[]>`select version::int from app_private.sync_records where collection = 'tasks' and id = ${task}`;
    expect(records.get(`tasks/${task}`), task).toMatchObject({ version: server.version, data: { title: await serverTitle(task) } });
  }
}

/** Two tasks of alice's list shared with bob as a viewer, and bob's phone. */
async function viewerOfTwoSharedTasks(factory: DeviceFactory) {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const list = randomUUID();
  const tasks = [randomUUID(), randomUUID()];
  await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), ...tasks.map((id) => upsert("tasks", id, { list_id: list, title: "one" }))] });
  await share(alice, list, bob, "viewer");
  await settled();
  return { tasks, p: await phone(factory, bob) };
}

for (const [label, factory] of [["WatermelonDB", watermelonDevice], ["RxDB", rxdbDevice]] as const) {
  describe(`${label}: a push cut off after its first batch was answered tells each answer once`, () => {
    it("conflicts: another device renamed both tasks first", async () => {
      const alice = await createTestUser();
      const otherPhone = (await alice.newSession()).token;
      const tasks = [randomUUID(), randomUUID()];
      const created = await pushOk(otherPhone, { ops: tasks.map((id) => upsert("tasks", id, { list_id: alice.userId, title: "one" })) });
      await settled();
      const p = await phone(factory, alice);
      await pushOk(otherPhone, { ops: tasks.map((id, i) => upsert("tasks", id, { title: "other phone's" }, created.results[i].record!.version)) });
      await p.writeAndPushInterrupted("tasks", Object.fromEntries(tasks.map((id) => [id, { title: "this phone's" }])));
      await expectToldOnce(p, tasks, [["conflict", "live"], ["write_discarded", "conflict"]]);
      for (const task of tasks) expect(await serverTitle(task)).toBe("other phone's");
      await p.device.close();
    }, 60_000);

    it("rejections: a viewer renamed two tasks of the shared list", async () => {
      const { tasks, p } = await viewerOfTwoSharedTasks(factory);
      await p.writeAndPushInterrupted("tasks", Object.fromEntries(tasks.map((id) => [id, { title: "bob's" }])));
      await expectToldOnce(p, tasks, [["op_rejected", "FORBIDDEN"], ["write_discarded", "rejected"]]);
      for (const task of tasks) expect(await serverTitle(task)).toBe("one");
      await p.device.close();
    }, 60_000);

    it("rejected deletes: a viewer deleted two tasks of the shared list", async () => {
      const { tasks, p } = await viewerOfTwoSharedTasks(factory);
      await p.writeAndPushInterrupted("tasks", Object.fromEntries(tasks.map((id) => [id, null])));
      await expectToldOnce(p, tasks, [["op_rejected", "FORBIDDEN"], ["write_discarded", "rejected"]]);
      for (const task of tasks) expect(await serverTitle(task)).toBe("one");
      await p.device.close();
    }, 60_000);
  });
}
