// The real client (client/) through a full sync against real Deno + Postgres,
// while others write between its pages: when the full sync ends, the client
// drops every local record its pages did not list (docs/sync.md). A record its
// user sees all along must never be dropped there, nor the edit queued for it;
// and a record not listed with an edit queued stays until the server has
// answered the edit (it may take it: the user may see the record again).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import type { ChangesResponse } from "../../functions/_shared/schemas/sync.ts";
import { encodeCursor } from "../../functions/api/sync/cursor.ts";
import { cursorPayload } from "../support/cursor-payload.ts";
import { adminSql, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { holdOpenTransactions } from "../support/open-transactions.ts";
import { asUser, removeMember, settled, share } from "../support/shared-lists.ts";
import { writeRows } from "../support/sync-records.ts";

const earlyId = () => `00000000-0000-4000-8000-${randomUUID().slice(-12)}`;
const lateId = () => `ffffffff-ffff-4fff-bfff-${randomUUID().slice(-12)}`;

/**
 * A phone of `user`: the real client on an in-memory store, pulling pages of one record.
 * `onPage` runs after each pull page arrives and before the client applies it (the app goes on
 * meanwhile: other devices write, the user edits).
 */
async function phone(user: TestUser) {
  const hooks = { onPage: async (_page: ChangesResponse) => {} };
  const fetch: FetchFunction = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    if (!String(input).includes("/v1/sync/changes") || response.status !== 200) return response;
    const text = await response.text();
    await hooks.onPage(JSON.parse(text) as ChangesResponse);
    return new Response(text, { status: response.status, headers: response.headers });
  };
  const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => user.token, fetch });
  const installationId = randomUUID();
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  const storage = new MemoryStorage();
  const events: SyncEvent[] = [];
  const open = async () => {
    const client = await TidesyncClient.open({ api, storage, installationId, pullLimit: 1 });
    client.on((event) => events.push(event));
    return client;
  };
  return { hooks, storage, events, open };
}

/** The device was away longer than the retention window: its stored cursor now answers 410 RESYNC_REQUIRED. */
async function ageCursor(user: TestUser, storage: MemoryStorage) {
  const { cursor } = await storage.loadState();
  const payload = cursorPayload(cursor!);
  await storage.apply({ cursor: await encodeCursor(stack.functionsEnv.TIDESYNC_CURSOR_SECRET, user.userId, { ...payload, iat: payload.iat - 31 * 86_400 }) });
}

