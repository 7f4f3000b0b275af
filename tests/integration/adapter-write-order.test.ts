// The order an adapter sends a push's ops in (client/adapters/core/op-order.ts:
// upserts parents first, then deletes children first), with the real
// WatermelonDB and RxDB against the real function and Postgres. Neither
// library keeps the order of the app's writes; sending each table's changes
// after the tables before it put a delete ahead of the edits the user made
// before it, and the edits were lost:
//   (a) a task moved out of a list, then the list deleted: the list's delete
//       went first, its cascade took the task, and the move came back refused;
//   (b) an editor's edits of a shared list's tasks, then their leaving the
//       list (list_members before tasks): the leave went first, in an earlier
//       batch, and the edits came back NOT_FOUND;
//   (c) an owner's delete of a shared list with its list_members rows (their
//       own too) and its task, as an app cascading locally does: RxDB sent
//       each collection's deletes in a batch of its own, list_members first,
//       and the owner's own membership delete came back refused
//       (list_members_keep_an_owner) though the list's delete follows it;
//   (c') the same after a task created in another list (the owner's personal
//       one), the deletes children first (the order the WatermelonDB adapter
//       sends): the batch was cut right before the list's delete, to answer
//       the create first, so the owner's membership delete went in the batch
//       before it, without it, and came back refused (list_members_keep_an_owner);
//   (d) a task moved to another list while another device renamed it, then
//       its old list deleted: the move's op conflicted (on the title) and
//       applied nothing, the list's delete in the same batch took the task,
//       and the rebased op (the move), queued last, found a tombstone
//       (WatermelonDB and the core client; RxDB held the delete back).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { FetchFunction } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import { coreClientDevice } from "../adapters/core-client-device.ts";
import { rxdbDevice } from "../adapters/rxdb-device.ts";
import type { AdapterDevice, DeviceFactory, DeviceSetup } from "../adapters/scenario.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";
import { clientDevice } from "../support/client-device.ts";
import { openDevice } from "../support/adapter-device.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { personalKeys, pushOk, settled, share, upsert } from "../support/shared-lists.ts";

interface Phone {
  device: AdapterDevice;
  events: SyncEvent[];
  offline(): void;
  /** Back online: syncs until the push's answers and the pull are in. */
  reconnect(): Promise<void>;
}

async function phone(factory: DeviceFactory, user: TestUser, setup: Partial<DeviceSetup> = {}): Promise<Phone> {
  const net = { offline: false };
  const fetch: FetchFunction = async (input, init) => {
    if (net.offline) throw new TypeError("fetch failed");
    return await globalThis.fetch(input, init);
  };
  const { device, events } = await openDevice(factory, user, { name: "order", fetch, setup });
  return {
    device,
    events,
    offline: () => void (net.offline = true),
    async reconnect() {
      net.offline = false;
      await device.sync();
      await settled();
      await device.sync();
    },
  };
}

/** What the app was told went wrong. */
const refusals = (events: SyncEvent[]) => events.filter((e) => e.type === "conflict" || e.type === "op_rejected" || e.type === "write_discarded");

