// Shared lists seen from one device: a pull that removes records (deleted, or
// the user lost access) drops their rows and the ops still queued for them;
// a push the server refuses with FORBIDDEN or NOT_FOUND reaches the app as an
// event and puts the local row back to the server's state (or drops it). A
// create refused, of a record the server holds nothing of, is carried on by the
// record's later write when there is one (a task created in a list the user
// lost, then moved to their own list): nothing the user wrote is lost.
import { describe, expect, it } from "vitest";
import type { SyncBatchRequest, SyncOpResult } from "../../functions/_shared/schemas/sync.ts";
import type { SyncEvent } from "../events.ts";
import { MemoryStorage, type PendingOp } from "../storage.ts";
import { FakeRequest, FakeServer, json, LIST_ID, toWire } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

const TASK = "00000000-0000-4000-8000-0000000000d1";
const OTHER = "00000000-0000-4000-8000-0000000000d2";
const MINE = "00000000-0000-4000-8000-0000000000d3";

/** A device that holds LIST_ID, two of its tasks and a task of another list, fully synced. */
async function synced() {
  const server = new FakeServer();
  server.write("lists", LIST_ID, { type: "upsert", data: { title: "Groceries" } });
  server.write("tasks", TASK, { type: "upsert", data: { list_id: LIST_ID, title: "Milk" } });
  server.write("tasks", OTHER, { type: "upsert", data: { list_id: LIST_ID, title: "Bread" } });
  server.write("tasks", MINE, { type: "upsert", data: { list_id: "00000000-0000-4000-8000-0000000001d9", title: "Mine" } });
  const harness = await openClient(server);
  await harness.client.sync();
  const events: SyncEvent[] = [];
  harness.client.on((event) => events.push(event));
  return { server, ...harness, events };
}

/** Answers every op of the batch with `result(op)` (what the real server decided; the fake has no permissions). */
function answerBatch(server: FakeServer, result: (op: SyncBatchRequest["ops"][number]) => Omit<SyncOpResult, "op_id">) {
  server.script = (request) => {
    if (request.path !== "/v1/sync/batch") return undefined;
    const { ops } = request.body as SyncBatchRequest;
    return json(200, { results: ops.map((op) => ({ op_id: op.op_id, ...result(op) })), server_time: new Date().toISOString() });
  };
}

describe("removals in a pull", () => {
  it("access revoked: drops the list's rows and every op queued for them, even at the version the device holds", async () => {
    const { server, client, events } = await synced();
    // Removal entries carry the version the row had: nothing about it changed but the access.
    const removed = [`lists/${LIST_ID}`, `tasks/${TASK}`, `tasks/${OTHER}`]
      .map((key) => ({ ...toWire(server.records.get(key)!), deleted: true, data: null, reason: "access_revoked" }));
    server.script = async (request) => {
      if (request.path !== "/v1/sync/changes") return undefined;
      // The app writes while the pull is on the wire.
      await client.upsert("tasks", TASK, { done: true });
      await client.delete("tasks", OTHER);
      await client.upsert("tasks", MINE, { done: true });
      return json(200, { changes: removed, cursor: "99", has_more: false, server_time: new Date().toISOString() });
    };
    await client.sync();

    expect((await client.list("lists"))).toEqual([]);
    expect((await client.list("tasks")).map((r) => r.id)).toEqual([MINE]);
    expect((await client.get("tasks", TASK))).toBeUndefined();
    expect((await client.serverRecords()).map((r) => r.id)).toEqual([MINE]);
    expect(client.pendingOps().map((p) => p.op.record_id)).toEqual([MINE]);
    // What the app loses is reported: the edit, and the delete that did not happen.
    expect(events).toEqual([
      expect.objectContaining({ type: "write_discarded", reason: "access_revoked", record_id: TASK, fields: ["done"] }),
      expect.objectContaining({ type: "write_discarded", reason: "access_revoked", record_id: OTHER, fields: null }),
    ]);
  });

  it("a record deleted on the server: the row and its queued edit go, and the next sync sends nothing for it", async () => {
    const { server, client, events } = await synced();
    server.write("tasks", TASK, { type: "delete" });
    // The app edits the record while the pull that deletes it is on the wire.
    server.duringFirst("/v1/sync/changes", () => client.upsert("tasks", TASK, { title: "Oat milk" }));
    await client.sync();
    expect((await client.get("tasks", TASK))).toBeUndefined();
    expect(client.status.pending).toBe(0);
    expect(events).toEqual([expect.objectContaining({ type: "write_discarded", reason: "deleted", record_id: TASK, fields: ["title"] })]);
    const batches = server.batches().length;
    await client.sync();
    expect(server.batches()).toHaveLength(batches);
  });
});