describe("the client's full sync while others write", () => {
  it("keeps a task moved behind the sync's pages, and the edit made meanwhile reaches the server", async () => {
    const alice = await createTestUser();
    const [early, late, r] = [earlyId(), lateId(), randomUUID()];
    await writeRows(alice, [
      { collection: "lists", id: early, data: { title: "early" } },
      { collection: "lists", id: late, data: { title: "late" } },
      { collection: "tasks", id: r, data: { list_id: late, title: "R" } },
    ]);
    const device = await phone(alice);
    await settled();
    await (await device.open()).sync();

    await ageCursor(alice, device.storage);
    const client = await device.open();
    let moved = false;
    device.hooks.onPage = async (page) => {
      // once the pages have passed 'early' (a list after it is listed)
      if (moved || !page.changes.some((c) => c.collection === "lists" && c.id !== early)) return;
      moved = true;
      // Alice's other device moves R from 'late' into 'early' ...
      await asUser(alice, (tx) => tx`update public.tasks set list_id = ${early} where id = ${r}`);
      // ... while she edits R on this one (the app is usable during a sync)
      await client.upsert("tasks", r, { title: "edited during the full sync" });
    };
    const report = await client.sync();
    device.hooks.onPage = async () => {};
    expect(moved).toBe(true);
    expect(report.resynced).toBe(true);
    expect(device.events.filter((e) => e.type === "write_discarded")).toEqual([]);
    expect(await client.get("tasks", r)).toMatchObject({ data: { title: "edited during the full sync", list_id: early } });

    await settled();
    await client.sync();
    expect(client.pendingOps()).toEqual([]);
    expect(await client.get("tasks", r)).toMatchObject({ pending: false, data: { title: "edited during the full sync", list_id: early } });
    const [stored] = await adminSql<{ title: string; list_id: string }[]>`select title, list_id::text from public.tasks where id = ${r}`;
    expect(stored).toEqual({ title: "edited during the full sync", list_id: early });
  });

  /**
   * Bob, an editor of Alice's list, holds its task on his phone; a full sync (after 410) starts,
   * and while its first page is read Alice removes him from the list and he edits the task: the
   * pages do not list it (he cannot see it when they are read), and the edit is queued. A
   * transaction held open from before the sync to its end keeps every pull below the removal
   * (docs/sync.md, guarantee 1), so the sync ends without having pulled it: the case where only
   * the pages' not listing it tells the client.
   */
  async function editedWhileRemoved() {
    const [alice, bob] = [await createTestUser(), await createTestUser()];
    const [list, task] = [randomUUID(), randomUUID()];
    await writeRows(alice, [{ collection: "lists", id: list, data: { title: "Shared" } }, { collection: "tasks", id: task, data: { list_id: list, title: "Milk" } }]);
    await share(alice, list, bob, "editor");
    const device = await phone(bob);
    await settled();
    await (await device.open()).sync();
    await ageCursor(bob, device.storage);
    const client = await device.open();
    expect(await client.get("tasks", task)).toMatchObject({ data: { title: "Milk" } });
    let removed = false;
    device.hooks.onPage = async () => {
      if (removed) return;
      removed = true;
      await removeMember(alice, list, bob);
      await client.upsert("tasks", task, { title: "Oat milk" });
    };
    const held = await holdOpenTransactions(stack.adminDbUrl, 1);
    const report = await client.sync().finally(() => held.end());
    device.hooks.onPage = async () => {};
    expect(report.resynced).toBe(true);
    // Not listed, but its edit is not dropped without the server's answer: the record stays for it.
    expect(device.events.filter((e) => e.type === "write_discarded")).toEqual([]);
    expect(client.pendingOps().map((p) => p.op.record_id)).toEqual([task]);
    expect(await client.get("tasks", task)).toMatchObject({ pending: true, data: { title: "Oat milk" } });
    return { alice, bob, list, task, client, device };
  }

  it("a record the pages did not list keeps its queued edit until the server answers it: taken once the user may edit it again", async () => {
    const { alice, bob, list, task, client, device } = await editedWhileRemoved();
    // Alice adds him back before his next sync: the edit is his to make again.
    await share(alice, list, bob, "editor");
    await settled();
    await client.sync();
    expect(device.events.filter((e) => e.type === "write_discarded" || e.type === "op_rejected")).toEqual([]);
    expect(client.pendingOps()).toEqual([]);
    expect(await client.get("tasks", task)).toMatchObject({ pending: false, data: { title: "Oat milk", list_id: list } });
    const [stored] = await adminSql<{ title: string }[]>`select title from public.tasks where id = ${task}`;
    expect(stored.title).toBe("Oat milk");
  });

  it("a record the user lost while the pages were read is removed before the sync ends, with the edit made on it meanwhile", async () => {
    const [alice, bob] = [await createTestUser(), await createTestUser()];
    const [list, task] = [earlyId(), randomUUID()];
    await writeRows(alice, [{ collection: "lists", id: list, data: { title: "Shared" } }, { collection: "tasks", id: task, data: { list_id: list, title: "Milk" } }]);
    await share(alice, list, bob, "editor");
    const device = await phone(bob);
    await settled();
    await (await device.open()).sync();
    await ageCursor(bob, device.storage);
    const client = await device.open();
    let removed = false;
    device.hooks.onPage = async () => {
      if (removed) return;
      removed = true;
      await removeMember(alice, list, bob);
      await settled();
      await client.upsert("tasks", task, { title: "Oat milk" });
    };
    const report = await client.sync();
    device.hooks.onPage = async () => {};
    expect(report.resynced).toBe(true);
    // the full sync's pages do not list the removals; the pull it hands over to does, in this sync()
    expect(device.events).toContainEqual(expect.objectContaining({ type: "write_discarded", reason: "access_revoked", record_id: task }));
    expect(client.pendingOps()).toEqual([]);
    expect(await client.get("tasks", task)).toBeUndefined();
    expect(await client.get("lists", list)).toBeUndefined();
  });

  it("... and dropped, told as NOT_FOUND, when the server refuses it (still not theirs)", async () => {
    const { task, client, device } = await editedWhileRemoved();
    await settled();
    await client.sync();
    expect(device.events).toContainEqual(expect.objectContaining({ type: "op_rejected", error: expect.objectContaining({ code: "NOT_FOUND" }), dropped: true }));
    expect(device.events).toContainEqual(expect.objectContaining({ type: "write_discarded", reason: "rejected", record_id: task }));
    expect(client.pendingOps()).toEqual([]);
    expect(await client.get("tasks", task)).toBeUndefined();
    const [stored] = await adminSql<{ title: string }[]>`select title from public.tasks where id = ${task}`;
    expect(stored.title).toBe("Milk");
  });
});
