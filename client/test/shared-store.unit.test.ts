// Two clients on one SQLite file: an app and its background task
// (client/README.md, "Background sync"). The store, not either client's
// memory, says what is queued: an op the other client sent and the server
// answered is gone, so a later write is a new op, not merged into it.
import { afterEach, describe, expect, it } from "vitest";
import type { SyncEvent } from "../events.ts";
import { StaleStoreError } from "../storage.ts";
import { FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";
import { closeSqliteFiles, sqliteFile } from "./sqlite-file.ts";

afterEach(closeSqliteFiles);

describe("two clients on one SQLite file", () => {
  it("an edit made in the app after the background task pushed the create reaches the server", async () => {
    const server = new FakeServer();
    const open = await sqliteFile();
    const app = (await openClient(server, { storage: open() })).client;
    await app.sync();
    const id = await app.create("tasks", { list_id: LIST_ID, title: "draft" });
    const task = (await openClient(server, { storage: open(), idPrefix: 2 })).client;
    await task.sync();

    await app.upsert("tasks", id, { title: "final title" });
    const [pending] = app.pendingOps();
    expect(pending.op).toMatchObject({ type: "upsert", base_version: 1, data: { title: "final title" } });
    const report = await app.sync();
    expect(report).toMatchObject({ applied: 1, duplicates: 0 });
    expect(server.records.get(`tasks/${id}`)?.data?.title).toBe("final title");
    expect((await app.get("tasks", id))?.data?.title).toBe("final title");
  });

  it("a delete made in the app after the background task pushed the create reaches the server", async () => {
    const server = new FakeServer();
    const open = await sqliteFile();
    const app = (await openClient(server, { storage: open() })).client;
    await app.sync();
    const id = await app.create("tasks", { list_id: LIST_ID, title: "typo" });
    const task = (await openClient(server, { storage: open(), idPrefix: 2 })).client;
    await task.sync();
    // The app's reads follow the store before it writes again: the create is no longer pending.
    expect((await app.get("tasks", id))?.pending).toBe(false);

    await app.delete("tasks", id);
    expect(app.pendingOps().map((p) => p.op.type)).toEqual(["delete"]);
    await app.sync();
    expect(server.records.get(`tasks/${id}`)?.deleted).toBe(true);
    expect(await app.list("tasks")).toEqual([]);
  });

  it("a change made on a state another writer has moved since is refused whole, and the client redoes it on the stored state", async () => {
    const server = new FakeServer();
    const open = await sqliteFile();
    const storage = open();
    const app = (await openClient(server, { storage })).client;
    await app.sync();
    const id = await app.create("tasks", { list_id: LIST_ID, title: "draft" });
    const revision = await storage.revision();
    const other = open();
    await other.apply({ cursor: "moved" });
    await expect(storage.apply({ cursor: "stale", ifRevision: revision })).rejects.toBeInstanceOf(StaleStoreError);
    expect((await storage.loadState()).cursor).toBe("moved");

    // The other writer (the task) sends and clears the create between the app's reload and its write:
    // the app's write is refused, read again, and queued as an edit of what the server now holds.
    const task = (await openClient(server, { storage: other, idPrefix: 2 })).client;
    const apply = storage.apply.bind(storage);
    let raced = false;
    storage.apply = async (change) => {
      if (!raced && change.putOps?.some((p) => p.op.type === "upsert")) {
        raced = true;
        await task.sync();
      }
      return await apply(change);
    };
    await app.upsert("tasks", id, { title: "final title" });
    expect(raced).toBe(true);
    expect(app.pendingOps().map((p) => p.op)).toMatchObject([{ type: "upsert", base_version: 1, data: { title: "final title" } }]);
    await app.sync();
    expect(server.records.get(`tasks/${id}`)?.data?.title).toBe("final title");
  });

  it("a task moved to a list the other client queued after the task goes behind that list's create", async () => {
    const server = new FakeServer();
    const open = await sqliteFile();
    const app = (await openClient(server, { storage: open() })).client;
    const background = (await openClient(server, { storage: open(), idPrefix: 2 })).client;
    const task = await app.create("tasks", { list_id: LIST_ID, title: "Pack" });
    const trip = await background.create("lists", { title: "Trip" });
    await app.upsert("tasks", task, { list_id: trip });
    expect(app.pendingOps().map((p) => p.op.record_id)).toEqual([task, trip, task]);
    await background.sync();
    expect(server.batches().flatMap((b) => b.ops).map((op) => op.record_id)).toEqual([task, trip, task]);
  });

  it("a conflict answered to both clients (each resent the same sent op) is rebased once, and told once", async () => {
    const server = new FakeServer();
    const id = "00000000-0000-4000-8000-0000000000e1";
    server.write("tasks", id, { type: "upsert", data: { list_id: LIST_ID, title: "draft", done: false } });
    const open = await sqliteFile();
    const app = (await openClient(server, { storage: open() })).client;
    const background = (await openClient(server, { storage: open(), idPrefix: 2 })).client;
    await app.sync();
    server.write("tasks", id, { type: "upsert", data: { title: "theirs" } });
    await app.upsert("tasks", id, { title: "mine", done: true });
    const events: SyncEvent[] = [];
    app.on((event) => events.push(event));
    background.on((event) => events.push(event));
    // While the app's batch is on the wire (its op stored as sent), the task resends the same op.
    server.duringFirst("/v1/sync/batch", () => background.sync());
    await app.sync();

    expect(events.filter((e) => e.type === "conflict")).toHaveLength(1);
    const ops = server.batches().flatMap((b) => b.ops);
    expect(ops.map((op) => op.op_id).filter((opId, i, all) => all.indexOf(opId) !== i)).toHaveLength(1); // the resent op, no other twice
    expect(ops).toHaveLength(3); // the op, sent by both; one rebased op
    expect(server.records.get(`tasks/${id}`)?.data).toMatchObject({ title: "theirs", done: true });
    expect(app.pendingOps()).toEqual([]);
  });

  it("events the background task's sync could not tell (no listener) are kept in the store and told to the app's listeners once", async () => {
    const server = new FakeServer();
    const id = "00000000-0000-4000-8000-0000000000e2";
    server.write("tasks", id, { type: "upsert", data: { list_id: LIST_ID, title: "draft" } });
    const open = await sqliteFile();
    const app = (await openClient(server, { storage: open() })).client;
    await app.sync();
    server.write("tasks", id, { type: "upsert", data: { title: "theirs" } });
    await app.upsert("tasks", id, { title: "mine" });
    const background = (await openClient(server, { storage: open(), idPrefix: 2 })).client;
    await background.sync();

    const told: SyncEvent[] = [];
    app.on((event) => told.push(event)); // tells what the store kept, after a read of it
    await app.sync();
    expect(told.map((e) => e.type)).toEqual(["conflict", "write_discarded"]);
    expect(told[1]).toMatchObject({ reason: "conflict", record_id: id, fields: ["title"] });
    await app.sync();
    const later = (await openClient(server, { storage: open(), idPrefix: 3 })).client;
    const toldLater: SyncEvent[] = [];
    later.on((event) => toldLater.push(event));
    await later.sync();
    expect(told).toHaveLength(2);
    expect(toldLater).toEqual([]);
    expect((await open().loadState()).notices).toBeUndefined();
  });
});