describe("a queued delete of a record a pull removes", () => {
  it("is dropped and reported: the removal may be a move out of view, and a moved record can come back", async () => {
    const { server, client, events } = await synced();
    server.write("tasks", TASK, { type: "delete" });
    server.duringFirst("/v1/sync/changes", () => client.delete("tasks", TASK));
    await client.sync();
    expect(await client.get("tasks", TASK)).toBeUndefined();
    expect(client.status.pending).toBe(0);
    expect(events).toEqual([expect.objectContaining({ type: "write_discarded", reason: "deleted", record_id: TASK, fields: null, op: expect.objectContaining({ type: "delete" }) })]);
  });
});

describe("FORBIDDEN and NOT_FOUND answers to a push", () => {
  it("FORBIDDEN (a viewer's edit): an op_rejected event, the op leaves the outbox, the row shows the server's record", async () => {
    const { server, client, events } = await synced();
    await client.upsert("tasks", TASK, { title: "Viewer edit" });
    expect((await client.get("tasks", TASK))?.data?.title).toBe("Viewer edit");
    // Meanwhile the owner renamed it: the rejection carries the current record.
    const current = server.write("tasks", TASK, { type: "upsert", data: { title: "Milk (2 l)" } });
    answerBatch(server, () => ({ status: "rejected", error: { code: "FORBIDDEN", message: "you may not change this record" }, record: current }));
    // Read when the event fires (the read resolves before the sync's pull answers).
    let seenAtEvent: Promise<unknown> | undefined;
    client.on((event) => {
      if (event.type === "op_rejected") seenAtEvent ??= client.get("tasks", TASK);
    });
    const report = await client.sync();

    expect(report).toMatchObject({ rejected: 1, applied: 0 });
    expect(events[0]).toMatchObject({
      type: "op_rejected",
      error: { code: "FORBIDDEN" },
      op: { record_id: TASK, data: { title: "Viewer edit" } },
      record: { id: TASK, data: { title: "Milk (2 l)" } },
      dropped: false,
    });
    expect(events).toContainEqual(expect.objectContaining({ type: "write_discarded", reason: "rejected", record_id: TASK, error: expect.objectContaining({ code: "FORBIDDEN" }) }));
    // Restored from the push result itself, before any pull.
    expect(await seenAtEvent).toMatchObject({ pending: false, version: current.version, data: { title: "Milk (2 l)" } });
    expect((await client.get("tasks", TASK))).toMatchObject({ pending: false, data: { title: "Milk (2 l)" } });
    expect(client.status.pending).toBe(0);
  });

  it("NOT_FOUND without a record (no longer visible): the row and the record's other queued ops are dropped", async () => {
    const { server, client, events } = await synced();
    await client.upsert("tasks", TASK, { done: true });
    let first = true;
    server.script = async (request) => {
      if (request.path !== "/v1/sync/batch") return undefined;
      const { ops } = request.body as SyncBatchRequest;
      if (first) {
        first = false;
        // A second edit of the record while the first is on the wire: it stays queued.
        await client.upsert("tasks", TASK, { title: "Later edit" });
      }
      return json(200, {
        results: ops.map((op) => ({ op_id: op.op_id, status: "rejected", error: { code: "NOT_FOUND", message: "no such record in tasks" } })),
        server_time: new Date().toISOString(),
      });
    };
    await client.sync();

    expect(events[0]).toMatchObject({ type: "op_rejected", error: { code: "NOT_FOUND" }, op: { data: { done: true } }, dropped: true });
    expect(events[0]).not.toHaveProperty("record");
    expect((await client.get("tasks", TASK))).toBeUndefined();
    expect(client.pendingOps()).toEqual([]);
    expect(server.batches()).toHaveLength(1); // the later edit was never sent
    expect(events).toContainEqual(expect.objectContaining({ type: "write_discarded", reason: "rejected", record_id: TASK, fields: ["title"], error: expect.objectContaining({ code: "NOT_FOUND" }) }));
  });

  it("NOT_FOUND for a list the user cannot see, with the task's record: the task is restored, not dropped", async () => {
    const { server, client, events } = await synced();
    await client.upsert("tasks", TASK, { list_id: "00000000-0000-4000-8000-0000000001d8" });
    answerBatch(server, (op) => ({
      status: "rejected",
      error: { code: "NOT_FOUND", message: "no such lists record", details: [{ field: "/ops/0/data/list_id", code: "not_found", message: "is not a lists record you can see" }] },
      record: toWire(server.records.get(`tasks/${op.record_id}`)!),
    }));
    await client.sync();
    expect(events[0]).toMatchObject({ type: "op_rejected", dropped: false, record: { id: TASK } });
    expect((await client.get("tasks", TASK))).toMatchObject({ pending: false, data: { list_id: LIST_ID, title: "Milk" } });
  });
});

