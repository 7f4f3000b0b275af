// A record created on a device and synced once, then deleted or edited
// there: each adapter, on its real local database, sends the change based on
// the version the create got, as the core client does.
// WatermelonDB pulls before it pushes, so after the sync that pushed the
// create its row holds no server version until a later pull. The adapter
// took the delete for that of a record never sent and dropped it (the server
// and the user's other devices kept the task, nothing was reported, and a
// pull could bring it back to the device), and sent an edit as the whole
// record again, based on no version: another device's edit of another field
// meanwhile answered it `conflict`.
// Below: a record edited here at a sync whose pull brought another device's
// change, then edited or deleted again.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { SyncEvent } from "../../client/events.ts";
import { coreClientDevice } from "../adapters/core-client-device.ts";
import { rxdbDevice } from "../adapters/rxdb-device.ts";
import type { DeviceFactory } from "../adapters/scenario.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";
import { clientDevice } from "../support/client-device.ts";
import { openDevice, syncTwice } from "../support/adapter-device.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { settled } from "../support/shared-lists.ts";

const phone = (factory: DeviceFactory, user: TestUser) => openDevice(factory, user, { name: "first-sync" });

/** What the server's ledger holds of the record's ops, oldest first. */
const ledger = (id: string) => adminSql<{ type: string; status: string }[]>`select type, status from app_private.sync_ops where record_id = ${id} order by created_at, type desc`;

/** The events an app sees about the record: a conflict's op type and whether the server's record is a tombstone, a discarded write's reason and fields. */
function told(events: SyncEvent[], id: string) {
  return events.flatMap<unknown[]>((e) => {
    if (e.type === "conflict") return e.op.record_id === id ? [["conflict", e.op.type, e.server.deleted]] : [];
    if (e.type === "op_rejected") return e.op.record_id === id ? [["op_rejected", e.error.code, null]] : [];
    if (e.type === "write_discarded") return e.record_id === id ? [["write_discarded", e.reason, e.fields]] : [];
    return [];
  });
}

for (const [label, factory] of [["core client", coreClientDevice], ["WatermelonDB", watermelonDevice], ["RxDB", rxdbDevice]] as const) {
  describe(`${label}: a record created here,`, () => {
    it("synced once, then deleted: it is deleted on the server, on the user's other device and here, with nothing to report", async () => {
      const alice = await createTestUser();
      const p = await phone(factory, alice);
      const task = randomUUID();
      await p.device.write("tasks", task, { list_id: alice.userId, title: "Milk", done: false, position: 0 });
      await p.device.sync();
      await p.device.remove("tasks", task);
      await syncTwice(p.device);
      expect(told(p.events, task)).toEqual([]);
      expect(await ledger(task)).toEqual([{ type: "upsert", status: "applied" }, { type: "delete", status: "applied" }]);
      expect(await adminSql`select id from public.tasks where id = ${task}`).toEqual([]);
      const other = await clientDevice(alice);
      await other.client.sync();
      expect((await other.client.list("tasks")).map((r) => r.id)).not.toContain(task);
      // A later sync does not bring it back.
      await syncTwice(p.device);
      expect((await p.device.records()).has(`tasks/${task}`)).toBe(false);
      await p.device.close();
    }, 60_000);

    it("synced once, then deleted while another device edited it: the delete answers conflict and the edit stays, here too", async () => {
      const alice = await createTestUser();
      const p = await phone(factory, alice);
      const task = randomUUID();
      await p.device.write("tasks", task, { list_id: alice.userId, title: "Milk", done: false, position: 0 });
      await p.device.sync();
      const other = await clientDevice(alice);
      await other.client.sync();
      await other.client.upsert("tasks", task, { title: "Milk, 2 litres" });
      await other.client.sync();
      await settled();
      await p.device.remove("tasks", task);
      await syncTwice(p.device);
      // The core client's serverWinsPerField keeps the server's record; the delete is lost and told.
      expect(told(p.events, task)).toEqual([["conflict", "delete", false], ["write_discarded", "conflict", null]]);
      expect(await adminSql`select title from public.tasks where id = ${task}`).toEqual([{ title: "Milk, 2 litres" }]);
      expect((await p.device.records()).get(`tasks/${task}`)?.data.title).toBe("Milk, 2 litres");
      await p.device.close();
    }, 60_000);

    it("synced once, then edited while another device edited another field: both edits stay, with nothing to report", async () => {
      const alice = await createTestUser();
      const p = await phone(factory, alice);
      const task = randomUUID();
      await p.device.write("tasks", task, { list_id: alice.userId, title: "Milk", done: false, position: 0 });
      await p.device.sync();
      const other = await clientDevice(alice);
      await other.client.sync();
      await other.client.upsert("tasks", task, { title: "Milk, 2 litres" });
      await other.client.sync();
      await settled();
      await p.device.write("tasks", task, { done: true });
      await syncTwice(p.device);
      expect(told(p.events, task)).toEqual([]);
      expect(await adminSql`select title, done from public.tasks where id = ${task}`).toEqual([{ title: "Milk, 2 litres", done: true }]);
      expect((await p.device.records()).get(`tasks/${task}`)?.data).toMatchObject({ title: "Milk, 2 litres", done: true });
      await p.device.close();
    }, 60_000);

    // Not a case for RxDB, whose replication is live: it pushes the create as it is made.
    const offlineUntilSync = label !== "RxDB";
    if (offlineUntilSync) it("deleted before any sync: nothing is sent", async () => {
      const alice = await createTestUser();
      const p = await phone(factory, alice);
      const task = randomUUID();
      await p.device.write("tasks", task, { list_id: alice.userId, title: "Milk", done: false, position: 0 });
      await p.device.remove("tasks", task);
      await syncTwice(p.device);
      expect(told(p.events, task)).toEqual([]);
      expect(await ledger(task)).toEqual([]);
      expect((await p.device.records()).has(`tasks/${task}`)).toBe(false);
      await p.device.close();
    }, 60_000);
  });
}

