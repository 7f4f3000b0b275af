// 410 RESYNC_REQUIRED: the client drops its cursor, pulls from scratch,
// forgets records the server no longer lists, and keeps its outbox.
import { describe, expect, it } from "vitest";
import type { SyncEvent } from "../events.ts";
import { envelope, FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

const A = "00000000-0000-4000-8000-0000000000a1";
const B = "00000000-0000-4000-8000-0000000000b2";

describe("410 resync", () => {
  it("pulls from scratch, drops vanished records and keeps pending writes", async () => {
    const server = new FakeServer();
    server.write("tasks", A, { type: "upsert", data: { title: "A" } });
    server.write("tasks", B, { type: "upsert", data: { title: "B" } });
    const { client } = await openClient(server);
    await client.sync();
    expect((await client.list("tasks")).map((r) => r.data?.title).sort()).toEqual(["A", "B"]);

    // While this device was away, B was deleted and its tombstone purged; A changed.
    server.records.delete(`tasks/${B}`);
    server.write("tasks", A, { type: "upsert", data: { title: "A2" } });
    const events: SyncEvent[] = [];
    client.on((event) => events.push(event));
    let pendingWrite: Promise<void> | null = null;
    server.script = (request) => {
      if (request.path === "/v1/sync/changes" && request.query.has("cursor")) {
        // The app writes during the pull; the resync must not lose it.
        pendingWrite ??= client.create("tasks", { list_id: LIST_ID, title: "written during resync" }).then(() => {});
        return envelope(410, "RESYNC_REQUIRED");
      }
      return undefined;
    };
    const report = await client.sync();
    await pendingWrite;
    expect(report.resynced).toBe(true);
    expect(events).toEqual([{ type: "resync", reason: "RESYNC_REQUIRED" }]);
    const pulls = server.requests.filter((r) => r.path === "/v1/sync/changes");
    expect(pulls.at(-1)?.query.has("cursor")).toBe(false);
    expect((await client.get("tasks", A))?.data).toEqual({ title: "A2" });
    expect((await client.get("tasks", B))).toBeUndefined();
    expect((await client.serverRecords()).map((r) => r.id)).not.toContain(B);
    expect((await client.list("tasks")).map((r) => r.data?.title).sort()).toEqual(["A2", "written during resync"]);
    expect(client.pendingOps().map((p) => p.op.data?.title)).toEqual(["written during resync"]);

    // And the next sync continues incrementally from the new cursor.
    server.script = null;
    await client.sync();
    expect(client.status.pending).toBe(0);
    expect(server.requests.filter((r) => r.path === "/v1/sync/changes").at(-1)?.query.has("cursor")).toBe(true);
  });

  it("a cursor the server no longer accepts (400 INVALID_CURSOR) also restarts the pull, once", async () => {
    const server = new FakeServer();
    server.write("tasks", A, { type: "upsert", data: { title: "A" } });
    const { client } = await openClient(server);
    await client.sync();
    const events: SyncEvent[] = [];
    client.on((event) => events.push(event));
    server.script = (request) =>
      request.path === "/v1/sync/changes" && request.query.has("cursor") ? envelope(400, "INVALID_CURSOR") : undefined;
    const report = await client.sync();
    expect(report.resynced).toBe(true);
    expect(events).toEqual([{ type: "resync", reason: "INVALID_CURSOR" }]);
    expect(server.requests.filter((r) => r.path === "/v1/sync/changes").at(-1)?.query.has("cursor")).toBe(false);
    expect((await client.get("tasks", A))?.data).toEqual({ title: "A" });
  });

  // The store keeps the full sync under way beside its marks (not as the stored cursor): the next sync
  // goes on with it, and still drops what it did not list.
  it("an interrupted full pull goes on where it stopped instead of keeping a half-done cursor", async () => {
    const server = new FakeServer();
    for (let i = 0; i < 5; i++) server.write("tasks", `00000000-0000-4000-8000-00000000000${i}`, { type: "upsert", data: { title: `t${i}` } });
    const { client } = await openClient(server, { pullLimit: 2, backoff: { baseMs: 1, maxMs: 1, maxAttempts: 1 } });
    let failed = false;
    server.script = (request) => {
      if (request.path !== "/v1/sync/changes" || !request.query.has("cursor") || failed) return undefined;
      failed = true;
      return envelope(500, "INTERNAL");
    };
    await expect(client.sync()).rejects.toMatchObject({ code: "INTERNAL" });
    server.script = null;
    await client.sync();
    const pulls = server.requests.filter((r) => r.path === "/v1/sync/changes").map((r) => r.query.get("cursor"));
    // and, the full sync resumed, one page after its cursor (what changed while it was interrupted)
    expect(pulls).toEqual([null, "2", "2", "4", "5"]);
    expect((await client.list("tasks"))).toHaveLength(5);
  });
});