describe("result shapes", () => {
  it("several ops of one record answered with the same final record leave that record", async () => {
    const storage = new MemoryStorage();
    const op = (n: number, data: Record<string, unknown>): PendingOp => ({
      op: { op_id: `00000000-0000-4000-8000-00000000e00${n}`, collection: "tasks", record_id: TASK, type: "upsert", base_version: 1, data },
      sent: true,
      base_data: { list_id: LIST_ID, title: "Milk" },
    });
    // Two ops of one record, both sent before a restart, go out together.
    await storage.apply({ putOps: [op(1, { done: true }), op(2, { title: "Oat milk" })] });
    const server = new FakeServer();
    server.write("tasks", TASK, { type: "upsert", data: { list_id: LIST_ID, title: "Milk" } });
    const { client } = await openClient(server, { storage });
    // The server's state after both ops (the pull that follows the push lists it too).
    const final = server.write("tasks", TASK, { type: "upsert", data: { title: "Oat milk", done: true } });
    answerBatch(server, () => ({ status: "applied", record: final }));
    const report = await client.sync();
    expect(report).toMatchObject({ applied: 2 });
    expect(server.batches()[0].ops).toHaveLength(2);
    expect((await client.get("tasks", TASK))).toMatchObject({ version: final.version, pending: false, data: { title: "Oat milk", done: true } });
  });

  it("a duplicate of a conflict whose record the user can no longer see drops the write instead of failing every sync", async () => {
    const { server, client, events } = await synced();
    await client.upsert("tasks", TASK, { title: "mine" });
    answerBatch(server, () => ({ status: "duplicate", original_status: "conflict" }));
    const report = await client.sync();
    expect(report).toMatchObject({ duplicates: 1, conflicts: 1 });
    expect((await client.get("tasks", TASK))).toBeUndefined();
    expect(client.status.pending).toBe(0);
    expect(events).toContainEqual(expect.objectContaining({ type: "write_discarded", reason: "conflict", record_id: TASK, fields: ["title"] }));
  });
});

const GONE_LIST = "00000000-0000-4000-8000-0000000001d7";

/** NOT_FOUND, with no record (the user lost the list), for every op putting a record in GONE_LIST; the fake answers the others. */
function refuseWritesInGoneList(request: FakeRequest, server: FakeServer, code = "NOT_FOUND"): Response | undefined {
  if (request.path !== "/v1/sync/batch") return undefined;
  const batch = request.body as SyncBatchRequest;
  const results = batch.ops.map((op) => op.data?.list_id === GONE_LIST
    ? { op_id: op.op_id, status: "rejected", error: { code, message: "no such lists record you may write" } }
    : server.applyBatch({ ...batch, ops: [op] }).results[0]);
  return json(200, { results, server_time: new Date().toISOString() });
}

/** A device with a task created offline in GONE_LIST, another task, then `later` written to the task (two ops of it). */
async function createdThenWritten(later: Record<string, unknown>, storage = new MemoryStorage()) {
  const server = new FakeServer();
  const { client } = await openClient(server, { storage, backoff: { baseMs: 1, maxMs: 1, maxAttempts: 1 } });
  const events: SyncEvent[] = [];
  client.on((event) => events.push(event));
  const task = await client.create("tasks", { list_id: GONE_LIST, title: "Call the plumber", notes: "0123 456" });
  await client.create("tasks", { list_id: LIST_ID, title: "Something else" });
  await client.upsert("tasks", task, later);
  const [created, written] = client.pendingOps().filter((p) => p.op.record_id === task).map((p) => p.op);
  return { server, client, storage, events, task, created, written };
}

