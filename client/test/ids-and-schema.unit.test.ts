// Ids are lower-cased where the app hands them in (the server compares and
// returns them lower-case), and writes are checked against the collections
// and field types GET /v1/meta publishes — not against a list built into the
// client — stored so a restart offline still checks them.
import { describe, expect, it } from "vitest";
import { MemoryStorage } from "../storage.ts";
import { envelope, FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

const SWIFT_ID = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F";

describe("ids", () => {
  it("a Swift-style upper-case id finds its record after a sync, and is sent lower-case", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server);
    await client.upsert("tasks", SWIFT_ID, { list_id: LIST_ID.toUpperCase(), title: "Milk" });
    expect((await client.get("tasks", SWIFT_ID))?.data?.title).toBe("Milk");
    await client.sync();
    expect(server.batches()[0].ops[0].record_id).toBe(SWIFT_ID.toLowerCase());
    expect((await client.get("tasks", SWIFT_ID))).toMatchObject({ id: SWIFT_ID.toLowerCase(), pending: false, version: 1, data: { title: "Milk" } });
    expect((await client.get("tasks", SWIFT_ID.toLowerCase()))?.version).toBe(1);
    // Later writes and deletes by the upper-case id reach the same record.
    await client.upsert("tasks", SWIFT_ID, { done: true, list_id: LIST_ID.toUpperCase() });
    expect(client.pendingOps()[0].op).toMatchObject({ record_id: SWIFT_ID.toLowerCase(), base_version: 1, data: { done: true, list_id: LIST_ID } });
    await client.sync();
    await client.delete("tasks", SWIFT_ID);
    await client.sync();
    expect((await client.list("tasks"))).toEqual([]);
    expect(server.records.get(`tasks/${SWIFT_ID.toLowerCase()}`)?.deleted).toBe(true);
  });

  it("ids and op_ids from an upper-case generator are lower-cased (the results match the ops sent)", async () => {
    const server = new FakeServer();
    let n = 0;
    const { client } = await openClient(server, { generateId: () => `ABCDEF00-0000-4000-8000-${String(++n).padStart(12, "0")}` });
    const id = await client.create("tasks", { list_id: LIST_ID, title: "x" });
    expect(id).toBe("abcdef00-0000-4000-8000-000000000001");
    const report = await client.sync();
    expect(report.applied).toBe(1);
    expect(server.batches()[0].ops[0].op_id).toBe("abcdef00-0000-4000-8000-000000000002");
    expect((await client.get("tasks", id.toUpperCase()))?.pending).toBe(false);
  });
});

describe("uuid fields of the data", () => {
  const tasksWithList = async (client: Awaited<ReturnType<typeof openClient>>["client"]) =>
    (await client.list("tasks")).filter((task) => task.data?.list_id === LIST_ID).map((task) => task.data?.title);

  it("written before the device knew the catalog: kept as written until it arrives, then lower-cased in the queue before they are sent", async () => {
    const server = new FakeServer();
    const storage = new MemoryStorage();
    // Pushes fail (here: an installation not registered yet); GET /v1/meta needs no session and answers.
    server.script = (request) => (request.path === "/v1/sync/batch" ? envelope(400, "VALIDATION_FAILED", {}, { details: [{ field: "/device_id", code: "unknown_device", message: "m" }] }) : undefined);
    const { client } = await openClient(server, { storage });
    const id = await client.create("tasks", { list_id: LIST_ID.toUpperCase(), title: SWIFT_ID });
    // No catalog yet: nothing says list_id is a uuid and title is not.
    expect((await client.get("tasks", id))?.data).toEqual({ list_id: LIST_ID.toUpperCase(), title: SWIFT_ID });

    await expect(client.sync()).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
    // A text field that merely looks like a uuid keeps its case.
    expect(client.pendingOps().map((p) => p.op.data)).toEqual([{ list_id: LIST_ID, title: SWIFT_ID }]);
    expect(await tasksWithList(client)).toEqual([SWIFT_ID]);
    expect(server.batches()[0].ops[0].data).toEqual({ list_id: LIST_ID, title: SWIFT_ID });
    // Stored so, with the catalog: a restart finds the same.
    const reopened = (await openClient(server, { storage })).client;
    expect(reopened.pendingOps().map((p) => p.op.data)).toEqual([{ list_id: LIST_ID, title: SWIFT_ID }]);
  });

  it("an op already sent is left as it left (resent unchanged; the server lower-cases it)", async () => {
    const storage = new MemoryStorage();
    const op = { op_id: "00000000-0000-4000-8000-0000000000a1", collection: "tasks", record_id: SWIFT_ID.toLowerCase(), type: "upsert" as const, base_version: null, data: { list_id: LIST_ID.toUpperCase(), title: "x" } };
    await storage.apply({ putOps: [{ op, sent: true, base_data: null }] });
    const { client } = await openClient(new FakeServer(), { storage });
    await client.refreshSchema();
    expect(client.pendingOps()).toEqual([{ op, sent: true, base_data: null }]);
  });

  it("written with validate: false once the catalog is known: lower-cased, nothing else checked or changed", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server, { validate: false });
    await client.refreshSchema();
    const id = await client.create("tasks", { list_id: LIST_ID.toUpperCase(), title: SWIFT_ID, color: "RED" });
    expect((await client.get("tasks", id))?.data).toEqual({ list_id: LIST_ID, title: SWIFT_ID, color: "RED" });
    await client.upsert("tasks", id, { list_id: "not a uuid" });
    expect(client.pendingOps()[0].op.data).toMatchObject({ list_id: "not a uuid" });
  });
});

