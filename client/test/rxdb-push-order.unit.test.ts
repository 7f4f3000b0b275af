// The RxDB replications' held-back deletes (client/adapters/rxdb/push-order.ts), against the
// scripted fake server: every collection's go in one push, children first, and a send cut
// short goes again after a restart with the same op_ids in the same order; an order naming
// a collection that never replicates says so on error$ (awaitInSync rejects) instead of
// waiting for ever; and no timer of it outlives what it waited for. With the real RxDB and server: tests/integration/adapter-write-order.test.ts.
import { describe, expect, it, vi } from "vitest";
import type { SyncOp } from "../../functions/_shared/schemas/sync.ts";
import type { KeyValueStore } from "../adapters/core/key-value.ts";
import type { Correction } from "../adapters/core/push-ops.ts";
import { HELD_DELETES_KEY, type OrderedReplication, RxdbPushOrder } from "../adapters/rxdb/push-order.ts";
import { TidesyncApi } from "../api-client.ts";
import type { SyncEvent } from "../events.ts";
import { retryOptions } from "../retry.ts";
import { BASE_URL, envelope, FakeServer, INSTALLATION_ID } from "./fake-server.ts";

let n = 0;
const newId = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
const COLLECTIONS = ["lists", "list_members", "tasks"];

function memoryStore(): KeyValueStore {
  const stored = new Map<string, unknown>();
  return {
    get: async <T>(key: string) => structuredClone(stored.get(key)) as T | undefined,
    set: async (key, value) => void stored.set(key, structuredClone(value)),
  };
}

/** A replication as the order sees it, on `store` (what survives a restart). */
function replication(server: FakeServer, store: KeyValueStore, events: SyncEvent[], errors: unknown[], retryMs = 1) {
  const corrections: Correction[] = [];
  let cancelled = false;
  let pushing: Promise<unknown> = Promise.resolve();
  const member: OrderedReplication = {
    idle: async () => {},
    exclusive<T>(work: () => Promise<T>) {
      const run = pushing.then(work, work);
      pushing = run.catch(() => {});
      return run;
    },
    store,
    pushContext: async () => ({
      api: new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => "test-token", fetch: server.fetch }),
      installationId: INSTALLATION_ID,
      store,
      retry: retryOptions({ sleep: async () => {}, backoff: { maxAttempts: 2 } }),
      newId,
      emit: (event) => events.push(event),
      bounds: { maxOps: 500, maxBodyBytes: 1_000_000 },
    }),
    keepCorrections: async (more) => void corrections.push(...more),
    stopped: () => cancelled,
    reportError: (error) => errors.push(error),
    retryMs,
  };
  return { member, corrections, cancel: () => void (cancelled = true) };
}

const remove = (collection: string): SyncOp => ({ op_id: newId(), collection, record_id: newId(), type: "delete", base_version: 1 });

