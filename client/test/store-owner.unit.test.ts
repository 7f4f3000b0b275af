// A device's store belongs to the user who first synced it: after a sign-out,
// another user's sync on that store is refused before anything is sent, and
// the first user's queued writes stay for them.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { TidesyncApi } from "../api-client.ts";
import { TidesyncStoreAccountError, TidesyncStoreOwnerError } from "../api-error.ts";
import { MemoryStorage } from "../storage.ts";
import { type StoreBinding, StoreGuard } from "../store-owner.ts";
import { tokenSession, tokenSubject } from "../token-subject.ts";
import { BASE_URL, envelope, FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";
import { tokenOf } from "./tokens.ts";

const ALICE = "00000000-0000-4000-8000-0000000a11ce";
const BOB = "00000000-0000-4000-8000-000000000b0b";

describe("the store's user", () => {
  it("reads the sub of a JWT, and nothing from other tokens", () => {
    expect(tokenSubject(tokenOf(ALICE.toUpperCase()))).toBe(ALICE);
    expect(tokenSubject("test-token")).toBeNull();
    expect(tokenSubject("a.%%%.c")).toBeNull();
    const session = "00000000-0000-4000-8000-0000000005e5";
    expect(tokenSession(tokenOf(ALICE, session.toUpperCase()))).toBe(session);
    expect(tokenSession(tokenOf(ALICE))).toBeNull();
  });

  it("another user's sync is refused before anything is sent; the first user's writes stay queued for them", async () => {
    const server = new FakeServer();
    const storage = new MemoryStorage();
    let token = tokenOf(ALICE);
    const api = new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => token, fetch: server.fetch });
    const alice = (await openClient(server, { storage, api })).client;
    await alice.sync();
    expect(alice.storeUserId).toBe(ALICE);
    const id = await alice.create("tasks", { list_id: LIST_ID, title: "Alice's private note" });

    // Alice signs out; Bob signs in on the same phone and the app opens the same store.
    token = tokenOf(BOB);
    const bob = (await openClient(server, { storage, api, idPrefix: 2 })).client;
    const requests = server.requests.length;
    await expect(bob.sync()).rejects.toBeInstanceOf(TidesyncStoreOwnerError);
    await expect(bob.sync()).rejects.toMatchObject({ code: "STORE_OF_ANOTHER_USER", storeUserId: ALICE, userId: BOB });
    expect(bob.status).toMatchObject({ state: "error", lastErrorCode: "STORE_OF_ANOTHER_USER", pending: 1 });
    expect(server.requests.length).toBe(requests);
    expect((await storage.loadState()).outbox.map((p) => p.op.record_id)).toEqual([id]);

    // Alice back: her write goes out.
    token = tokenOf(ALICE);
    await bob.sync();
    expect(server.records.get(`tasks/${id}`)?.data?.title).toBe("Alice's private note");
  });

  it("a sync begun signed out stores the user whose token its first request carries, and stops at another's", async () => {
    const server = new FakeServer();
    const storage = new MemoryStorage();
    let token: string | null = null;
    const api = new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => token, fetch: server.fetch });
    const { client } = await openClient(server, { storage, api, pullLimit: 1 });
    await client.create("tasks", { list_id: LIST_ID, title: "one" });
    // Signed in while the sync fetches GET /v1/meta (a request without a token): its push goes as Alice.
    server.duringFirst("/v1/meta", async () => {
      token = tokenOf(ALICE);
    });
    await client.sync();
    expect(client.storeUserId).toBe(ALICE);
    expect((await storage.loadState()).owner).toBe(ALICE);

    // Bob's token from the first pull page on: the pull stops, nothing sent as Bob.
    await client.create("tasks", { list_id: LIST_ID, title: "two" });
    await client.create("tasks", { list_id: LIST_ID, title: "three" });
    server.duringFirst("/v1/sync/changes", async () => {
      token = tokenOf(BOB);
    });
    const requests = server.requests.length;
    await expect(client.sync()).rejects.toMatchObject({ code: "STORE_OF_ANOTHER_USER", storeUserId: ALICE, userId: BOB });
    expect(server.requests.slice(requests).map((r) => [r.path, r.headers.get("authorization")])).toEqual([
      ["/v1/sync/batch", `Bearer ${tokenOf(ALICE)}`],
      ["/v1/sync/changes", `Bearer ${tokenOf(ALICE)}`],
    ]);
  });

  it("an account deleted and created again with the same id: its sync of the earlier account's store is refused before anything is sent, the outbox kept", async () => {
    const server = new FakeServer();
    const storage = new MemoryStorage();
    let token = tokenOf(ALICE, randomUUID());
    const api = new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => token, fetch: server.fetch });
    const first = (await openClient(server, { storage, api })).client;
    await first.sync();
    expect((await storage.loadState()).ownerAccount).toBe(server.accountCreatedAt);
    const earlier = server.accountCreatedAt;
    const id = await first.create("tasks", { list_id: LIST_ID, title: "the earlier account's note" });
    await first.close();

    // The account created again signs in: a session of its own.
    server.accountCreatedAt = "2026-02-01T00:00:00.000000Z";
    token = tokenOf(ALICE, randomUUID());
    const again = (await openClient(server, { storage, api, idPrefix: 2 })).client;
    const requests = server.requests.length;
    await expect(again.sync()).rejects.toBeInstanceOf(TidesyncStoreAccountError);
    await expect(again.sync()).rejects.toMatchObject({ code: "STORE_OF_EARLIER_ACCOUNT", userId: ALICE, storeAccountCreatedAt: earlier, accountCreatedAt: server.accountCreatedAt });
    expect(again.status).toMatchObject({ state: "error", lastErrorCode: "STORE_OF_EARLIER_ACCOUNT", pending: 1 });
    // One question per session: the second sync is refused without asking again.
    expect(server.requests.slice(requests).map((r) => r.path)).toEqual(["/v1/whoami"]);
    expect(again.pendingOps().map((p) => p.op.record_id)).toEqual([id]);
    expect(server.records.has(`tasks/${id}`)).toBe(false);

    // The app keeps what it wants of the earlier account's writes, then deletes the store and opens it again.
    const exported = again.pendingOps().map((p) => p.op);
    await again.close();
    await storage.destroy();
    const fresh = (await openClient(server, { storage, api, idPrefix: 3 })).client;
    expect(fresh.pendingOps()).toEqual([]);
    await fresh.sync();
    expect((await storage.loadState()).ownerAccount).toBe(server.accountCreatedAt);
    expect(exported.map((op) => op.record_id)).toEqual([id]);
    expect(server.records.has(`tasks/${id}`)).toBe(false);
  });

  it("a store from before the account binding is bound to the account of its first sync, and refused another's from then on", async () => {
    const server = new FakeServer();
    const storage = new MemoryStorage();
    await storage.apply({ owner: ALICE });
    let token = tokenOf(ALICE, randomUUID());
    const api = new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => token, fetch: server.fetch });
    const { client } = await openClient(server, { storage, api });
    await client.create("tasks", { list_id: LIST_ID, title: "queued before the update" });
    await client.sync();
    expect(client.pendingOps()).toEqual([]);
    expect((await storage.loadState()).ownerAccount).toBe(server.accountCreatedAt);

    server.accountCreatedAt = "2026-02-01T00:00:00.000000Z";
    token = tokenOf(ALICE, randomUUID());
    const again = (await openClient(server, { storage, api, idPrefix: 2 })).client;
    await expect(again.sync()).rejects.toMatchObject({ code: "STORE_OF_EARLIER_ACCOUNT" });
  });
});

