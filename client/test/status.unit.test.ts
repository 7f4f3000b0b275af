// The status surface an app renders: state, pending count, last synced at,
// last error code; listeners subscribe and unsubscribe.
import { describe, expect, it } from "vitest";
import type { SyncStatus } from "../status.ts";
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

  it("runs one sync at a time", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server);
    await client.create("tasks", { title: "a" });
    const [a, b] = [client.sync(), client.sync()];
    expect(a).toBe(b);
    await a;
    expect(server.batches()).toHaveLength(1);
  });
});
