// Clients with different `collections` on one store (client/README.md, "Background sync"): the
// app's client pulls every collection, its background task's `collections: ["tasks"]`. The store
// has one pull, and the server binds a cursor to the filter it was issued for. Before, each client
// pulled with its own filter: every sync of either met the other's cursor, 400 INVALID_CURSOR, and
// pulled everything again (a `resync` event each time). Now the store records the filter of its
// cursors, and a client whose collections it takes in pulls with it (client/sync-client.ts pullFilter).
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SyncEvent } from "../../client/events.ts";
import { SqliteStorage } from "../../client/storage-sqlite.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { betterSqliteDriver } from "../../client/test/better-sqlite3-driver.ts";
import { userWithPulls } from "../support/client-device.ts";
import { stack, type TestUser } from "../support/harness.ts";
import { pushOk, settled, upsert } from "../support/shared-lists.ts";

/** A user with 20 tasks, a session, a new SQLite file, and the `collections` query of every pull (null: none), in order. */
async function sharedFile() {
  const { user: alice, api, installationId, pulls: filters } = await userWithPulls(stack.apiUrl, 20, (query) => query.get("collections"));
  const file = path.join(mkdtempSync(path.join(tmpdir(), "tidesync-collections-")), "tidesync.db");
  const open = (collections?: string[]) => TidesyncClient.open({ api, storage: new SqliteStorage(betterSqliteDriver(file)), installationId, ...(collections ? { collections } : {}) });
  return { alice, filters, open, store: () => new SqliteStorage(betterSqliteDriver(file)) };
}

/** The same cursor with its MAC altered: the server answers 400 INVALID_CURSOR (as after a secret rotation). */
function tampered(cursor: string): string {
  const [payload, mac] = cursor.split(".");
  return `${payload}.${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`;
}

async function newList(alice: TestUser, title: string): Promise<string> {
  const id = randomUUID();
  await pushOk(alice, { ops: [upsert("lists", id, { title })] });
  await settled();
  return id;
}

describe("clients with different `collections` on one store", () => {
  it("the app's (every collection) and its background task's (tasks): no sync of either starts over, and the task's brings the lists too", async () => {
    const { alice, filters, open } = await sharedFile();
    const app = await open();
    const task = await open(["tasks"]);
    const events: SyncEvent[] = [];
    app.on((event) => events.push(event));
    await app.sync();
    await task.sync();
    const rounds = [];
    for (let i = 0; i < 3; i++) for (const client of [app, task]) rounds.push(await client.sync());
    expect(rounds.map((report) => report.resynced)).toEqual([false, false, false, false, false, false]);
    expect(events.filter((event) => event.type === "resync")).toEqual([]);
    // The task's client follows the store's pull, issued without a filter.
    expect(filters.every((filter) => filter === null)).toBe(true);
    // Its sync applies the other collections' changes: the store holds them for the app anyway.
    const list = await newList(alice, "made on the web");
    expect(await task.sync()).toMatchObject({ resynced: false });
    expect((await app.get("lists", list))?.data?.title).toBe("made on the web");
    expect(await app.sync()).toMatchObject({ resynced: false, pulled: 0 });
    // Both at once (the OS wakes the task while the app syncs).
    const both = await Promise.all([app.sync(), task.sync(), app.sync()]);
    expect(both.map((report) => report.resynced)).toEqual([false, false, false]);
    expect((await app.list("tasks")).length).toBe(20);
  }, 60_000);

  it("a client whose collections add one (an app upgrade) pulls everything once, with its own filter; the store follows it from then on", async () => {
    const { filters, open } = await sharedFile();
    const old = await open(["tasks"]);
    await old.sync();
    expect(await old.list("lists")).toEqual([]);
    const upgraded = await open(["lists", "tasks"]);
    expect(await upgraded.sync()).toMatchObject({ resynced: true });
    expect((await upgraded.list("lists")).length).toBe(1);
    filters.length = 0;
    expect(await upgraded.sync()).toMatchObject({ resynced: false });
    expect(await old.sync()).toMatchObject({ resynced: false });
    expect(filters).toEqual(["lists,tasks", "lists,tasks"]);
  }, 60_000);

  it("a full sync the task's client runs with the store's filter drops what it did not list in every collection of it", async () => {
    const { open, store } = await sharedFile();
    const app = await open();
    const task = await open(["tasks"]);
    await app.sync();
    // A list the server does not have (e.g. deleted while the removal aged out), and a cursor the server refuses.
    const stray = randomUUID();
    const storage = store();
    const { cursor } = await storage.loadState();
    await storage.apply({
      cursor: tampered(cursor!),
      putRecords: [{ collection: "lists", id: stray, version: 1, deleted: false, data: { title: "stray" }, updated_at: new Date().toISOString() }],
    });
    expect(await task.sync()).toMatchObject({ resynced: true });
    expect(await app.get("lists", stray)).toBeUndefined();
    expect((await app.list("tasks")).length).toBe(20);
    expect(await app.sync()).toMatchObject({ resynced: false });
  }, 60_000);

  it("a store filter naming a collection the server does not publish is not followed: the client pulls with its own", async () => {
    const { open, store } = await sharedFile();
    const task = await open(["tasks"]);
    await task.sync();
    // As if an older app version had pulled a collection the server has since stopped syncing.
    await store().apply({ pullCollections: ["tasks", "retired_notes"] });
    expect(await task.sync()).toMatchObject({ resynced: false });
    expect((await task.list("tasks")).length).toBe(20);
  }, 60_000);
});
