// The pure parts the WatermelonDB and RxDB adapters share (client/adapters/core):
// the order a push's ops are sent in (upserts parents first, then deletes
// children first), which ops a retried push sends (the unanswered ones, never again as new
// ops; those a push cut short had answered, not at all), ids the server would not return as they are, Retry-After holding
// back every later request of the adapter, also the library's own retries,
// which whole-batch refusals may drop an op (client/batch-refusal.ts), and the
// guard of an adapter's requests (its database's user; stopping on sign-out).
import { describe, expect, it, vi } from "vitest";
import { collectionSchemas } from "../../functions/_shared/collections.ts";
import { DEFAULT_LIMITS } from "../../functions/_shared/limits.ts";
import type { SyncOp } from "../../functions/_shared/schemas/sync.ts";
import type { KeyValueStore } from "../adapters/core/key-value.ts";
import { TidesyncApi } from "../api-client.ts";
import { TidesyncApiError, TidesyncNetworkError } from "../api-error.ts";
import { OWNER_KEY, ownerGuarded } from "../adapters/core/owner-guard.ts";
import { orderOps, sendPhase } from "../adapters/core/op-order.ts";
import { planOps, unsendableId } from "../adapters/core/plan-ops.ts";
import { type AppliedUpsert, type PushContext, pushedOps, pushOps, unansweredOps } from "../adapters/core/push-ops.ts";
import { batchBoundsOf } from "../batching.ts";
import type { SyncEvent } from "../events.ts";
import { retryOptions, withRetry } from "../retry.ts";
import { BASE_URL, envelope, FakeServer, INSTALLATION_ID, json } from "./fake-server.ts";
import { tokenOf } from "./tokens.ts";

const ID = "5b1f4c1e-8a83-4f5e-9d7e-0d3c2b1a0f9e";
let n = 0;
const newId = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
const sent = (data: Record<string, unknown>, base: number | null = 3): SyncOp => ({ op_id: newId(), collection: "tasks", record_id: ID, type: "upsert", base_version: base, data });

describe("planOps", () => {
  it("sends nothing new for a change the unanswered ops already carry (the retry re-sends them with their op_ids)", () => {
    expect(planOps([sent({ title: "a", done: true })], [{ collection: "tasks", id: ID, type: "upsert", data: { title: "a", done: true }, baseVersion: 3 }], newId)).toEqual([]);
  });

  it("sends only what the record gained since, on the same base", () => {
    const ops = planOps([sent({ title: "a" })], [{ collection: "tasks", id: ID, type: "upsert", data: { title: "b", notes: "n" }, baseVersion: 3 }], newId);
    expect(ops).toEqual([expect.objectContaining({ type: "upsert", base_version: 3, data: { title: "b", notes: "n" } })]);
    expect(planOps([sent({ title: "a" })], [{ collection: "tasks", id: ID, type: "upsert", data: { title: "a", notes: "n" }, baseVersion: 3 }], newId))
      .toEqual([expect.objectContaining({ data: { notes: "n" } })]);
  });

  it("a delete after a sent upsert is a new op; after a sent delete it is already on its way", () => {
    const remove = { collection: "tasks", id: ID, type: "delete" as const, baseVersion: 3 };
    expect(planOps([sent({ title: "a" })], [remove], newId)).toEqual([expect.objectContaining({ type: "delete", base_version: 3 })]);
    expect(planOps([{ op_id: newId(), collection: "tasks", record_id: ID, type: "delete", base_version: 3 }], [remove], newId)).toEqual([]);
  });

  it("records without unanswered ops become ops as they are; an empty patch none", () => {
    expect(planOps([], [{ collection: "tasks", id: ID, type: "upsert", data: { title: "x" }, baseVersion: null }], newId))
      .toEqual([expect.objectContaining({ record_id: ID, base_version: null, data: { title: "x" } })]);
    expect(planOps([], [{ collection: "tasks", id: ID, type: "upsert", data: {}, baseVersion: 4 }], newId)).toEqual([]);
  });
});