describe("the account of a session, asked once", () => {
  /** A guard of a store bound to nothing yet, binding in memory. */
  function guardOf(api: TidesyncApi): StoreGuard {
    let binding: StoreBinding = { owner: null, account: null };
    const read = async () => binding;
    return new StoreGuard({ api, binding: read, read, write: async (changed) => void (binding = { ...binding, ...changed }), lock: (work) => work() });
  }
  const whoamis = (server: FakeServer) => server.requests.filter((r) => r.path === "/v1/whoami").length;

  it("two checks of a new session at once ask GET /v1/whoami once; a failed ask is asked again", async () => {
    const server = new FakeServer();
    const session = randomUUID();
    const token = tokenOf(ALICE, session);
    const api = new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => token, fetch: server.fetch });
    let failing = true;
    server.script = (request) => request.path === "/v1/whoami" && failing ? envelope(503, "UNAVAILABLE", {}, { retryable: true }) : undefined;
    await expect(guardOf(api).check(ALICE, token, session)).rejects.toMatchObject({ status: 503 });
    failing = false;
    await Promise.all([guardOf(api).check(ALICE, token, session), guardOf(api).check(ALICE, token, session)]);
    expect(whoamis(server)).toBe(2);
  });

  it("is kept apart for each API base URL (two deployments in one process)", async () => {
    const [first, second] = [new FakeServer(), new FakeServer()];
    const session = randomUUID();
    const token = tokenOf(ALICE, session);
    await guardOf(new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => token, fetch: first.fetch })).check(ALICE, token, session);
    await guardOf(new TidesyncApi({ baseUrl: BASE_URL.replace("fake.", "other."), getAccessToken: () => token, fetch: second.fetch })).check(ALICE, token, session);
    expect([whoamis(first), whoamis(second)]).toEqual([1, 1]);
  });
});

describe("the core client's account check", () => {
  it("is retried like every other request of a sync: one 503 on GET /v1/whoami does not fail the sync", async () => {
    const server = new FakeServer();
    const token = tokenOf(ALICE, randomUUID());
    const api = new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => token, fetch: server.fetch });
    let whoamis = 0;
    server.script = (request) => request.path === "/v1/whoami" && whoamis++ === 0 ? envelope(503, "UNAVAILABLE", {}, { retryable: true }) : undefined;
    const { client } = await openClient(server, { storage: new MemoryStorage(), api });
    const id = await client.create("tasks", { list_id: LIST_ID, title: "sent despite one 503" });
    await client.sync();
    expect(client.status).toMatchObject({ state: "online", pending: 0 });
    expect(whoamis).toBe(2);
    expect(server.records.get(`tasks/${id}`)?.data?.title).toBe("sent despite one 503");
  });
});
