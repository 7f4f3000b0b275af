// The real client after a point-in-time restore (docs/sync.md "Restores"): the device holds records
// at versions above the restored database's (writes the restore undid), and the cursor secret was
// rotated so every device resyncs. The restore itself is simulated: the device's stored copy of a
// task is given a higher version and the undone write's data, and its cursor is signed with the
// old secret (400 INVALID_CURSOR, as after the rotation).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { encodeCursor } from "../../functions/api/sync/cursor.ts";
import { cursorPayload } from "../support/cursor-payload.ts";
import { adminSql, createTestUser, stack, type TestUser } from "../support/harness.ts";

/** A device of `user` holding one task it synced, then given the task as a write the restore undid left it. */
async function restoredDevice(user: TestUser, { rotateSecret }: { rotateSecret: boolean }) {
  // Runs before a pull page's answer reaches the client (the app goes on meanwhile).
  const hooks = { beforePage: async () => {} };
  const fetch: FetchFunction = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    if (String(input).includes("/v1/sync/changes") && response.status === 200) await hooks.beforePage();
    return response;
  };
  const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => user.token, fetch });
  const installationId = randomUUID();
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  const storage = new MemoryStorage();
  const first = await TidesyncClient.open({ api, storage, installationId });
  const id = await first.create("tasks", { list_id: user.userId, title: "before the restore point" });
  await first.sync();
  const [server] = await storage.getRecords([{ collection: "tasks", id }]);
  const { cursor } = await storage.loadState();
  await storage.apply({
    putRecords: [{ ...server, version: server.version + 1000, data: { ...server.data!, title: "undone by the restore" } }],
    ...(rotateSecret ? { cursor: await encodeCursor("the cursor secret before the rotation", user.userId, cursorPayload(cursor!)) } : {}),
  });
  const client = await TidesyncClient.open({ api, storage, installationId });
  const events: SyncEvent[] = [];
  client.on((event) => events.push(event));
  return { id, client, events, hooks, serverVersion: server.version };
}

const serverTask = async (id: string) => (await adminSql`select title, done from public.tasks where id = ${id}`)[0];

describe("the client after a restore of the server's database", () => {
  it("the full sync replaces a record the device holds at a higher version with the server's, and later edits are taken", async () => {
    const alice = await createTestUser();
    const { id, client, events, serverVersion } = await restoredDevice(alice, { rotateSecret: true });
    const report = await client.sync();
    expect(report.resynced).toBe(true);
    expect(await client.get("tasks", id)).toMatchObject({ version: serverVersion, data: { title: "before the restore point" } });
    await client.upsert("tasks", id, { done: true });
    await client.sync();
    expect(events.filter((e) => e.type === "op_rejected")).toEqual([]);
    expect(await serverTask(id)).toMatchObject({ title: "before the restore point", done: true });
    expect((await client.get("tasks", id))?.data).toMatchObject({ title: "before the restore point", done: true });
  });

  it("an edit queued on the undone version before the full sync is based on the server's version and reaches the server", async () => {
    const alice = await createTestUser();
    const { id, client, events } = await restoredDevice(alice, { rotateSecret: true });
    // Written offline on the undone state: based on the higher version. The sync pushes it first...
    await client.upsert("tasks", id, { done: true });
    await client.sync();
    // ...and the server refuses it (ahead_of_server): the answer's record replaces the undone one.
    const rejected = events.filter((e) => e.type === "op_rejected");
    expect(rejected.map((e) => e.type === "op_rejected" && e.error.details?.[0]?.code)).toEqual(["ahead_of_server"]);
    expect((await client.get("tasks", id))?.data).toMatchObject({ title: "before the restore point", done: false });
    await client.upsert("tasks", id, { done: true });
    await client.sync();
    expect(await serverTask(id)).toMatchObject({ title: "before the restore point", done: true });
  });

  it("an edit queued on the undone version while the full sync runs is rebased on the listed version and taken", async () => {
    const alice = await createTestUser();
    const { id, client, events, hooks } = await restoredDevice(alice, { rotateSecret: true });
    // The user edits the undone state after this sync's push, before its full sync's page is applied.
    hooks.beforePage = async () => {
      hooks.beforePage = async () => {};
      await client.upsert("tasks", id, { done: true });
    };
    await client.sync();
    expect(client.pendingOps()).toHaveLength(1);
    await client.sync();
    expect(events.filter((e) => e.type === "op_rejected")).toEqual([]);
    expect(await serverTask(id)).toMatchObject({ title: "before the restore point", done: true });
  });

  it("an edit answered ahead_of_server (no resync: the cursor still verifies) shows the server's record again, and the next edit is taken", async () => {
    const alice = await createTestUser();
    const { id, client, events } = await restoredDevice(alice, { rotateSecret: false });
    await client.upsert("tasks", id, { title: "edited on the undone state" });
    await client.sync();
    expect(events.some((e) => e.type === "op_rejected" && e.error.details?.[0]?.code === "ahead_of_server")).toBe(true);
    expect((await client.get("tasks", id))?.data?.title).toBe("before the restore point");
    await client.upsert("tasks", id, { done: true });
    await client.sync();
    expect(events.filter((e) => e.type === "op_rejected")).toHaveLength(1);
    expect(await serverTask(id)).toMatchObject({ title: "before the restore point", done: true });
  });
});