describe("orderOps", () => {
  const op = (type: "upsert" | "delete", collection: string, id: string): SyncOp => ({ op_id: newId(), collection, record_id: id, type, base_version: 1, ...(type === "upsert" ? { data: {} } : {}) });
  const tables = ["lists", "list_members", "tasks"];

  it("sends every upsert parents first, then every delete children first, each table's ops in their given order", () => {
    const ops = [op("delete", "lists", "l1"), op("delete", "list_members", "m1"), op("upsert", "tasks", "t1"), op("delete", "tasks", "t2"), op("upsert", "lists", "l2"), op("upsert", "tasks", "t3")];
    expect(orderOps(ops, tables).map((o) => `${o.type} ${o.record_id}`)).toEqual(["upsert l2", "upsert t1", "upsert t3", "delete t2", "delete m1", "delete l1"]);
  });

  it("never sends a record's op before an earlier one of it (a re-create after its delete); ordering again changes nothing", () => {
    const ops = [op("delete", "lists", "l1"), op("upsert", "lists", "l1"), op("delete", "tasks", "t1"), op("upsert", "lists", "l2")];
    const ordered = orderOps(ops, tables);
    expect(ordered.map((o) => `${o.type} ${o.record_id}`)).toEqual(["upsert l2", "delete t1", "delete l1", "upsert l1"]);
    // Each collection's part, concatenated in any order, orders back the same.
    const parts = [ordered.filter((o) => o.collection === "tasks"), ordered.filter((o) => o.collection === "lists")];
    expect(orderOps(parts.flat(), tables)).toEqual(ordered);
    expect(orderOps(parts.reverse().flat(), tables)).toEqual(ordered);
  });

  it("puts a collection the app did not list with the last one", () => {
    expect([sendPhase("upsert", "notes", tables), sendPhase("delete", "notes", tables)]).toEqual([sendPhase("upsert", "tasks", tables), sendPhase("delete", "tasks", tables)]);
  });
});

describe("unsendableId", () => {
  it("refuses ids the server would return in another form (upper-case uuids), with a field detail", () => {
    expect(unsendableId({ collection: "tasks", id: ID, type: "upsert" }, newId())).toBeNull();
    const refused = unsendableId({ collection: "tasks", id: ID.toUpperCase(), type: "upsert" }, newId());
    expect(refused?.error).toMatchObject({ code: "VALIDATION_FAILED", details: [{ field: "/record_id", code: "invalid_format" }] });
    expect(unsendableId({ collection: "tasks", id: "not-a-uuid", type: "delete" }, newId())).not.toBeNull();
  });
});

describe("withRetry", () => {
  const rateLimited = () => new TidesyncApiError({ code: "RATE_LIMITED", message: "slow down", status: 429, retryable: true, retryAfter: 7 });

  it("waits Retry-After before the next attempt, and holds later calls back until it has passed", async () => {
    let clock = 1_000_000;
    const slept: number[] = [];
    const options = retryOptions({ backoff: { baseMs: 10, maxMs: 10, maxAttempts: 2 }, random: () => 0, monotonicNow: () => clock, sleep: async (ms) => {
      slept.push(ms);
      clock += ms;
    } });
    let calls = 0;
    const failing = () => {
      calls++;
      return Promise.reject(rateLimited());
    };
    await expect(withRetry(failing, options)).rejects.toMatchObject({ code: "RATE_LIMITED" });
    // Second attempt only after the 7 s; the call gives up after maxAttempts.
    expect({ calls, slept }).toEqual({ calls: 2, slept: [7000] });
    // The library retries on its own timer a moment later: the adapter still waits out the last Retry-After.
    clock += 1000;
    slept.length = 0;
    expect(await withRetry(async () => "ok", options)).toBe("ok");
    expect(slept).toEqual([6000]);
  });

  it("a success clears the gate, and a clock that runs back never stretches a wait past the longest Retry-After", async () => {
    // A monotonic clock that is not (the Date fallback of a platform without performance.now()).
    let clock = 1_000_000;
    const slept: number[] = [];
    const options = retryOptions({ backoff: { maxAttempts: 1 }, monotonicNow: () => clock, sleep: async (ms) => {
      slept.push(ms);
    } });
    await expect(withRetry(() => Promise.reject(rateLimited()), options)).rejects.toMatchObject({ code: "RATE_LIMITED" });
    clock -= 3 * 3600_000;
    expect(await withRetry(async () => "ok", options)).toBe("ok");
    expect(slept).toEqual([7000]);
    clock -= 3 * 3600_000;
    expect(await withRetry(async () => "ok", options)).toBe("ok");
    expect(slept).toEqual([7000]);
  });

  it("does not retry what is not retryable", async () => {
    const options = retryOptions({ sleep: async () => {} });
    let calls = 0;
    await expect(withRetry(() => {
      calls++;
      return Promise.reject(new TidesyncApiError({ code: "FORBIDDEN", message: "no", status: 403, retryable: false }));
    }, options)).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(calls).toBe(1);
  });
});