// A record this device holds (created here, or pulled), renamed here and
// synced by a sync whose pull brings another device's tick of it first (the
// tick shows here), then unticked or deleted here. WatermelonDB pulls before
// it pushes: the pull left the row's version at the one before the tick (the
// rename's base), and nothing moved it on once the rename was applied on top
// of the tick, so the untick or delete went out based on a version before the
// tick the user had seen: conflict, and the server kept the tick (or the
// task), told as write_discarded.
async function renamedAfterATick(label: string, factory: DeviceFactory, origin: "created here" | "pulled") {
  const alice = await createTestUser();
  const other = await clientDevice(alice);
  const task = randomUUID();
  const milk = { list_id: alice.userId, title: "Milk", done: false, position: 0 };
  if (origin === "pulled") {
    await other.client.upsert("tasks", task, milk);
    await other.client.sync();
    await settled();
  }
  const p = await phone(factory, alice);
  if (origin === "created here") {
    await p.device.write("tasks", task, milk);
    await p.device.sync();
    await settled();
  }
  await other.client.sync();
  await other.client.upsert("tasks", task, { done: true });
  await other.client.sync();
  await settled();
  await p.device.write("tasks", task, { title: "Milk, 2 litres" });
  // RxDB pushes the rename as it is made: here its sync's pull comes after that push, and after every
  // transaction open at its commit has ended (settled: a pull lists no change above the oldest open
  // transaction in the cluster, and other test files' writers hold theirs open).
  if (label === "RxDB") await until(async () => (await adminSql`select 1 from public.tasks where id = ${task} and title = 'Milk, 2 litres'`).length > 0);
  await settled();
  await p.device.sync();
  expect((await p.device.records()).get(`tasks/${task}`)?.data).toMatchObject({ title: "Milk, 2 litres", done: true });
  return { p, task, other };
}

/** Waits for a condition the test cannot await directly. */
async function until(holds: () => Promise<boolean>) {
  for (let i = 0; !(await holds()); i++) {
    if (i === 400) throw new Error("still not the case after 20 s");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const [label, factory] of [["core client", coreClientDevice], ["WatermelonDB", watermelonDevice], ["RxDB", rxdbDevice]] as const) {
  for (const origin of ["created here", "pulled"] as const) {
    describe(`${label}: a record ${origin}, renamed at a sync that brought another device's tick of it,`, () => {
      it("then unticked: the untick is applied and the rename kept, with nothing to report", async () => {
        const { p, task } = await renamedAfterATick(label, factory, origin);
        await p.device.write("tasks", task, { done: false });
        await syncTwice(p.device);
        expect(told(p.events, task)).toEqual([]);
        expect(await adminSql`select title, done from public.tasks where id = ${task}`).toEqual([{ title: "Milk, 2 litres", done: false }]);
        expect((await p.device.records()).get(`tasks/${task}`)?.data).toMatchObject({ title: "Milk, 2 litres", done: false });
        await p.device.close();
      }, 60_000);

      it("then deleted: it is deleted on the server and on the other device, with nothing to report", async () => {
        const { p, task, other } = await renamedAfterATick(label, factory, origin);
        await p.device.remove("tasks", task);
        await syncTwice(p.device);
        expect(told(p.events, task)).toEqual([]);
        expect(await adminSql`select id from public.tasks where id = ${task}`).toEqual([]);
        await other.client.sync();
        expect((await other.client.list("tasks")).map((r) => r.id)).not.toContain(task);
        expect((await p.device.records()).has(`tasks/${task}`)).toBe(false);
        await p.device.close();
      }, 60_000);
    });
  }
}

// WatermelonDB keeps the version each of its upserts got until the row holds it. A restore of the
// server (docs/sync.md "Restores") may undo such a write: the server then holds the record at a
// lower version, refuses the next change as ahead_of_server and sends its record as a correction.
// The kept version must not outlive that answer, or every later change is refused the same way.
// The restore is simulated by raising the kept version, as a write the restore undid left it.
describe("WatermelonDB: a record whose kept version a restore undid", () => {
  it("is refused once (ahead_of_server), then takes later edits on the server's version", async () => {
    const alice = await createTestUser();
    let watermelon: Awaited<ReturnType<typeof watermelonDevice>> | undefined;
    const p = await phone(async (setup) => (watermelon = await watermelonDevice(setup)), alice);
    const task = randomUUID();
    await p.device.write("tasks", task, { list_id: alice.userId, title: "Milk", done: false, position: 0 });
    await syncTwice(p.device);
    const version = (await p.device.records()).get(`tasks/${task}`)!.version;
    await watermelon!.database.localStorage.set("tidesync.created_versions", { [`tasks/${task}`]: version + 1000 });

    await p.device.write("tasks", task, { done: true });
    await syncTwice(p.device);
    const refused = p.events.filter((e) => e.type === "op_rejected");
    expect(refused.map((e) => e.type === "op_rejected" && e.error.details?.map((d) => d.code))).toEqual([["ahead_of_server"]]);

    await p.device.write("tasks", task, { title: "Oat milk" });
    await syncTwice(p.device);
    expect(p.events.filter((e) => e.type === "op_rejected")).toHaveLength(1);
    expect(await adminSql`select title from public.tasks where id = ${task}`).toEqual([{ title: "Oat milk" }]);
    await p.device.close();
  }, 60_000);
});
