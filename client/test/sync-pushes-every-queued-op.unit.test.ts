// One sync() pushes every op queued before it began (client/README.md, "Sync when it makes
// sense": the writes made before the call are on the server when it resolves), however many
// batches that takes; it pushes the writes made while it runs too, up to 100 batches of them, so
// that an app that keeps writing does not hold it for ever. maxBatchesPerSync, when the app sets
// it, caps the batches of one sync, and the report says how many ops it left queued.
import { describe, expect, it } from "vitest";
import { FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

const fast = { backoff: { baseMs: 1, maxMs: 1, maxAttempts: 1 } };

async function queueTasks(client: { create: (collection: string, data: Record<string, unknown>) => Promise<string> }, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await client.create("tasks", { list_id: LIST_ID, title: `t${i}` }));
  return ids;
}

describe("one sync() pushes every op queued before it", () => {
  it("takes as many batches as the outbox needs: 150 one-op batches, more than the 100 a sync used to stop at", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server, { ...fast, maxOpsPerBatch: 1 });
    const ids = await queueTasks(client, 150);
    const report = await client.sync();
    expect(report).toMatchObject({ applied: 150, queued: 0 });
    expect(client.status).toMatchObject({ state: "online", pending: 0, lastErrorCode: null });
    expect(server.batches()).toHaveLength(150);
    for (const id of ids) expect(server.records.get(`tasks/${id}`)?.data).toMatchObject({ title: expect.any(String) });
  });

  it("pushes writes made while it runs too, but an app that keeps writing does not hold it for ever: 100 batches of them at most", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server, { ...fast, maxOpsPerBatch: 1 });
    await queueTasks(client, 3);
    // The app writes a task while each batch is on the wire.
    let written = 0;
    server.script = async (request) => {
      if (request.path === "/v1/sync/batch") await client.create("tasks", { list_id: LIST_ID, title: `during ${written++}` });
      return undefined;
    };
    const report = await client.sync();
    // The 3 ops queued before it, then 100 batches of the writes made meanwhile (one op each, one
    // more written during each): the 3 written last wait for the next sync.
    expect(server.batches()).toHaveLength(103);
    expect(report).toMatchObject({ applied: 103, queued: 3 });
    expect(client.status).toMatchObject({ state: "online", pending: 3 });
    server.script = null;
    expect(await client.sync()).toMatchObject({ applied: 3, queued: 0 });
  });

  it("with maxBatchesPerSync set, stops at that many batches and reports the ops left queued; the next sync goes on", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server, { ...fast, maxOpsPerBatch: 2, maxBatchesPerSync: 2 });
    await queueTasks(client, 7);
    expect(await client.sync()).toMatchObject({ applied: 4, queued: 3 });
    expect(client.status).toMatchObject({ state: "online", pending: 3 });
    expect(await client.sync()).toMatchObject({ applied: 3, queued: 0 });
    expect(server.batches().map((batch) => batch.ops.length)).toEqual([2, 2, 2, 1]);
  });
});