function memoryStore(): KeyValueStore {
  const stored = new Map<string, unknown>();
  return {
    get: async <T>(key: string) => structuredClone(stored.get(key)) as T | undefined,
    set: async (key, value) => {
      stored.set(key, structuredClone(value));
    },
  };
}

describe("ownerGuarded", () => {
  const ALICE = "00000000-0000-4000-8000-0000000a11ce";
  const BOB = "00000000-0000-4000-8000-000000000b0b";

  it("the first request claims the database for its token's user; another user's token is refused unsent, also by a new adapter object", async () => {
    const server = new FakeServer();
    const store = memoryStore();
    let token = tokenOf(ALICE);
    const api = new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => token, fetch: server.fetch });
    const adapterApi = () => ownerGuarded({ api, installationId: INSTALLATION_ID }, store, new AbortController().signal).api;
    const first = adapterApi();
    await first.syncChanges();
    expect(await store.get(OWNER_KEY)).toBe(ALICE);
    const sent = server.requests.length;
    token = tokenOf(BOB);
    for (const guarded of [first, adapterApi()]) {
      await expect(guarded.syncChanges()).rejects.toMatchObject({ code: "STORE_OF_ANOTHER_USER", storeUserId: ALICE, userId: BOB });
    }
    expect(server.requests.length).toBe(sent);
    token = tokenOf(ALICE);
    await first.syncChanges();
  });

  it("once its signal aborts, nothing is sent and a retry's wait ends at once", async () => {
    const server = new FakeServer();
    const api = new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => tokenOf(ALICE), fetch: server.fetch });
    const closing = new AbortController();
    const guarded = ownerGuarded({ api, installationId: INSTALLATION_ID, sleep: () => new Promise(() => {}) }, memoryStore(), closing.signal);
    const waiting = withRetry(() => Promise.reject(new TidesyncNetworkError("NETWORK", "offline")), guarded.retry);
    await new Promise((resolve) => setTimeout(resolve, 0));
    closing.abort();
    await expect(waiting).rejects.toMatchObject({ code: "ABORTED" });
    await expect(guarded.api.syncChanges()).rejects.toMatchObject({ code: "ABORTED" });
    expect(server.requests).toEqual([]);
  });

  it("the wait its signal ends stops its timer (a script that closes the adapter exits at once)", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const api = new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => tokenOf(ALICE), fetch: new FakeServer().fetch });
      const closing = new AbortController();
      const guarded = ownerGuarded({ api, installationId: INSTALLATION_ID, backoff: { baseMs: 60_000, maxMs: 60_000 }, random: () => 0.5 }, memoryStore(), closing.signal);
      const waiting = withRetry(() => Promise.reject(new TidesyncNetworkError("NETWORK", "offline")), guarded.retry);
      await new Promise((resolve) => setImmediate(resolve));
      expect(vi.getTimerCount()).toBe(1);
      closing.abort();
      await expect(waiting).rejects.toMatchObject({ code: "ABORTED" });
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("pushOps: a whole batch refused", () => {
  function pushContext(server: FakeServer, events: SyncEvent[]): PushContext {
    const store = memoryStore();
    return {
      api: new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => "test-token", fetch: server.fetch }),
      installationId: INSTALLATION_ID,
      store,
      retry: retryOptions({ sleep: async () => {} }),
      newId,
      emit: (event) => events.push(event),
      bounds: { maxOps: 500, maxBodyBytes: 1_000_000 },
    };
  }
  const task = (title: string): SyncOp => ({ op_id: newId(), collection: "tasks", record_id: newId(), type: "upsert", base_version: null, data: { title } });

  it("by an unregistered installation: throws, keeps every op, and sends the same ones next time", async () => {
    const server = new FakeServer();
    server.script = (request) => request.path === "/v1/sync/batch"
      ? envelope(400, "VALIDATION_FAILED", {}, { details: [{ field: "/device_id", code: "unknown_device", message: "register this installation with POST /v1/auth/session first" }] })
      : undefined;
    const events: SyncEvent[] = [];
    const context = pushContext(server, events);
    const ops = [task("a"), task("b"), task("c")];
    await expect(pushOps(context, ops)).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
    expect(await unansweredOps(context.store)).toEqual(ops);
    expect(server.batches()).toHaveLength(1);
    server.script = null;
    expect(await pushOps(context, [])).toMatchObject({ applied: 3, rejected: 0 });
    expect(server.batches()[1].ops).toEqual(ops);
    expect(events).toEqual([]);
  });

  it("naming an op: halves until that op is alone, rejects only it", async () => {
    const server = new FakeServer();
    server.script = (request) => {
      if (request.path !== "/v1/sync/batch") return undefined;
      const index = (request.body as { ops: SyncOp[] }).ops.findIndex((op) => op.data?.title === "broken");
      return index < 0 ? undefined : envelope(400, "VALIDATION_FAILED", {}, { details: [{ field: `/ops/${index}/op_id`, code: "invalid_format", message: "must be a uuid" }] });
    };
    const events: SyncEvent[] = [];
    const context = pushContext(server, events);
    const broken = task("broken");
    const result = await pushOps(context, [task("a"), task("b"), broken, task("c"), task("d")]);
    expect(result).toMatchObject({ applied: 4, rejected: 1, corrections: [{ collection: "tasks", id: broken.record_id, record: null }] });
    expect(events).toContainEqual(expect.objectContaining({ type: "op_rejected", op: broken, error: expect.objectContaining({ code: "VALIDATION_FAILED" }) }));
    expect(await unansweredOps(context.store)).toEqual([]);
    expect(server.records.size).toBe(4);
  });

  it("too large even alone, an edit of a record the server keeps: corrected to the server's record and told with it (dropped: false), looked up only when no answer of the push showed it", async () => {
    const server = new FakeServer();
    const [kept, other] = [newId(), newId()];
    const k1 = server.write("tasks", kept, { type: "upsert", data: { title: "old" } });
    const o1 = server.write("tasks", other, { type: "upsert", data: { title: "old" } });
    server.script = (request) =>
      request.path === "/v1/sync/batch" && (request.body as { ops: SyncOp[] }).ops.some((op) => op.data?.title === "pasted") ? envelope(413, "PAYLOAD_TOO_LARGE") : undefined;
    const events: SyncEvent[] = [];
    const context = pushContext(server, events);
    const edit = (id: string, version: number, data: Record<string, unknown>): SyncOp => ({ op_id: newId(), collection: "tasks", record_id: id, type: "upsert", base_version: version, data });
    const [ticked, pastedKept, pastedOther] = [edit(kept, k1.version, { done: true }), edit(kept, k1.version, { title: "pasted" }), edit(other, o1.version, { title: "pasted" })];
    const result = await pushOps(context, [ticked, pastedKept, pastedOther]);
    const now = (id: string) => server.records.get(`tasks/${id}`)!;
    expect(result).toMatchObject({ applied: 1, rejected: 2 });
    expect(result.corrections.map((c) => [c.id, c.record?.version, c.record?.data])).toEqual([
      [kept, now(kept).version, { title: "old", done: true }],
      [other, o1.version, { title: "old" }],
    ]);
    expect(events.flatMap((e) => e.type === "op_rejected" ? [[e.op.op_id, e.error.code, e.record?.id, e.dropped]] : [])).toEqual([
      [pastedKept.op_id, "PAYLOAD_TOO_LARGE", kept, false],
      [pastedOther.op_id, "PAYLOAD_TOO_LARGE", other, false],
    ]);
    // The kept task's state came with the answer to its applied op; only the other one was read, by one request.
    expect(server.requests.filter((r) => r.method === "GET" && r.path.startsWith("/v1/sync/")).map((r) => r.path)).toEqual([`/v1/sync/records/tasks/${other}`]);
    expect(await unansweredOps(context.store)).toEqual([]);
  });
});

