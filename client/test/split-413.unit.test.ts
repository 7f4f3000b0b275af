// 413 PAYLOAD_TOO_LARGE on a batch: the client splits it into smaller ones,
// keeps every op_id, and drops (and reports) an op too large to send alone.
import { describe, expect, it } from "vitest";
import type { SyncEvent } from "../events.ts";
import { envelope, FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

describe("413 splitting", () => {
  it("halves the batch until the server takes it, sending every op exactly once", async () => {
    const server = new FakeServer();
    // A server whose limit is 2 ops per batch (lower than the client assumes).
    server.script = (request) => (request.path === "/v1/sync/batch" && (request.body as { ops: unknown[] }).ops.length > 2 ? envelope(413, "PAYLOAD_TOO_LARGE") : undefined);
    const { client } = await openClient(server);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await client.create("tasks", { title: `t${i}` }));
    const report = await client.sync();
    const accepted = server.batches().filter((b) => b.ops.length <= 2);
    expect(accepted.every((b) => b.ops.length >= 1 && b.ops.length <= 2)).toBe(true);
    expect(accepted.flatMap((b) => b.ops.map((op) => op.data?.title))).toEqual(ids.map((_, i) => `t${i}`));
    const everyOpId = server.batches().flatMap((b) => b.ops.map((op) => op.op_id));
    expect(new Set(everyOpId).size).toBe(7);
    expect(report).toMatchObject({ applied: 7, rejected: 0 });
    expect(server.records.size).toBe(7);
    expect(client.status.pending).toBe(0);
  });

  it("learns the limit: later batches are small from the start", async () => {
    const server = new FakeServer();
    server.script = (request) => (request.path === "/v1/sync/batch" && (request.body as { ops: unknown[] }).ops.length > 3 ? envelope(413, "PAYLOAD_TOO_LARGE") : undefined);
    const { client } = await openClient(server);
    for (let i = 0; i < 8; i++) await client.create("tasks", { title: `a${i}` });
    await client.sync();
    const before = server.batches().length;
    for (let i = 0; i < 3; i++) await client.create("tasks", { list_id: LIST_ID, title: `b${i}` });
    await client.sync();
    expect(server.batches().slice(before).map((b) => b.ops.length)).toEqual([2, 1]);
  });

  it("drops an op the server refuses even alone, and tells the app", async () => {
    const server = new FakeServer();
    server.script = (request) =>
      request.path === "/v1/sync/batch" && (request.body as { ops: { data?: { notes?: string } }[] }).ops.some((op) => op.data?.notes === "huge")
        ? envelope(413, "PAYLOAD_TOO_LARGE")
        : undefined;
    const { client } = await openClient(server);
    const events: SyncEvent[] = [];
    client.on((event) => events.push(event));
    await client.create("tasks", { title: "ok 1" });
    const big = await client.create("tasks", { title: "big", notes: "huge" });
    await client.create("tasks", { title: "ok 2" });
    const report = await client.sync();
    expect(report).toMatchObject({ applied: 2, rejected: 1 });
    expect(client.status.pending).toBe(0);
    expect((await client.get("tasks", big))).toBeUndefined();
    expect(events).toContainEqual(expect.objectContaining({ type: "write_discarded", reason: "rejected", record_id: big, fields: null, error: expect.objectContaining({ code: "PAYLOAD_TOO_LARGE" }) }));
    expect(events).toContainEqual(expect.objectContaining({ type: "op_rejected" }));
  });

  it("a create refused even alone, its record written again since: the later write carries it, shortened notes and all", async () => {
    const server = new FakeServer();
    server.script = (request) =>
      request.path === "/v1/sync/batch" && (request.body as { ops: { data?: { notes?: string } }[] }).ops.some((op) => op.data?.notes === "huge")
        ? envelope(413, "PAYLOAD_TOO_LARGE")
        : undefined;
    const { client } = await openClient(server);
    const events: SyncEvent[] = [];
    client.on((event) => events.push(event));
    const task = await client.create("tasks", { list_id: LIST_ID, title: "Minutes", notes: "huge" });
    await client.create("tasks", { list_id: LIST_ID, title: "other" });
    await client.upsert("tasks", task, { notes: "short" });
    const later = client.pendingOps()[2].op;
    const report = await client.sync();
    expect(report).toMatchObject({ applied: 2, rejected: 1, queued: 0 });
    expect(server.records.get(`tasks/${task}`)?.data).toEqual({ list_id: LIST_ID, title: "Minutes", notes: "short" });
    expect((await client.get("tasks", task))).toMatchObject({ pending: false, data: { title: "Minutes", notes: "short" } });
    expect(events).toEqual([expect.objectContaining({ type: "op_rejected", op: expect.objectContaining({ record_id: task }), dropped: false, foldedInto: later.op_id })]);
  });
});