for (const [label, factory] of [["core client", coreClientDevice], ["WatermelonDB", watermelonDevice], ["RxDB", rxdbDevice]] as const) {
  describe(`${label}: writes made offline keep the user's data whatever their tables' order`, () => {
    for (const restart of [false, true]) {
      it(`a task moved out of a list, then the list deleted${restart ? ", the app restarted offline" : ""}: the task stays, in its new list`, async () => {
        const alice = await createTestUser();
        const [l1, l2, task] = [randomUUID(), randomUUID(), randomUUID()];
        await pushOk(alice, { ops: [upsert("lists", l1, { title: "L1" }), upsert("lists", l2, { title: "L2" }), upsert("tasks", task, { list_id: l1, title: "keep me" })] });
        await settled();
        const p = await phone(factory, alice);
        // A push before: the adapter has what it needs (GET /v1/meta) to hold the delete back while offline.
        await p.device.write("lists", l2, { title: "L2, renamed" });
        await p.device.sync();
        p.offline();
        await p.device.write("tasks", task, { list_id: l2 });
        await p.device.remove("lists", l1);
        // RxDB has handed the rows over (and the adapter held the delete back) before the restart.
        if (restart) await new Promise((resolve) => setTimeout(resolve, 200)).then(() => p.device.restart());
        await p.reconnect();
        expect(refusals(p.events)).toEqual([]);
        expect(await adminSql`select list_id from public.tasks where id = ${task}`).toEqual([{ list_id: l2 }]);
        expect(await adminSql`select id from public.lists where id = ${l1}`).toEqual([]);
        const local = await p.device.records();
        expect(local.get(`tasks/${task}`)?.data.list_id).toBe(l2);
        expect(local.has(`lists/${l1}`)).toBe(false);
        await p.device.close();
      }, 60_000);
    }

    it("a task moved to another list while another device renames it, then its old list deleted: the task is kept, moved", async () => {
      const alice = await createTestUser();
      const [l1, l2, task] = [randomUUID(), randomUUID(), randomUUID()];
      await pushOk(alice, { ops: [upsert("lists", l1, { title: "L1" }), upsert("tasks", task, { list_id: l1, title: "T" })] });
      await settled();
      const p = await phone(factory, alice);
      const tablet = await clientDevice(alice);
      await tablet.client.sync();
      await p.device.write("lists", l2, { title: "L2" });
      await p.device.sync();
      p.offline();
      await p.device.write("tasks", task, { title: "Keep me (phone)", list_id: l2 });
      await p.device.remove("lists", l1);
      await tablet.client.upsert("tasks", task, { title: "Renamed (tablet)" });
      await tablet.client.sync();
      await p.reconnect();
      // The op carrying the move conflicts on the title: the rebased op (the move) goes before the list's delete.
      expect(await adminSql`select list_id, title from public.tasks where id = ${task}`).toEqual([{ list_id: l2, title: "Renamed (tablet)" }]);
      expect(await adminSql`select id from public.lists where id = ${l1}`).toEqual([]);
      expect(p.events.filter((e) => e.type === "op_rejected")).toEqual([]);
      expect(p.events.flatMap((e) => (e.type === "write_discarded" ? [e.fields] : []))).toEqual([["title"]]);
      const local = await p.device.records();
      expect(local.get(`tasks/${task}`)?.data).toMatchObject({ list_id: l2, title: "Renamed (tablet)" });
      expect(local.has(`lists/${l1}`)).toBe(false);
      await p.device.close();
    }, 60_000);

    it("an editor's task edits, then their leaving the shared list (list_members listed before tasks): the edits are applied", async () => {
      const alice = await createTestUser();
      const bob = await createTestUser();
      const [list, t1, t2] = [randomUUID(), randomUUID(), randomUUID()];
      await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", t1, { list_id: list, title: "one" }), upsert("tasks", t2, { list_id: list, title: "two" })] });
      await share(alice, list, bob, "editor");
      await settled();
      // One op per batch: what a push of more edits than one batch holds does.
      const p = await phone(factory, bob, { tables: ["lists", "list_members", "tasks"], maxOpsPerBatch: 1 });
      const [membership] = await adminSql<{ id: string }[]>`select id from public.list_members where list_id = ${list} and user_id = ${bob.userId}`;
      expect((await p.device.records()).has(`list_members/${membership.id}`)).toBe(true);
      p.offline();
      await p.device.write("tasks", t1, { done: true });
      await p.device.write("tasks", t2, { title: "two, edited" });
      await p.device.remove("list_members", membership.id);
      await p.reconnect();
      expect(refusals(p.events)).toEqual([]);
      expect(await adminSql`select id, done, title from public.tasks where list_id = ${list} order by title`).toEqual([
        { id: t1, done: true, title: "one" },
        { id: t2, done: false, title: "two, edited" },
      ]);
      expect(await adminSql`select 1 from public.list_members where id = ${membership.id}`).toEqual([]);
      expect([...(await p.device.records()).keys()].sort()).toEqual(await personalKeys(bob));
      await p.device.close();
    }, 60_000);

    it("an owner deletes a shared list offline with its memberships (their own too) and its task: nothing is refused, all are gone", async () => {
      const alice = await createTestUser();
      const bob = await createTestUser();
      const [list, t1] = [randomUUID(), randomUUID()];
      await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", t1, { list_id: list, title: "one" })] });
      await share(alice, list, bob, "editor");
      await settled();
      const p = await phone(factory, alice, { tables: ["lists", "list_members", "tasks"] });
      const members = await adminSql<{ id: string }[]>`select id from public.list_members where list_id = ${list}`;
      expect(members).toHaveLength(2);
      p.offline();
      await p.device.remove("lists", list);
      for (const m of members) await p.device.remove("list_members", m.id);
      await p.device.remove("tasks", t1);
      await p.reconnect();
      expect(refusals(p.events)).toEqual([]);
      expect(await adminSql`select id from public.lists where id = ${list}`).toEqual([]);
      expect(await adminSql`select id from public.list_members where list_id = ${list}`).toEqual([]);
      expect(await adminSql`select id from public.tasks where id = ${t1}`).toEqual([]);
      expect([...(await p.device.records()).keys()].sort()).toEqual(await personalKeys(alice));
      await p.device.close();
    }, 60_000);

    it("an owner creates a task in their own list, then deletes a shared list offline, children first: nothing is refused, the list and its rows are gone, the task kept", async () => {
      const alice = await createTestUser();
      const bob = await createTestUser();
      const [list, t1, t2] = [randomUUID(), randomUUID(), randomUUID()];
      await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", t1, { list_id: list, title: "one" })] });
      await share(alice, list, bob, "editor");
      await settled();
      const p = await phone(factory, alice, { tables: ["lists", "list_members", "tasks"] });
      const members = await adminSql<{ id: string }[]>`select id from public.list_members where list_id = ${list}`;
      expect(members).toHaveLength(2);
      p.offline();
      // A task that puts a record in a list: a list's delete after it waits for its answer.
      await p.device.write("tasks", t2, { list_id: alice.userId, title: "buy milk" });
      await p.device.remove("tasks", t1);
      for (const m of members) await p.device.remove("list_members", m.id);
      await p.device.remove("lists", list);
      await p.reconnect();
      expect(refusals(p.events)).toEqual([]);
      expect(await adminSql`select id from public.lists where id = ${list}`).toEqual([]);
      expect(await adminSql`select id from public.list_members where list_id = ${list}`).toEqual([]);
      expect(await adminSql`select id, list_id, title from public.tasks where id in ${adminSql([t1, t2])}`).toEqual([{ id: t2, list_id: alice.userId, title: "buy milk" }]);
      expect((await p.device.records()).get(`tasks/${t2}`)?.data).toMatchObject({ list_id: alice.userId, title: "buy milk" });
      await p.device.close();
    }, 60_000);
  });
}