describe("pushOps: the look-up of a record refused unjudged", () => {
  /** A server holding 5,000 tasks that refuses every batch as too large. */
  function refusingServer(): { server: FakeServer; ids: string[] } {
    const server = new FakeServer();
    const ids = Array.from({ length: 5_000 }, () => newId());
    for (const id of ids) server.write("tasks", id, { type: "upsert", data: { title: "kept" } });
    server.script = (request) => request.path === "/v1/sync/batch" ? envelope(413, "PAYLOAD_TOO_LARGE") : undefined;
    return { server, ids };
  }
  const changesRequests = (server: FakeServer) => server.requests.filter((r) => r.path === "/v1/sync/changes");
  const lookUps = (server: FakeServer) => server.requests.filter((r) => r.method === "GET" && r.path.startsWith("/v1/sync/")).map((r) => r.path);
  function context(server: FakeServer, extra: Partial<PushContext>): PushContext {
    return {
      api: new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => "test-token", fetch: server.fetch }),
      installationId: INSTALLATION_ID,
      store: memoryStore(),
      retry: retryOptions({ sleep: async () => {} }),
      newId,
      emit: () => {},
      bounds: { maxOps: 500, maxBodyBytes: 1_000_000 },
      ...extra,
    };
  }

  it("is not made for a create the server never stored: its record leaves the device without a request", async () => {
    const { server } = refusingServer();
    const creates = ["a", "b", "c"].map((title): SyncOp => ({ op_id: newId(), collection: "tasks", record_id: newId(), type: "upsert", base_version: null, data: { title } }));
    const result = await pushOps(context(server, { neverStored: new Set(creates.map((op) => `tasks/${op.record_id}`)) }), creates);
    expect(result).toMatchObject({ applied: 0, rejected: 3, corrections: creates.map((op) => ({ collection: "tasks", id: op.record_id, record: null })) });
    expect(lookUps(server)).toEqual([]);
  });

  it("is made for a create sent before (its earlier attempt may have been stored): one read of the record, whatever the collection holds", async () => {
    const { server, ids } = refusingServer();
    const edit: SyncOp = { op_id: newId(), collection: "tasks", record_id: ids[4_999], type: "upsert", base_version: null, data: { title: "pasted" } };
    const push = context(server, { neverStored: new Set([`tasks/${edit.record_id}`]), pullLimit: 1_000 });
    await push.store.set("tidesync.sent_ops", [edit]);
    const result = await pushOps(push, []);
    expect(result.corrections).toEqual([{ collection: "tasks", id: edit.record_id, record: expect.objectContaining({ data: { title: "kept" } }) }]);
    expect(lookUps(server)).toEqual([`/v1/sync/records/tasks/${edit.record_id}`]);
  });

  it("finds none the server does not show the user (404 with its detail): the record leaves the device, nothing listed", async () => {
    const { server } = refusingServer();
    const edit: SyncOp = { op_id: newId(), collection: "tasks", record_id: newId(), type: "upsert", base_version: 3, data: { title: "pasted" } };
    const result = await pushOps(context(server, {}), [edit]);
    expect(result.corrections).toEqual([{ collection: "tasks", id: edit.record_id, record: null }]);
    expect(lookUps(server)).toEqual([`/v1/sync/records/tasks/${edit.record_id}`]);
  });

  it("on a server from before GET /v1/sync/records (its 404 is an unknown route's), lists the collection in pages of the adapter's pull limit", async () => {
    const { server, ids } = refusingServer();
    server.recordReads = false;
    const edit: SyncOp = { op_id: newId(), collection: "tasks", record_id: ids[4_999], type: "upsert", base_version: null, data: { title: "pasted" } };
    const push = context(server, { neverStored: new Set([`tasks/${edit.record_id}`]), pullLimit: 1_000 });
    await push.store.set("tidesync.sent_ops", [edit]);
    const result = await pushOps(push, []);
    expect(result.corrections).toEqual([{ collection: "tasks", id: edit.record_id, record: expect.objectContaining({ data: { title: "kept" } }) }]);
    expect(changesRequests(server).map((r) => r.query.get("limit"))).toEqual(["1000", "1000", "1000", "1000", "1000"]);
  });
});