describe("collections and field types from GET /v1/meta", () => {
  /** A deployment with one synced table the client was never built with. */
  function notesServer(): FakeServer {
    const server = new FakeServer();
    server.schema = {
      collections: ["notes"],
      collection_schemas: {
        notes: {
          scope: "id",
          fields: {
            body: { type: "text", nullable: false, has_default: false, insertable: true, updatable: true, min_length: 1, max_length: 5 },
            pinned: { type: "boolean", nullable: false, has_default: true, insertable: true, updatable: true },
            owner_id: { type: "uuid", nullable: true, has_default: false, insertable: true, updatable: true },
            created_at: { type: "timestamp with time zone", nullable: false, has_default: true, insertable: false, updatable: false },
          },
        },
      },
    };
    return server;
  }

  it("queues unchecked until the first sync, then checks creates and changes against the server's fields", async () => {
    const server = notesServer();
    const { client } = await openClient(server);
    expect(client.schema).toBeNull();
    await client.create("tasks", { title: "unchecked" }); // the server will judge it
    await client.sync();
    expect(client.schema).toEqual({ ...server.schema, limits: { max_ops_per_batch: server.limits.max_ops_per_batch, max_body_bytes: server.limits.max_body_bytes, max_pull_limit: server.limits.max_pull_limit } });
    // Fetched before the push, and again once because the pull brought the "tasks" record this fake
    // server took though its GET /v1/meta does not name tasks (a real server names what it syncs).
    expect(server.requests.filter((r) => r.path === "/v1/meta")).toHaveLength(2);
    await client.sync();
    expect(server.requests.filter((r) => r.path === "/v1/meta")).toHaveLength(2);

    await expect(client.create("tasks", { list_id: LIST_ID, title: "x" })).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
      message: 'unknown collection "tasks" (this server syncs: notes)',
      details: [{ field: "/collection", code: "unknown_collection" }],
    });
    await expect(client.create("notes", { body: "too long", pinned: "yes" })).rejects.toMatchObject({
      details: [{ field: "/data/body", code: "too_long" }, { field: "/data/pinned", code: "invalid_type" }],
    });
    await expect(client.create("notes", { pinned: true })).rejects.toMatchObject({ details: [{ field: "/data/body", code: "required" }] });
    await expect(client.create("notes", { body: "hi", created_at: "2026-11-22T00:00:00Z" })).rejects.toMatchObject({
      details: [{ field: "/data/created_at", code: "read_only" }],
    });
    await expect(client.create("notes", { body: "hi", color: "red" })).rejects.toMatchObject({ details: [{ field: "/data/color" }] });
    await expect(client.delete("nope", LIST_ID)).rejects.toMatchObject({ details: [{ code: "unknown_collection" }] });

    const id = await client.create("notes", { body: "hi", owner_id: SWIFT_ID });
    expect((await client.get("notes", id))?.data).toEqual({ body: "hi", owner_id: SWIFT_ID.toLowerCase() });
    // A live record takes a change without its required fields (the update schema).
    await client.upsert("notes", id, { pinned: true });
    expect(client.pendingOps().at(-1)?.op.data).toEqual({ body: "hi", owner_id: SWIFT_ID.toLowerCase(), pinned: true });
  });

  it("stores what it learned: a restart offline checks the fields it knows, and queues what the server added since for it to judge", async () => {
    const server = notesServer();
    const storage = new MemoryStorage();
    await (await openClient(server, { storage })).client.sync();
    // Since then the server made a table syncable and added a field; the device restarts offline.
    server.schema = {
      collections: ["notes", "tags"],
      collection_schemas: {
        notes: { ...server.schema.collection_schemas.notes, fields: { ...server.schema.collection_schemas.notes.fields, color: { type: "text", nullable: true, has_default: false, insertable: true, updatable: true } } },
        tags: { scope: "id", fields: { name: { type: "text", nullable: false, has_default: false, insertable: true, updatable: true } } },
      },
    };
    let online = false;
    server.script = () => {
      if (!online) throw new TypeError("offline");
      return undefined;
    };
    server.requests.length = 0;
    const { client } = await openClient(server, { storage });
    expect(client.schema?.collections).toEqual(["notes"]);
    // What the stored schema knows is checked (and normalised) without asking the server.
    await expect(client.create("notes", { body: "too long" })).rejects.toMatchObject({ details: [{ field: "/data/body", code: "too_long" }] });
    await expect(client.create("notes", { color: "red" })).rejects.toMatchObject({ details: [{ field: "/data/body", code: "required" }] });
    await expect(client.create("notes", { body: "hi", created_at: "2026-11-22T00:00:00Z" })).rejects.toMatchObject({ details: [{ field: "/data/created_at", code: "read_only" }] });
    // What it does not know may be newer than it: queued as it is.
    const note = await client.create("notes", { body: "hi", owner_id: SWIFT_ID, color: "red" });
    const tag = await client.create("tags", { name: "home" });
    expect((await client.get("notes", note))?.data).toEqual({ body: "hi", owner_id: SWIFT_ID.toLowerCase(), color: "red" });
    expect((await client.get("tags", tag))?.data).toEqual({ name: "home" });
    expect(server.requests).toEqual([]);

    // Online, the first sync fetches the schema before it pushes; from then on every name is checked.
    online = true;
    await client.sync();
    expect(server.requests[0].path).toBe("/v1/meta");
    expect(server.requests.filter((r) => r.path === "/v1/meta")).toHaveLength(1);
    expect(server.batches()[0].ops.map((op) => op.data)).toEqual([{ body: "hi", owner_id: SWIFT_ID.toLowerCase(), color: "red" }, { name: "home" }]);
    await client.create("notes", { body: "hi", color: "blue" });
    await expect(client.create("notes", { body: "hi", size: 3 })).rejects.toMatchObject({ details: [{ field: "/data/size" }] });
    await expect(client.create("labels", { name: "x" })).rejects.toMatchObject({ details: [{ code: "unknown_collection" }] });
  });

  it("a create in a collection no client creates records in (list_members: members join through invites) is refused as that, not field by field", async () => {
    const { client } = await openClient(new FakeServer());
    await client.refreshSchema();
    await expect(client.create("list_members", { list_id: LIST_ID, user_id: SWIFT_ID, role: "editor" })).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
      message: 'no client may create records in "list_members"',
      details: [{ field: "/collection", code: "not_creatable" }],
    });
    expect(client.status.pending).toBe(0);
  });

  it("validate: false queues anything the server may then judge", async () => {
    const server = notesServer();
    const { client } = await openClient(server, { validate: false });
    await client.refreshSchema();
    await client.create("tasks", { title: "" });
    expect(client.status.pending).toBe(1);
  });

  it("NaN and ±Infinity are refused (not_finite, where they are), never queued as the null JSON writes for them: with or without the catalog, validate: false too", async () => {
    const R = "00000000-0000-4000-8000-0000000000c1";
    for (const options of [{}, { validate: false }]) {
      const server = new FakeServer();
      const { client } = await openClient(server, options);
      for (const refresh of [false, true]) {
        if (refresh) await client.refreshSchema();
        for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
          await expect(client.upsert("tasks", R, { list_id: LIST_ID, title: "x", position: value })).rejects.toMatchObject({
            details: [{ field: "/data/position", code: "not_finite" }],
          });
        }
        expect(client.status.pending).toBe(0);
      }
    }
  });
});
