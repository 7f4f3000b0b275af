// Rebase on `conflict`: the default rule (server wins for the fields another
// device changed, the rest re-applied as a new op on the new base), custom
// onConflict callbacks, and the app always told what was discarded.
import { describe, expect, it } from "vitest";
import type { SyncEvent } from "../events.ts";
import { discardedFields, serverWinsPerField } from "../rebase.ts";
import { FakeServer } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

const R = "00000000-0000-4000-8000-0000000000c1";

async function synced() {
  const server = new FakeServer();
  server.write("tasks", R, { type: "upsert", data: { title: "Buy milk", notes: "2 l", done: false } });
  const harness = await openClient(server);
  await harness.client.sync();
  const events: SyncEvent[] = [];
  harness.client.on((event) => events.push(event));
  return { server, ...harness, events };
}

describe("default conflict rule", () => {
  it("keeps the server's value for the field another device changed and re-applies the other local fields on the new base", async () => {
    const { server, client, events } = await synced();
    await client.upsert("tasks", R, { title: "Buy bread", done: true });
    const foreign = server.write("tasks", R, { type: "upsert", data: { title: "Buy cheese" } });
    const report = await client.sync();
    expect(report.conflicts).toBe(1);
    const [first, second] = server.batches();
    expect(first.ops[0]).toMatchObject({ base_version: 1, data: { title: "Buy bread", done: true } });
    expect(second.ops).toEqual([{ op_id: expect.any(String), collection: "tasks", record_id: R, type: "upsert", base_version: foreign.version, data: { done: true } }]);
    expect(second.ops[0].op_id).not.toBe(first.ops[0].op_id);
    expect(server.records.get(`tasks/${R}`)?.data).toEqual({ title: "Buy cheese", notes: "2 l", done: true });
    expect((await client.get("tasks", R))).toMatchObject({ pending: false, data: { title: "Buy cheese", notes: "2 l", done: true } });
    expect(events.filter((e) => e.type === "write_discarded")).toEqual([
      expect.objectContaining({ reason: "conflict", record_id: R, fields: ["title"], server: expect.objectContaining({ version: foreign.version }) }),
    ]);
  });

  it("discards a local edit of a record another device deleted, and says so", async () => {
    const { server, client, events } = await synced();
    await client.upsert("tasks", R, { done: true });
    server.write("tasks", R, { type: "delete" });
    await client.sync();
    expect((await client.get("tasks", R))).toBeUndefined(); // the pull's removal dropped the row
    expect(client.status.pending).toBe(0);
    expect(events).toContainEqual(expect.objectContaining({ type: "write_discarded", reason: "conflict", fields: ["done"] }));
  });

  it("discards every edit written while earlier edits of a record deleted elsewhere were in flight, never re-creating it", async () => {
    const { server, client, events } = await synced();
    server.write("tasks", R, { type: "delete" });
    await client.upsert("tasks", R, { notes: "first" });
    // Each batch is on the wire when the app writes again: the second edit is queued behind the
    // first, the third behind the second, after the first's conflict stored the tombstone.
    let batches = 0;
    server.script = async (request) => {
      if (request.path === "/v1/sync/batch" && ++batches <= 2) await client.upsert("tasks", R, { notes: batches === 1 ? "second" : "third" });
      return undefined;
    };
    await client.sync();
    expect(server.batches().flatMap((b) => b.ops.map((op) => op.base_version))).toEqual([1, 1, 1]);
    expect(server.records.get(`tasks/${R}`)?.deleted).toBe(true);
    expect(await client.get("tasks", R)).toBeUndefined();
    expect(client.pendingOps()).toEqual([]);
    expect(events.filter((e) => e.type === "write_discarded").map((e) => e.op.data?.notes)).toEqual(["first", "second", "third"]);
  });

  it("keeps a record another device changed when this one deleted it, and says the delete did not happen", async () => {
    const { server, client, events } = await synced();
    await client.delete("tasks", R);
    server.write("tasks", R, { type: "upsert", data: { notes: "3 l" } });
    await client.sync();
    expect((await client.get("tasks", R))).toMatchObject({ deleted: false, data: { title: "Buy milk", notes: "3 l", done: false } });
    expect(events).toContainEqual(expect.objectContaining({ type: "write_discarded", fields: null, op: expect.objectContaining({ type: "delete" }) }));
  });

  it("takes the clashing fields from the server's conflicting_fields, and compares with the base only without them", () => {
    const op = { op_id: R, collection: "tasks", record_id: R, type: "upsert" as const, base_version: 1, data: { title: "local", done: true } };
    // Another device set the title back to the base value: by value nothing changed, but the server says it clashed.
    const server = { collection: "tasks", id: R, version: 3, deleted: false, data: { title: "base", done: false }, updated_at: "2026-11-22T00:00:00Z" };
    const baseData = { title: "base", done: false };
    expect(serverWinsPerField({ op, server, baseData, conflictingFields: ["title"] })).toEqual({ type: "upsert", data: { done: true } });
    expect(serverWinsPerField({ op, server, baseData })).toEqual({ type: "upsert", data: { title: "local", done: true } });
  });

  it("does not report a loss when the server already holds the local value", () => {
    const op = { op_id: R, collection: "tasks", record_id: R, type: "upsert" as const, base_version: 1, data: { title: "same" } };
    const server = { collection: "tasks", id: R, version: 2, deleted: false, data: { title: "same" }, updated_at: "2026-11-22T00:00:00Z" };
    expect(discardedFields(op, server, { type: "discard" })).toEqual([]);
    expect(serverWinsPerField({ op, server, baseData: { title: "old" } })).toEqual({ type: "discard" });
  });

  it("rebases on the original outcome when a retry answers duplicate of a conflict", async () => {
    const { server, client, events } = await synced();
    await client.upsert("tasks", R, { title: "mine", done: true });
    server.write("tasks", R, { type: "upsert", data: { title: "theirs" } });
    let lost = false;
    server.script = (request) => {
      if (request.path === "/v1/sync/batch" && !lost) {
        lost = true;
        server.answer(request); // processed (conflict), answer lost
        throw new TypeError("connection reset");
      }
      return undefined;
    };
    const report = await client.sync();
    expect(report).toMatchObject({ duplicates: 1, conflicts: 1 });
    expect(server.records.get(`tasks/${R}`)?.data).toEqual({ title: "theirs", notes: "2 l", done: true });
    expect(events).toContainEqual(expect.objectContaining({ type: "write_discarded", fields: ["title"] }));
  });

  it("never makes a device's own queued edits conflict with each other", async () => {
    const { server, client, events } = await synced();
    // A second local edit of the same field while the first is in flight.
    server.duringFirst("/v1/sync/batch", () => client.upsert("tasks", R, { title: "second" }));
    await client.upsert("tasks", R, { title: "first" });
    // Another device changes a different field meanwhile.
    server.write("tasks", R, { type: "upsert", data: { notes: "other" } });
    await client.sync();
    await client.sync();
    expect(events.filter((e) => e.type === "write_discarded")).toEqual([]);
    expect(server.records.get(`tasks/${R}`)?.data).toEqual({ title: "second", notes: "other", done: false });
  });
});