describe("pushOps: a list's delete and a rebased op", () => {
  it("sends the op rebased after a conflict in its original's place, and the list's delete once the task's move is answered", async () => {
    const server = new FakeServer();
    const [l1, l2, task] = [newId(), newId(), newId()];
    const list = server.write("lists", l1, { type: "upsert", data: { title: "L1" } });
    const synced = server.write("tasks", task, { type: "upsert", data: { list_id: l1, title: "T" } });
    server.write("tasks", task, { type: "upsert", data: { title: "Renamed (tablet)" } });
    const events: SyncEvent[] = [];
    const context: PushContext = {
      api: new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => "test-token", fetch: server.fetch }),
      installationId: INSTALLATION_ID,
      store: memoryStore(),
      retry: retryOptions({ sleep: async () => {} }),
      newId,
      emit: (event) => events.push(event),
      bounds: batchBoundsOf(DEFAULT_LIMITS, collectionSchemas()),
    };
    // As orderOps hands them over: upserts parents first, then deletes children first.
    const result = await pushOps(context, [
      { op_id: newId(), collection: "lists", record_id: l2, type: "upsert", base_version: null, data: { title: "L2" } },
      { op_id: newId(), collection: "tasks", record_id: task, type: "upsert", base_version: synced.version, data: { title: "Keep me (phone)", list_id: l2 } },
      { op_id: newId(), collection: "lists", record_id: l1, type: "delete", base_version: list.version },
    ]);
    expect(result).toMatchObject({ applied: 3, conflicts: 1, rejected: 0 });
    expect(server.batches().map((batch) => batch.ops.map((op) => `${op.collection} ${op.type} ${Object.keys(op.data ?? {}).sort().join(",")}`))).toEqual([
      ["lists upsert title", "tasks upsert list_id,title"],
      ["tasks upsert list_id"],
      ["lists delete "],
    ]);
    expect(server.records.get(`tasks/${task}`)?.data).toMatchObject({ list_id: l2, title: "Renamed (tablet)" });
    expect(events.flatMap((event) => (event.type === "write_discarded" ? [event.fields] : []))).toEqual([["title"]]);
  });
});

