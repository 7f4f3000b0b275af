// Sign-out, and another user signs in on the same device with the app opening
// the same store: the store belongs to the user who first synced it, so the
// new user's sync is refused before anything is sent (nothing of the first
// user's is pushed with the new user's token, nor dropped as NOT_FOUND).
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { TidesyncApi } from "../../client/api-client.ts";
import { SqliteStorage, userTablePrefix } from "../../client/storage-sqlite.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { betterSqliteDriver } from "../../client/test/better-sqlite3-driver.ts";
import { adminSql, createTestUser, stack } from "../support/harness.ts";
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
