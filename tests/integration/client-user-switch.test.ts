// Sign-out, and another user signs in on the same device with the app opening
// the same store: the store belongs to the user who first synced it, so the
// new user's sync is refused before anything is sent (nothing of the first
// user's is pushed with the new user's token, nor dropped as NOT_FOUND).
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { SqliteStorage, userTablePrefix } from "../../client/storage-sqlite.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { betterSqliteDriver } from "../../client/test/better-sqlite3-driver.ts";
import { clientDevice } from "../support/client-device.ts";
import { adminSql, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { settled, share } from "../support/shared-lists.ts";

describe("another user signs in on the same device", () => {
  it("their sync of the first user's store is refused, nothing sent; the first user's writes go out when they are back", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const file = path.join(mkdtempSync(path.join(tmpdir(), "tidesync-switch-")), "tidesync.db");
    const installationId = randomUUID();
    let token = alice.token;
    const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => token });
    const device = { installation_id: installationId, platform: "ios" as const, app_version: "1.0.0", build_number: 1 };
    await api.startSession({ device });
    const a = await TidesyncClient.open({ api, storage: new SqliteStorage(betterSqliteDriver(file)), installationId });
    const shared = await a.create("lists", { title: "Family" });
    const t = await a.create("tasks", { list_id: shared, title: "Milk" });
    await a.sync();
    await share(alice, shared, bob, "editor");
    // Alice, offline: a private task and an edit in the shared list; she signs out, Bob signs in.
    const priv = await a.create("tasks", { list_id: alice.userId, title: "Alice's private note" });
    await a.upsert("tasks", t, { title: "Oat milk (Alice)" });
    token = bob.token;
    await api.startSession({ device });
    const b = await TidesyncClient.open({ api, storage: new SqliteStorage(betterSqliteDriver(file)), installationId });
    expect(b.storeUserId).toBe(alice.userId);
    await settled();
    await expect(b.sync()).rejects.toMatchObject({ code: "STORE_OF_ANOTHER_USER", storeUserId: alice.userId, userId: bob.userId });
    expect(b.pendingOps()).toHaveLength(2);
    const [milk] = await adminSql<{ title: string }[]>`select title from public.tasks where id = ${t}`;
    expect(milk.title).toBe("Milk");

    // Bob gets a store of his own (same file, his table prefix).
    const own = await TidesyncClient.open({ api, storage: new SqliteStorage(betterSqliteDriver(file), { tablePrefix: userTablePrefix(bob.userId) }), installationId });
    await own.sync();
    expect((await own.list("tasks")).map((r) => r.data?.title)).toEqual(["Milk"]);

    // Alice back: her queued writes reach the server.
    token = alice.token;
    await api.startSession({ device });
    await a.sync();
    const rows = await adminSql<{ id: string; title: string }[]>`select id, title from public.tasks where id in (${t}, ${priv}) order by title`;
    expect(rows.map((r) => r.title)).toEqual(["Alice's private note", "Oat milk (Alice)"]);
  });
});

