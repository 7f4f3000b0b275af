// The status surface an app renders: state, pending count, last synced at,
// last error code; listeners subscribe and unsubscribe.
import { describe, expect, it } from "vitest";
import type { SyncStatus } from "../status.ts";
import type { SyncReport } from "../sync-client.ts";
import { envelope, FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

describe("sync status", () => {
  it("goes syncing → online, counts pending writes and stamps the last sync", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server, { now: () => new Date("2026-11-22T10:00:00Z") });
    const seen: SyncStatus[] = [];
    const unsubscribe = client.subscribe((status) => seen.push(status));
    await client.create("tasks", { title: "a" });
    await client.create("tasks", { title: "b" });
    expect(client.status).toEqual({ state: "online", pending: 2, lastSyncedAt: null, lastErrorCode: null });
    await client.sync();
    expect(seen.map((s) => s.state)).toContain("syncing");
    expect(client.status).toEqual({ state: "online", pending: 0, lastSyncedAt: "2026-11-22T10:00:00.000Z", lastErrorCode: null });
    unsubscribe();
    const count = seen.length;
    await client.create("tasks", { list_id: LIST_ID, title: "c" });
    expect(seen).toHaveLength(count);
  });

  it("shows offline while the server is unreachable, error for a refusal, and clears the code after a success", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server, { backoff: { baseMs: 1, maxMs: 1, maxAttempts: 2 } });
    const states: string[] = [];
    client.subscribe((status) => states.push(`${status.state}:${status.lastErrorCode ?? "-"}`));
    await client.create("tasks", { title: "a" });
    server.script = () => {
      throw new TypeError("offline");
    };
    await expect(client.sync()).rejects.toThrow();
    expect(client.status).toMatchObject({ state: "offline", lastErrorCode: "NETWORK", pending: 1 });
    server.script = () => envelope(503, "UNAVAILABLE", { "retry-after": "1" });
    await expect(client.sync()).rejects.toThrow();
    expect(client.status).toMatchObject({ state: "error", lastErrorCode: "UNAVAILABLE" });
    server.script = () => envelope(403, "FORBIDDEN");
    await expect(client.sync()).rejects.toThrow();
    expect(client.status).toMatchObject({ state: "error", lastErrorCode: "FORBIDDEN" });
    server.script = null;
    await client.sync();
    expect(client.status).toMatchObject({ state: "online", lastErrorCode: null, pending: 0 });
    expect(states).toContain("offline:NETWORK");
  });

  it("runs one sync at a time: a call while one runs gets the one queued after it (one at most)", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server);
    await client.create("tasks", { title: "a" });
    const [a, b, c] = [client.sync(), client.sync(), client.sync()];
    expect(b).not.toBe(a);
    expect(c).toBe(b);
    await Promise.all([a, b]);
    expect(server.batches()).toHaveLength(1);
    expect(server.requests.filter((r) => r.path === "/v1/sync/changes")).toHaveLength(2);
  });

  it("a write made while a sync pulls is on the server when the next sync() resolves", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server);
    await client.sync();
    let written: Promise<SyncReport> | null = null;
    // A timer's or a poke's sync is pulling when the app writes and awaits sync().
    server.duringFirst("/v1/sync/changes", async () => {
      await client.create("tasks", { list_id: LIST_ID, title: "saved?" });
      written = client.sync();
    });
    const background = client.sync();
    await background;
    const report = await written!;
    expect(report.applied).toBe(1);
    expect([...server.records.values()].map((r) => r.data?.title)).toContain("saved?");
    expect(client.status.pending).toBe(0);
  });
});