describe("pushOps: the records upserts wrote", () => {
  it("tells each applied upsert's record, a create's and an edit's, before its op leaves the stored outbox; a re-send after a crash there tells it again (duplicate)", async () => {
    const server = new FakeServer();
    const existing = newId();
    const before = server.write("tasks", existing, { type: "upsert", data: { title: "old" } });
    const told: { applied: AppliedUpsert[]; stillStored: string[] }[] = [];
    let crash = true;
    const context: PushContext = {
      api: new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => "test-token", fetch: server.fetch }),
      installationId: INSTALLATION_ID,
      store: memoryStore(),
      retry: retryOptions({ sleep: async () => {} }),
      newId,
      emit: () => {},
      bounds: { maxOps: 500, maxBodyBytes: 1_000_000 },
      onApplied: async (applied) => {
        told.push({ applied, stillStored: (await unansweredOps(context.store)).map((op) => op.record_id) });
        if (crash) throw new Error("the app was killed");
      },
    };
    const created = newId();
    await expect(pushOps(context, [
      { op_id: newId(), collection: "tasks", record_id: created, type: "upsert", base_version: null, data: { title: "new" } },
      { op_id: newId(), collection: "tasks", record_id: existing, type: "upsert", base_version: before.version, data: { title: "edited" } },
    ])).rejects.toThrow("the app was killed");
    crash = false;
    expect(await pushOps(context, [])).toMatchObject({ applied: 2, duplicates: 2 });
    const record = (id: string, title: string) => ({ collection: "tasks", id, record: expect.objectContaining({ id, version: server.records.get(`tasks/${id}`)!.version, data: expect.objectContaining({ title }) }) });
    const once = { applied: [record(created, "new"), record(existing, "edited")], stillStored: [created, existing] };
    expect(told).toEqual([once, once]);
    expect(await unansweredOps(context.store)).toEqual([]);
  });
});

