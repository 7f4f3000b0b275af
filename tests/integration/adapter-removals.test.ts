// A record the pull says is gone (deleted by another device, access revoked,
// moved to a list the user cannot see, or not listed by a 410 full sync)
// while the device holds an unpushed edit of it: each adapter, on its real
// local database, reports the lost edit with the events the core client
// (push, then pull; run here too) emits for the same sequence, and ends
// without the record.
// WatermelonDB pulls before it pushes, and used to destroy the record and
// the edit silently.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { FetchFunction } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import type { RecordData } from "../../client/storage.ts";
import { encodeCursor } from "../../functions/api/sync/cursor.ts";
import { coreClientDevice } from "../adapters/core-client-device.ts";
import { rxdbDevice } from "../adapters/rxdb-device.ts";
import type { AdapterDevice, DeviceFactory } from "../adapters/scenario.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";
import { cursorPayload } from "../support/cursor-payload.ts";
import { openDevice } from "../support/adapter-device.ts";
import { adminSql, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { pushOk, remove, removeMember, settled, share, upsert } from "../support/shared-lists.ts";

interface Phone {
  device: AdapterDevice;
  events: SyncEvent[];
  /** The next pull sends its cursor aged past the retention window (the server answers 410). */
  ageNextCursor(): void;
  /** A write made offline (RxDB would push it as soon as it is made): the device stays offline until online(). */
  writeOffline(collection: string, id: string, data: RecordData): Promise<void>;
  online(): void;
}

async function phone(factory: DeviceFactory, user: TestUser): Promise<Phone> {
  const net = { age: false, offline: false };
  const fetch: FetchFunction = async (input, init) => {
    if (net.offline) throw new TypeError("fetch failed");
    const url = new URL(String(input));
    const cursor = url.searchParams.get("cursor");
    if (net.age && url.pathname.endsWith("/v1/sync/changes") && cursor) {
      net.age = false;
      const payload = cursorPayload(cursor);
      url.searchParams.set("cursor", await encodeCursor(stack.functionsEnv.TIDESYNC_CURSOR_SECRET, user.userId, { ...payload, iat: payload.iat - 400 * 86_400 }));
    }
    return await globalThis.fetch(url.toString(), init);
  };
  const { device, events } = await openDevice(factory, user, { name: "removals", fetch });
  return {
    device,
    events,
    ageNextCursor: () => void (net.age = true),
    async writeOffline(collection, id, data) {
      net.offline = true;
      await device.write(collection, id, data);
    },
    online: () => void (net.offline = false),
  };
}

/** The events an app sees about the record, as [type, reason or error code, fields]. */
function told(events: SyncEvent[], id: string) {
  return events.flatMap((e) => {
    if (e.type === "conflict") return e.op.record_id === id ? [["conflict", e.server.deleted ? "deleted" : "live", null]] : [];
    if (e.type === "op_rejected") return e.op.record_id === id ? [["op_rejected", e.error.code, null]] : [];
    if (e.type === "write_discarded") return e.record_id === id ? [["write_discarded", e.reason, e.fields]] : [];
    return [];
  });
}

/** What the core client tells for an edit of a record deleted meanwhile: its push answers conflict with the tombstone. */
const LOST_TO_DELETE = [["conflict", "deleted", null], ["write_discarded", "conflict", ["done"]]];
/** … and for an edit of a record the user can no longer see: NOT_FOUND. */
const LOST_TO_NOT_FOUND = [["op_rejected", "NOT_FOUND", null], ["write_discarded", "rejected", null]];

/** The device ends without the record, reports the edit as `expected` once, and the server never took it. */
async function expectLost(p: Phone, id: string, expected: unknown[]) {
  p.online();
  await p.device.sync();
  await settled();
  await p.device.sync();
  expect(told(p.events, id)).toEqual(expected);
  expect((await p.device.records()).has(`tasks/${id}`)).toBe(false);
  const [server] = await adminSql<{ done: boolean }[]>`select done from public.tasks where id = ${id}`;
  if (server) expect(server.done).toBe(false);
}

for (const [label, factory] of [["core client", coreClientDevice], ["WatermelonDB", watermelonDevice], ["RxDB", rxdbDevice]] as const) {
  describe(`${label}: an unpushed edit of a record that leaves the user's view is reported, not dropped silently`, () => {
    it("deleted by another device of the user", async () => {
      const alice = await createTestUser();
      const otherPhone = (await alice.newSession()).token;
      const task = randomUUID();
      const created = await pushOk(otherPhone, { ops: [upsert("tasks", task, { list_id: alice.userId, title: "one" })] });
      await settled();
      const p = await phone(factory, alice);
      await p.writeOffline("tasks", task, { done: true });
      await pushOk(otherPhone, { ops: [remove("tasks", task, created.results[0].record!.version)] });
      await settled();
      await expectLost(p, task, LOST_TO_DELETE);
      await p.device.close();
    }, 60_000);

    it("access revoked: the user is removed from the shared list", async () => {
      const alice = await createTestUser();
      const bob = await createTestUser();
      const list = randomUUID();
      const task = randomUUID();
      await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", task, { list_id: list, title: "one" })] });
      await share(alice, list, bob, "editor");
      await settled();
      const p = await phone(factory, bob);
      await p.writeOffline("tasks", task, { done: true });
      await removeMember(alice, list, bob);
      await settled();
      await expectLost(p, task, LOST_TO_NOT_FOUND);
      expect((await p.device.records()).has(`lists/${list}`)).toBe(false);
      await p.device.close();
    }, 60_000);

    it("moved by the owner to a list the editor cannot see", async () => {
      const alice = await createTestUser();
      const bob = await createTestUser();
      const list = randomUUID();
      const task = randomUUID();
      await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", task, { list_id: list, title: "one" })] });
      await share(alice, list, bob, "editor");
      await settled();
      const p = await phone(factory, bob);
      await p.writeOffline("tasks", task, { done: true });
      await adminSql`update public.tasks set list_id = ${alice.userId} where id = ${task}`;
      await settled();
      await expectLost(p, task, LOST_TO_NOT_FOUND);
      await p.device.close();
    }, 60_000);

    it("not listed by the full sync of a 410 (deleted by another device meanwhile)", async () => {
      const alice = await createTestUser();
      const otherPhone = (await alice.newSession()).token;
      const task = randomUUID();
      const created = await pushOk(otherPhone, { ops: [upsert("tasks", task, { list_id: alice.userId, title: "one" })] });
      await settled();
      const p = await phone(factory, alice);
      await p.writeOffline("tasks", task, { done: true });
      await pushOk(otherPhone, { ops: [remove("tasks", task, created.results[0].record!.version)] });
      await settled();
      p.ageNextCursor();
      await expectLost(p, task, LOST_TO_DELETE);
      expect(p.events.filter((e) => e.type === "resync")).toHaveLength(1);
      await p.device.close();
    }, 60_000);
  });
}