describe("a create refused, of a record the server holds nothing of, written again since", () => {
  it("is carried on by the later write: the task moved to another list is created there with its title and notes, shown so meanwhile", async () => {
    const { server, client, events, task, created, written } = await createdThenWritten({ list_id: LIST_ID });
    server.script = (request) => refuseWritesInGoneList(request, server);
    let seenAtEvent: Promise<unknown> | undefined;
    client.on((event) => {
      if (event.type === "op_rejected") seenAtEvent ??= client.get("tasks", task);
    });
    const report = await client.sync();

    expect(report).toMatchObject({ rejected: 1, applied: 2, queued: 0 });
    // The later write goes after the create's answer, in a batch of its own, with the create's data under its own.
    const batches = server.batches();
    expect(batches.map((batch) => batch.ops.length)).toEqual([2, 1]);
    expect(batches[1].ops).toEqual([{ ...written, data: { list_id: LIST_ID, title: "Call the plumber", notes: "0123 456" } }]);
    expect(server.records.get(`tasks/${task}`)?.data).toEqual({ list_id: LIST_ID, title: "Call the plumber", notes: "0123 456" });
    expect(await seenAtEvent).toMatchObject({ pending: true, data: { list_id: LIST_ID, title: "Call the plumber", notes: "0123 456" } });
    expect(await client.get("tasks", task)).toMatchObject({ pending: false, data: { list_id: LIST_ID, title: "Call the plumber", notes: "0123 456" } });
    // The refusal is told, the record kept; no write is discarded.
    expect(events).toEqual([{ type: "op_rejected", op: created, error: expect.objectContaining({ code: "NOT_FOUND" }), dropped: false, foldedInto: written.op_id }]);
  });

  it("a later write that keeps the task in the lost list: the carried create is refused too, and the record leaves the device, told", async () => {
    const { server, client, events, task, created, written } = await createdThenWritten({ title: "Call the plumber today" });
    server.script = (request) => refuseWritesInGoneList(request, server);
    const report = await client.sync();

    expect(report).toMatchObject({ rejected: 2, applied: 1, queued: 0 });
    const carried = { ...written, data: { list_id: GONE_LIST, title: "Call the plumber today", notes: "0123 456" } };
    expect(server.batches()[1].ops).toEqual([carried]);
    expect(await client.get("tasks", task)).toBeUndefined();
    expect(client.pendingOps()).toEqual([]);
    expect(events).toEqual([
      expect.objectContaining({ type: "op_rejected", op: created, dropped: false, foldedInto: written.op_id }),
      expect.objectContaining({ type: "op_rejected", op: carried, dropped: true }),
      expect.objectContaining({ type: "write_discarded", reason: "rejected", record_id: task, op: carried, fields: null }),
    ]);
  });

  it("the carrying op is stored before it is first sent: after a lost answer and a restart it is resent with its op_id and data, applied once", async () => {
    const { server, client, storage, task, written } = await createdThenWritten({ list_id: LIST_ID });
    server.script = (request) => {
      if (request.path === "/v1/sync/batch" && server.batches().length === 2) {
        server.answer(request); // the carrying op reaches the server; its answer is lost
        throw new TypeError("connection reset");
      }
      return refuseWritesInGoneList(request, server);
    };
    await expect(client.sync()).rejects.toThrow();
    const carried = { ...written, data: { list_id: LIST_ID, title: "Call the plumber", notes: "0123 456" } };
    expect(client.pendingOps()).toEqual([expect.objectContaining({ sent: true, op: carried })]);
    await client.close();

    server.script = null;
    const { client: restarted } = await openClient(server, { storage, idPrefix: 2 });
    expect(await restarted.sync()).toMatchObject({ duplicates: 1, queued: 0 });
    expect(server.batches()[2].ops).toEqual([carried]);
    expect(server.records.get(`tasks/${task}`)).toMatchObject({ version: 2, data: { list_id: LIST_ID, title: "Call the plumber", notes: "0123 456" } });
  });

  it("a later write already sent (in one batch with the create, by an earlier client) is resent as it left, never changed", async () => {
    const storage = new MemoryStorage();
    const task = "00000000-0000-4000-8000-0000000000e1";
    const op = (n: number, data: Record<string, unknown>): PendingOp => ({
      op: { op_id: `00000000-0000-4000-8000-00000000e10${n}`, collection: "tasks", record_id: task, type: "upsert", base_version: null, data },
      sent: true,
      base_data: null,
    });
    const [created, moved] = [op(1, { list_id: GONE_LIST, title: "Call the plumber" }), op(2, { list_id: LIST_ID })];
    await storage.apply({ putOps: [created, moved] });
    const server = new FakeServer();
    server.script = (request) => refuseWritesInGoneList(request, server, "FORBIDDEN");
    const { client } = await openClient(server, { storage });
    await client.sync();
    // Each in a batch of its own now: the move after the create's answer, as it was stored.
    expect(server.batches().map((batch) => batch.ops)).toEqual([[created.op], [moved.op]]);
  });
});