describe("pushOps: a push cut short after a batch was answered", () => {
  it("keeps that batch's ops for planning (pushedOps) and its corrections for the push that completes it; another way of pushing from the store (its own keys) completing meanwhile keeps them too", async () => {
    const server = new FakeServer();
    const [rejected, later, other] = [newId(), newId(), newId()];
    let cut = false;
    server.script = (request) => {
      if (request.path !== "/v1/sync/batch") return undefined;
      if (cut) throw new TypeError("fetch failed");
      const [op] = (request.body as { ops: SyncOp[] }).ops;
      if (op.record_id !== rejected) return undefined;
      cut = true;
      return json(200, { results: [{ op_id: op.op_id, status: "rejected", error: { code: "FORBIDDEN", message: "scripted" } }], server_time: new Date().toISOString() });
    };
    const events: SyncEvent[] = [];
    const context: PushContext = {
      api: new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => "test-token", fetch: server.fetch }),
      installationId: INSTALLATION_ID,
      store: memoryStore(),
      retry: retryOptions({ sleep: async () => {}, backoff: { maxAttempts: 1 } }),
      newId,
      emit: (event) => events.push(event),
      bounds: { maxOps: 1, maxBodyBytes: 1_000_000 },
    };
    const create = (id: string): SyncOp => ({ op_id: newId(), collection: "tasks", record_id: id, type: "upsert", base_version: null, data: { title: id } });
    const first = [create(rejected), create(later)];
    await expect(pushOps(context, first)).rejects.toMatchObject({ code: "NETWORK" });
    // The library hands both changes over again: only the unanswered one is still to go.
    expect(await pushedOps(context.store)).toEqual(first);
    expect(await unansweredOps(context.store)).toEqual([first[1]]);
    cut = false;
    server.script = null;
    // The other way sends its own op only: this way's unanswered one waits for this way's next push, in its order.
    expect(await pushOps({ ...context, keys: { sent: "tidesync.other_path.sent", answered: "tidesync.other_path.answered" } }, [create(other)])).toMatchObject({ applied: 1, corrections: [] });
    expect(server.batches().at(-1)!.ops.map((op) => op.record_id)).toEqual([other]);
    expect(await pushedOps(context.store)).toEqual(first);
    expect(await pushOps(context, planOps(await pushedOps(context.store), [{ collection: "tasks", id: rejected, type: "upsert", data: { title: rejected }, baseVersion: null }], newId)))
      .toMatchObject({ applied: 1, rejected: 0, corrections: [{ collection: "tasks", id: rejected, record: null }] });
    expect(server.batches().at(-1)!.ops).toEqual([first[1]]);
    expect(events.filter((event) => event.type === "op_rejected")).toHaveLength(1);
    expect(await pushedOps(context.store)).toEqual([]);
  });
  it("a long offline queue cut short at its last batch: what it keeps of the answered batches, and of the ops still to send, costs the device's storage writes in proportion to the ops, and the completing push still sees them all", async () => {
    const server = new FakeServer();
    const ops = Array.from({ length: 400 }, (_, i): SyncOp => ({ op_id: newId(), collection: "tasks", record_id: newId(), type: "upsert", base_version: null, data: { title: `task ${i}` } }));
    const last = ops[ops.length - 1];
    server.script = (request) =>
      request.path === "/v1/sync/batch" && (request.body as { ops: SyncOp[] }).ops.some((op) => op.op_id === last.op_id) ? Promise.reject(new TypeError("fetch failed")) : undefined;
    const store = memoryStore();
    let answeredBytes = 0;
    let sentBytes = 0;
    const counting: KeyValueStore = {
      get: (key) => store.get(key),
      set: async (key, value) => {
        if (key.startsWith("tidesync.answered_ops")) answeredBytes += JSON.stringify(value).length;
        if (key === "tidesync.sent_ops") sentBytes += JSON.stringify(value).length;
        await store.set(key, value);
      },
    };
    const context: PushContext = {
      api: new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => "test-token", fetch: server.fetch }),
      installationId: INSTALLATION_ID,
      store: counting,
      retry: retryOptions({ sleep: async () => {}, backoff: { maxAttempts: 1 } }),
      newId,
      emit: () => {},
      bounds: { maxOps: 10, maxBodyBytes: 1_000_000 },
    };
    await expect(pushOps(context, ops)).rejects.toMatchObject({ code: "NETWORK" });
    // 39 batches answered: rewriting the whole list after each wrote about 10 times the ops' bytes.
    expect(answeredBytes).toBeLessThan(2 * JSON.stringify(ops).length);
    expect(sentBytes).toBeLessThan(2 * JSON.stringify(ops).length);
    expect(await pushedOps(store)).toEqual(ops);
    expect(await unansweredOps(store)).toEqual(ops.slice(390));
    server.script = null;
    expect(await pushOps(context, [])).toMatchObject({ applied: 10 });
    expect(await pushedOps(store)).toEqual([]);
  });
});