describe("RxdbPushOrder", () => {
  it("sends every collection's held-back deletes in one push, children first; a send cut short goes again after a restart with its op_ids", async () => {
    const server = new FakeServer();
    const stores = COLLECTIONS.map(() => memoryStore());
    const [list, ownMembership, editorMembership, task] = [remove("lists"), remove("list_members"), remove("list_members"), remove("tasks")];
    await stores[0].set(HELD_DELETES_KEY, [list]);
    await stores[1].set(HELD_DELETES_KEY, [ownMembership, editorMembership]);
    await stores[2].set(HELD_DELETES_KEY, [task]);
    const expected = [task, ownMembership, editorMembership, list];
    // Edited on the server since (version 2): each delete answers conflict, the app is told by its collection's replication.
    for (const op of expected) for (const title of ["a", "b"]) server.write(op.collection, op.record_id, { type: "upsert", data: { title } });

    // Every answer lost: the deletes stay held back and in the outboxes.
    server.script = (request) => (request.path === "/v1/sync/batch" ? envelope(503, "UNAVAILABLE") : undefined);
    const errors: unknown[] = [];
    const before = new RxdbPushOrder(COLLECTIONS);
    const cancelled = COLLECTIONS.map((name, i) => {
      const r = replication(server, stores[i], [], errors);
      before.join(name, r.member);
      return r.cancel;
    });
    before.sendDeletes();
    await expect.poll(() => errors.length).toBeGreaterThan(0);
    for (const cancel of cancelled) cancel();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.batches().at(-1)!.ops).toEqual(expected);
    expect(await stores[1].get(HELD_DELETES_KEY)).toEqual([ownMembership, editorMembership]);

    // The app restarts: new replications on the same stores send them as they were.
    server.script = null;
    const sentBefore = server.batches().length;
    const events: SyncEvent[][] = COLLECTIONS.map(() => []);
    const after = new RxdbPushOrder(COLLECTIONS);
    const replications = COLLECTIONS.map((name, i) => {
      const r = replication(server, stores[i], events[i], []);
      after.join(name, r.member);
      return r;
    });
    after.sendDeletes();
    await after.awaitDeletes();
    const batches = server.batches().slice(sentBefore);
    expect(batches.map((batch) => batch.ops)).toEqual([expected]);
    for (const store of stores) expect(await store.get(HELD_DELETES_KEY)).toEqual([]);
    // Each collection's replication is handed its own answers and tells the app of its own ops.
    expect(replications.map((r) => r.corrections.map((c) => c.collection))).toEqual([["lists"], ["list_members", "list_members"], ["tasks"]]);
    expect(events.map((told) => [...new Set(told.map((event) => (event.type === "write_discarded" ? event.collection : "op" in event ? event.op.collection : "")))])).toEqual(COLLECTIONS.map((name) => [name]));
  });

  it("names a collection that never replicates on error$, and awaitInSync rejects, instead of holding the deletes back for ever", async () => {
    const server = new FakeServer();
    const store = memoryStore();
    await store.set(HELD_DELETES_KEY, [remove("lists")]);
    const errors: unknown[] = [];
    const order = new RxdbPushOrder(["lists", "tasks"], { joinGraceMs: 20 });
    order.join("lists", replication(server, store, [], errors).member);
    order.sendDeletes();
    await expect(order.awaitDeletes()).rejects.toThrow(/no replication of "tasks" joined within 20 ms/);
    expect(errors).toEqual([expect.objectContaining({ message: expect.stringMatching(/pass this order to a replicateTidesync of each/) })]);
    expect(server.batches()).toEqual([]);
    // Once it joins, the deletes go.
    order.join("tasks", replication(server, memoryStore(), [], []).member);
    await order.awaitDeletes();
    expect(server.batches()).toHaveLength(1);
  });

  it("keeps no waiter of an awaitDeletes() that has returned: an app awaiting sync after each write does not pile them up", async () => {
    const server = new FakeServer();
    const stores = COLLECTIONS.map(() => memoryStore());
    const order = new RxdbPushOrder(COLLECTIONS);
    COLLECTIONS.forEach((name, i) => order.join(name, replication(server, stores[i], [], []).member));
    for (let round = 0; round < 50; round++) {
      await stores[2].set(HELD_DELETES_KEY, [remove("tasks")]);
      order.sendDeletes();
      await Promise.all([order.awaitDeletes(), order.awaitDeletes()]);
    }
    expect(server.batches()).toHaveLength(50);
    // Each waiting call left a callback (and what it holds) in the order for as long as the app ran.
    expect((order as unknown as { stalled: unknown[] }).stalled).toHaveLength(0);
  });

  describe("leaves no timer behind", () => {
    const fakeTimers = () => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const realTimers = () => vi.useRealTimers();

    it("the join grace ends once every collection it names joined, or every replication left", () => {
      fakeTimers();
      try {
        const server = new FakeServer();
        const joined = new RxdbPushOrder(["lists", "tasks"]);
        joined.join("lists", replication(server, memoryStore(), [], []).member);
        expect(vi.getTimerCount()).toBe(1); // the grace the others have to join
        joined.join("tasks", replication(server, memoryStore(), [], []).member);
        expect(vi.getTimerCount()).toBe(0);

        const left = new RxdbPushOrder(["lists", "tasks"]);
        const lone = replication(server, memoryStore(), [], []);
        left.join("lists", lone.member);
        lone.cancel(); // the database closed before "tasks" replicated: RxDB's cancel(), then leave (as replicateTidesync does)
        left.leave("lists", lone.member);
        expect(vi.getTimerCount()).toBe(0);
      } finally {
        realTimers();
      }
    });

    it("the wait to send the held-back deletes again ends when the replications are cancelled; the next ones send them", async () => {
      fakeTimers();
      try {
        const server = new FakeServer();
        const store = memoryStore();
        const held = remove("lists");
        await store.set(HELD_DELETES_KEY, [held]);
        server.script = (request) => (request.path === "/v1/sync/batch" ? envelope(503, "UNAVAILABLE") : undefined);
        const errors: unknown[] = [];
        const order = new RxdbPushOrder(["lists"]);
        const first = replication(server, store, [], errors, 60_000);
        order.join("lists", first.member);
        order.sendDeletes();
        await drained(() => errors.length > 0);
        expect(vi.getTimerCount()).toBe(1); // RxDB's retryTime
        first.cancel();
        order.leave("lists", first.member);
        await drained(() => true);
        expect(vi.getTimerCount()).toBe(0);
        const sent = server.batches().length;

        server.script = null;
        order.join("lists", replication(server, store, [], []).member);
        await order.awaitDeletes();
        expect(server.batches().slice(sent).map((batch) => batch.ops)).toEqual([[held]]);
      } finally {
        realTimers();
      }
    });
  });
});

/** Until `condition` holds, then until every promise it set going has settled (turns of the event loop: setImmediate is not faked). */
async function drained(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
}
