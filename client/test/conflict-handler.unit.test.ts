// onConflict is the app's code, and may take its time (a dialog) or use the client (write the
// record, sync, close at sign-out). The client asks it outside its lock: local writes and close()
// go on meanwhile, and its answer is rebased on what the outbox and the record hold then.
import { describe, expect, it } from "vitest";
import type { SyncEvent } from "../events.ts";
import type { ConflictInfo } from "../rebase.ts";
import { MemoryStorage } from "../storage.ts";
import type { TidesyncClient } from "../sync-client.ts";
import { FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

const R = "00000000-0000-4000-8000-0000000000c1";
const OTHER = "00000000-0000-4000-8000-0000000000c2";

/** "settled", "rejected: …" or "still pending" after `ms`. */
const within = <T>(p: Promise<T>, ms = 1000) =>
  Promise.race([
    p.then(() => "settled", (e: Error) => `rejected: ${e.message}`),
    new Promise<string>((r) => setTimeout(() => r("still pending"), ms)),
  ]);

type Handler = (client: TidesyncClient, conflict: ConflictInfo) => Promise<{ type: "discard" } | { type: "upsert"; data: Record<string, unknown> }>;

/** A client whose queued edit of R conflicts with another device's at its next sync. */
async function conflicted(onConflict: Handler, storage = new MemoryStorage(), server = new FakeServer()) {
  server.write("tasks", R, { type: "upsert", data: { list_id: LIST_ID, title: "Buy milk", done: false } });
  const client = await openWith(server, storage, 1, onConflict);
  await client.sync();
  await client.upsert("tasks", R, { title: "Buy bread" });
  server.write("tasks", R, { type: "upsert", data: { title: "Buy cheese" } });
  return { client, server, storage };
}

async function openWith(server: FakeServer, storage: MemoryStorage, idPrefix: number, onConflict: Handler) {
  let self!: TidesyncClient;
  const { client } = await openClient(server, { storage, idPrefix, onConflict: (conflict) => onConflict(self, conflict) });
  self = client;
  return client;
}

describe("onConflict outside the client's lock", () => {
  it("a handler that writes through the client: the sync settles, and the write goes out", async () => {
    const { client, server } = await conflicted(async (c) => {
      await c.upsert("tasks", R, { notes: "conflict seen" });
      return { type: "discard" };
    });
    expect(await within(client.sync())).toBe("settled");
    expect(server.records.get(`tasks/${R}`)?.data).toMatchObject({ title: "Buy cheese", notes: "conflict seen" });
    expect(client.pendingOps()).toEqual([]);
  });

  it("a handler that writes the conflicting field itself: judged against the server's record it was shown, not asked again", async () => {
    let asked = 0;
    const { client, server } = await conflicted(async (c, { server: theirs }) => {
      asked++;
      await c.upsert("tasks", R, { title: `${theirs.data?.title} and bread` });
      return { type: "discard" };
    });
    expect(await within(client.sync())).toBe("settled");
    expect(asked).toBe(1);
    expect(server.records.get(`tasks/${R}`)?.data).toMatchObject({ title: "Buy cheese and bread" });
    expect(await client.get("tasks", R)).toMatchObject({ pending: false, data: { title: "Buy cheese and bread" } });
  });

  it("a handler's resend is rebased on the app's writes made meanwhile: they are newer intent", async () => {
    const { client, server } = await conflicted(async (c) => {
      await c.upsert("tasks", R, { title: "Buy rice" });
      return { type: "upsert", data: { title: "Buy bread", done: true } };
    });
    await client.sync();
    expect(server.records.get(`tasks/${R}`)?.data).toMatchObject({ title: "Buy rice", done: true });
  });

  it("a handler that calls sync() and close(): both settle", async () => {
    let done!: (inner: string[]) => void;
    const handled = new Promise<string[]>((r) => (done = r));
    const { client } = await conflicted(async (c) => {
      done([await within(c.sync(), 50), await within(c.close())]);
      return { type: "discard" };
    });
    const outer = await within(client.sync());
    const inner = await handled;
    // sync() while a sync runs is the one queued after it: it settles when close() refuses it.
    expect({ inner, outer }).toEqual({ inner: ["still pending", "settled"], outer: "rejected: cancelled (the client was closed)" });
  });

  it("an async handler (a dialog) blocks no write and no close(); the conflict is asked again at the next sync, told once", async () => {
    let answer!: () => void;
    const asked = new Promise<void>((r) => (answer = r));
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    const { client, server, storage } = await conflicted(async () => {
      entered();
      await asked;
      return { type: "discard" };
    });
    const events: SyncEvent[] = [];
    client.on((event) => events.push(event));
    const sync = client.sync();
    await inHandler;
    const write = await within(client.upsert("tasks", OTHER, { list_id: LIST_ID, title: "unrelated" }));
    const closed = await within(client.close());
    expect({ write, closed, sync: await within(sync) }).toEqual({ write: "settled", closed: "settled", sync: "rejected: cancelled (the client was closed)" });
    answer();
    await new Promise((r) => setTimeout(r, 10));
    expect(events.filter((e) => e.type === "conflict")).toEqual([]);
    // The closed client's answer came too late: the op is still queued as sent, and the next client asks again.
    expect((await storage.loadState()).outbox.map((p) => [p.op.record_id, p.sent])).toEqual([[R, true], [OTHER, false]]);
    const next = await openWith(server, storage, 2, async () => ({ type: "discard" }));
    const told: SyncEvent[] = [];
    next.on((event) => told.push(event));
    expect(await within(next.sync())).toBe("settled");
    expect(told.filter((e) => e.type === "conflict")).toHaveLength(1);
    expect(server.records.get(`tasks/${OTHER}`)?.data).toMatchObject({ title: "unrelated" });
  });

  it("after a restart with the handler still pending (the app killed), the next client asks it again and settles", async () => {
    const storage = new MemoryStorage();
    const server = new FakeServer();
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    const { client } = await conflicted(async () => {
      entered();
      return new Promise(() => {}); // never answers: the app is killed with the dialog open
    }, storage, server);
    void client.sync().catch(() => {});
    await inHandler;
    let asked = 0;
    const next = await openWith(server, storage, 2, async (c) => {
      asked++;
      await c.upsert("tasks", R, { notes: "conflict seen" });
      return { type: "discard" };
    });
    expect(await within(next.sync())).toBe("settled");
    expect(asked).toBe(1);
    expect(server.records.get(`tasks/${R}`)?.data).toMatchObject({ title: "Buy cheese", notes: "conflict seen" });
    expect(next.pendingOps()).toEqual([]);
  });
});