describe("custom onConflict", () => {
  it("can make the local values win", async () => {
    const server = new FakeServer();
    server.write("tasks", R, { type: "upsert", data: { title: "Buy milk" } });
    const { client } = await openClient(server, { onConflict: ({ op }) => (op.type === "upsert" ? { type: "upsert", data: op.data ?? {} } : { type: "delete" }) });
    await client.sync();
    const events: SyncEvent[] = [];
    client.on((event) => events.push(event));
    await client.upsert("tasks", R, { title: "mine" });
    server.write("tasks", R, { type: "upsert", data: { title: "theirs" } });
    await client.sync();
    expect(server.records.get(`tasks/${R}`)?.data).toEqual({ title: "mine" });
    expect(events.map((e) => e.type)).toEqual(["conflict"]);
  });

  it("can discard everything (reported as discarded)", async () => {
    const server = new FakeServer();
    server.write("tasks", R, { type: "upsert", data: { title: "Buy milk" } });
    const { client } = await openClient(server, { onConflict: () => ({ type: "discard" }) });
    await client.sync();
    const events: SyncEvent[] = [];
    client.on((event) => events.push(event));
    await client.upsert("tasks", R, { title: "mine", done: true });
    server.write("tasks", R, { type: "upsert", data: { title: "theirs" } });
    await client.sync();
    expect(server.records.get(`tasks/${R}`)?.data).toEqual({ title: "theirs" });
    expect(events).toContainEqual(expect.objectContaining({ type: "write_discarded", fields: ["title", "done"] }));
  });
});
