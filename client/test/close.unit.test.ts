// Sign-out while a sync runs: client.close() cancels it (a retry's wait, or a
// request under way) and resolves once it has ended; the queued ops stay, as
// they were, for the user's next sync of the store. Nothing it started keeps
// running: no timer of a wait it ended, no polling started after it (a Node or
// Deno script that closes its client exits at once).
import { afterEach, describe, expect, it, vi } from "vitest";
import { TidesyncApi } from "../api-client.ts";
import { TidesyncAbortedError } from "../api-error.ts";
import { MemoryStorage } from "../storage.ts";
import { BASE_URL, envelope, FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

describe("client.close()", () => {
  it("ends a retry's wait at once, sends nothing more, and refuses later syncs", async () => {
    const server = new FakeServer();
    // A sleep that only ends when the test says: a long Retry-After.
    let slept = () => {};
    const { client } = await openClient(server, { sleep: () => new Promise((resolve) => (slept = resolve)) });
    await client.refreshSchema();
    await client.create("tasks", { list_id: LIST_ID, title: "a" });
    server.script = (request) => {
      if (request.path === "/v1/sync/batch") throw new TypeError("network down");
      return undefined;
    };
    const sync = client.sync();
    const failed = expect(sync).rejects.toBeInstanceOf(TidesyncAbortedError);
    while (server.batches().length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    await client.close();
    await failed;
    slept();
    expect(server.batches()).toHaveLength(1);
    expect(client.pendingOps().map((p) => p.sent)).toEqual([true]);
    expect(client.status).toMatchObject({ state: "error", lastErrorCode: "ABORTED", pending: 1 });
    await expect(client.sync()).rejects.toMatchObject({ code: "ABORTED" });
    expect(server.batches()).toHaveLength(1);
  });

  it("abandons a request under way; the next client of the store resends the same ops", async () => {
    const server = new FakeServer();
    const storage = new MemoryStorage();
    const { client } = await openClient(server, { storage });
    await client.refreshSchema();
    const id = await client.create("tasks", { list_id: LIST_ID, title: "a" });
    let onTheWire = () => {};
    const sent = new Promise<void>((resolve) => (onTheWire = resolve));
    // The server applies the batch; its answer never comes.
    server.script = (request) => {
      if (request.path !== "/v1/sync/batch") return undefined;
      server.answer(request);
      onTheWire();
      return new Promise<never>(() => {});
    };
    const sync = client.sync();
    await sent;
    await client.close();
    await expect(sync).rejects.toBeInstanceOf(TidesyncAbortedError);
    expect((await storage.loadState()).outbox.map((p) => [p.op.record_id, p.sent])).toEqual([[id, true]]);

    server.script = null;
    const next = (await openClient(server, { storage })).client;
    expect(await next.sync()).toMatchObject({ duplicates: 1 });
    expect(server.batches()[1]).toEqual(server.batches()[0]);
    expect(next.pendingOps()).toEqual([]);
  });

  it("resolves while the token getter never answers (supabase-js refreshing an expired token offline), and sends nothing", async () => {
    const server = new FakeServer();
    let hang = false;
    const api = new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => (hang ? new Promise<string>(() => {}) : "test-token"), fetch: server.fetch });
    const { client } = await openClient(server, { api });
    await client.refreshSchema();
    await client.create("tasks", { list_id: LIST_ID, title: "a" });
    hang = true;
    const sync = client.sync();
    const failed = expect(sync).rejects.toBeInstanceOf(TidesyncAbortedError);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const closed = await Promise.race([client.close().then(() => "closed"), new Promise((resolve) => setTimeout(() => resolve("still waiting"), 2000))]);
    expect(closed).toBe("closed");
    await failed;
    expect(server.batches()).toHaveLength(0);
    expect(client.pendingOps().map((p) => p.sent)).toEqual([false]);
  });

  it("refuses writes once close() has begun: a late write at sign-out does not go into the closed store", async () => {
    const server = new FakeServer();
    const storage = new MemoryStorage();
    const { client } = await openClient(server, { storage });
    await client.refreshSchema();
    const id = await client.create("tasks", { list_id: LIST_ID, title: "a" });
    await client.sync();
    const closed = client.close();
    // Made while close() runs, and after it has ended.
    const during = client.upsert("tasks", id, { title: "late" });
    await closed;
    await expect(during).rejects.toBeInstanceOf(TidesyncAbortedError);
    await expect(client.create("tasks", { list_id: LIST_ID, title: "b" })).rejects.toMatchObject({ code: "ABORTED" });
    await expect(client.upsert("tasks", id, { title: "c" })).rejects.toMatchObject({ code: "ABORTED" });
    await expect(client.delete("tasks", id)).rejects.toMatchObject({ code: "ABORTED" });
    expect((await storage.loadState()).outbox).toEqual([]);
    expect(client.pendingOps()).toEqual([]);
  });

  describe("leaves no timer behind", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    /** A client on the platform's own sleep (its timers faked, to be counted), offline or told to wait. */
    async function waitingClient(answer: () => Response) {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
      const server = new FakeServer();
      const { client } = await openClient(server, { sleep: undefined, backoff: { baseMs: 30_000, maxMs: 60_000, maxAttempts: 8 } });
      await client.refreshSchema();
      await client.create("tasks", { list_id: LIST_ID, title: "a" });
      server.script = (request) => (request.path === "/v1/sync/batch" ? answer() : undefined);
      const failed = expect(client.sync()).rejects.toBeInstanceOf(TidesyncAbortedError);
      await drained(() => server.batches().length === 1);
      expect(vi.getTimerCount()).toBe(1); // the wait to retry
      return { client, failed, server };
    }

    it("when close() ends a backoff's wait", async () => {
      const { client, failed } = await waitingClient(() => {
        throw new TypeError("network down");
      });
      await client.close();
      await failed;
      expect(vi.getTimerCount()).toBe(0);
    });

    it("when close() ends the wait of a long Retry-After", async () => {
      const { client, failed, server } = await waitingClient(() => envelope(503, "UNAVAILABLE", { "retry-after": "3600" }));
      await client.close();
      await failed;
      expect(vi.getTimerCount()).toBe(0);
      await vi.advanceTimersByTimeAsync(3600_000);
      expect(server.batches()).toHaveLength(1);
    });

    it("start() after close() polls nothing", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
      const server = new FakeServer();
      const { client } = await openClient(server);
      await client.close();
      client.start(1_000);
      expect(vi.getTimerCount()).toBe(0);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(server.requests).toEqual([]);
    });
  });
});

/** Until `condition` holds, then until every promise it set going has settled (turns of the event loop: setImmediate is not faked). */
async function drained(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
}