// The user switches while a sync runs: its later requests (a retry, the next
// batch, the next pull page) would carry the new user's token. Each is checked
// against the store's owner before it is sent, so the sync stops instead.
describe("another user signs in while a sync runs", () => {
  const device = () => ({ installation_id: randomUUID(), platform: "ios" as const, app_version: "1.0.0", build_number: 1 });

  /** Alice's client on a new store, Bob with a private task; `onRequest` may switch the token. */
  async function aliceAndBob(onRequest: (request: { method: string; path: string; respond: () => Promise<Response> }, switchToBob: () => Promise<void>) => Promise<Response>, options: { maxOpsPerBatch?: number; pullLimit?: number } = {}) {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const bobs = await clientDevice(bob);
    const bobTask = await bobs.client.create("tasks", { list_id: bob.userId, title: "Bob's private task" });
    await bobs.client.sync();
    const phone = device();
    let token = alice.token;
    /** Requests this client sent with Bob's token. */
    const asBob: string[] = [];
    const switchToBob = async () => {
      token = bob.token;
      await new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => bob.token }).startSession({ device: phone });
    };
    const fetchImpl: FetchFunction = (input, init) => {
      const url = new URL(input);
      if ((init.headers as Record<string, string>).authorization === `Bearer ${bob.token}`) asBob.push(`${init.method} ${url.pathname}`);
      return onRequest({ method: init.method ?? "GET", path: url.pathname.replace(/^.*(?=\/v1\/)/, ""), respond: () => fetch(input, init) }, switchToBob);
    };
    const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => token, fetch: fetchImpl });
    await api.startSession({ device: phone });
    const a = await TidesyncClient.open({ api, storage: new MemoryStorage(), installationId: phone.installation_id, backoff: { baseMs: 1, maxMs: 5 }, ...options });
    const events: SyncEvent[] = [];
    a.on((event) => events.push(event));
    const backAsAlice = async () => {
      token = alice.token;
      await api.startSession({ device: phone });
    };
    return { alice, bob, bobTask, a, events, asBob, backAsAlice };
  }

  it("a batch whose answer was lost is not resent with the new user's token, nor dropped", async () => {
    let batches = 0;
    const { alice, bobTask, a, events, asBob, backAsAlice } = await aliceAndBob(async ({ method, path, respond }, switchToBob) => {
      if (method === "POST" && path === "/v1/sync/batch" && batches++ === 0) {
        await switchToBob();
        throw new TypeError("network down");
      }
      return await respond();
    });
    const id = await a.create("tasks", { list_id: alice.userId, title: "Alice's note" });
    await expect(a.sync()).rejects.toMatchObject({ code: "STORE_OF_ANOTHER_USER", storeUserId: alice.userId });
    expect(asBob).toEqual([]);
    expect(events).toEqual([]);
    expect(a.pendingOps().map((p) => p.op.record_id)).toEqual([id]);
    expect((await a.get("tasks", id))?.data?.title).toBe("Alice's note");
    expect(await a.get("tasks", bobTask)).toBeUndefined();

    await backAsAlice();
    await a.sync();
    const [row] = await adminSql<{ title: string }[]>`select title from public.tasks where id = ${id}`;
    expect(row?.title).toBe("Alice's note");
    expect(a.pendingOps()).toEqual([]);
  });

  it("the batches after the switch stay queued, and nothing of the new user's reaches the store", async () => {
    let batches = 0;
    const { alice, bobTask, a, events, asBob, backAsAlice } = await aliceAndBob(async ({ method, path, respond }, switchToBob) => {
      const response = await respond();
      if (method === "POST" && path === "/v1/sync/batch" && batches++ === 0) await switchToBob();
      return response;
    }, { maxOpsPerBatch: 1 });
    const ids = [];
    for (const title of ["one", "two", "three"]) ids.push(await a.create("tasks", { list_id: alice.userId, title }));
    await expect(a.sync()).rejects.toMatchObject({ code: "STORE_OF_ANOTHER_USER", storeUserId: alice.userId });
    expect(asBob).toEqual([]);
    expect(events.filter((e) => e.type === "op_rejected" || e.type === "write_discarded")).toEqual([]);
    expect(a.pendingOps().map((p) => p.op.record_id)).toEqual(ids.slice(1));
    expect(await a.get("tasks", bobTask)).toBeUndefined();

    await backAsAlice();
    await a.sync();
    const rows = await adminSql<{ title: string }[]>`select title from public.tasks where id in ${adminSql(ids)} order by title`;
    expect(rows.map((r) => r.title)).toEqual(["one", "three", "two"]);
  });

  it("a pull stops at the switch: the pages already read are the first user's, the next are not asked for", async () => {
    let pages = 0;
    const { alice, bobTask, a, asBob, backAsAlice } = await aliceAndBob(async ({ method, path, respond }, switchToBob) => {
      const response = await respond();
      if (method === "GET" && path === "/v1/sync/changes" && pages++ === 0) await switchToBob();
      return response;
    }, { pullLimit: 1 });
    // Alice's data, written on another of her devices: the first sync of this store pulls it, a page per record.
    const other = await clientDevice(alice);
    const titles = ["one", "two", "three"];
    const ids = [];
    for (const title of titles) ids.push(await other.client.create("tasks", { list_id: alice.userId, title }));
    await other.client.sync();
    await settled();
    await expect(a.sync()).rejects.toMatchObject({ code: "STORE_OF_ANOTHER_USER", storeUserId: alice.userId });
    expect(asBob).toEqual([]);
    expect(await a.get("tasks", bobTask)).toBeUndefined();
    expect((await a.serverRecords()).length).toBe(1);

    await backAsAlice();
    await a.sync();
    expect((await a.list("tasks")).map((r) => r.data?.title).sort()).toEqual([...titles].sort());
  });
});

// The account is deleted and created again with the same id (auth.admin.createUser({ id })):
// the same user id, another account. The store is bound to the account it first synced as (its
// creation time, GET /v1/whoami's account_created_at), so the earlier account's queued writes are
// refused before anything is sent, as another user's are, and stay in the store for the app.
describe("the account is deleted and created again with the same id", () => {
  it("the earlier account's queued writes are not pushed as the new account's: the sync is refused, the outbox kept", async () => {
    const bob = await createTestUser();
    const storage = new MemoryStorage();
    const installationId = randomUUID();
    const sent: string[] = [];
    const open = async (user: TestUser) => {
      const fetchImpl: FetchFunction = (input, init) => {
        sent.push(new URL(input).pathname.replace(/^.*(?=\/v1\/)/, ""));
        return fetch(input, init);
      };
      const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => user.token, fetch: fetchImpl });
      await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
      return await TidesyncClient.open({ api, storage, installationId });
    };
    const first = await open(bob);
    await first.sync();
    const diary = await first.create("tasks", { list_id: bob.userId, title: "old account's private diary" });
    const list = await first.create("lists", { title: "old account's list" });
    const secret = await first.create("tasks", { list_id: list, title: "old secret" });
    await first.close();

    await adminSql`delete from auth.users where id = ${bob.userId}`;
    const reborn = await createTestUser({ userId: bob.userId });
    await settled();
    const again = await open(reborn);
    sent.length = 0;
    await expect(again.sync()).rejects.toMatchObject({ code: "STORE_OF_EARLIER_ACCOUNT", userId: bob.userId });
    expect(again.status).toMatchObject({ state: "error", lastErrorCode: "STORE_OF_EARLIER_ACCOUNT", pending: 3 });
    expect(sent.filter((path) => path.startsWith("/v1/sync/"))).toEqual([]);
    expect(again.pendingOps().map((p) => p.op.record_id)).toEqual([diary, list, secret]);
    expect((await again.get("tasks", diary))?.data?.title).toBe("old account's private diary");
    await settled();
    expect(await adminSql`select id from public.tasks where id in (${diary}, ${secret}) union all select id from public.lists where id = ${list}`).toEqual([]);

    // The new account's own store syncs as usual.
    const own = await TidesyncClient.open({ api: new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => reborn.token }), storage: new MemoryStorage(), installationId });
    await own.sync();
    expect((await own.list("lists")).map((l) => l.id)).toEqual([reborn.userId]);
  });
});
