// Coalescing of pending ops per record (client/outbox.ts), on its own and
// through the client: what reaches the server after several local writes, and
// in which order (the app's: the server runs a batch's ops in order).
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { enqueueOp, Outbox, outboxChange } from "../outbox.ts";
import { MemoryStorage, type PendingOp, StateMaps } from "../storage.ts";
import { FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";
import { closeSqliteFiles, sqliteFile } from "./sqlite-file.ts";

const REC = "00000000-0000-4000-8000-00000000aaaa";
const OTHER = "00000000-0000-4000-8000-00000000bbbb";

function pending(opId: string, type: "upsert" | "delete", data?: Record<string, unknown>, options: { sent?: boolean; base?: number | null; record?: string } = {}): PendingOp {
  return {
    op: { op_id: opId, collection: "tasks", record_id: options.record ?? REC, type, base_version: options.base === undefined ? 3 : options.base, ...(data ? { data } : {}) },
    sent: options.sent ?? false,
    base_data: null,
  };
}

afterEach(closeSqliteFiles);

describe("enqueueOp", () => {
  it("merges consecutive unsent upserts of a record on one base into one patch (later values win), keeping the first op_id", () => {
    const change = enqueueOp([pending("a", "upsert", { title: "one", done: false })], pending("b", "upsert", { title: "two", notes: "n" }));
    expect(change).toEqual({ putOps: [pending("a", "upsert", { title: "two", done: false, notes: "n" })] });
  });

  it("queues an upsert made on a newer version (a pull brought another device's change meanwhile) as an op of its own: merged, it would be judged on the older base and lose to the change the user had seen", () => {
    const incoming = pending("b", "upsert", { done: false }, { base: 5 });
    expect(enqueueOp([pending("a", "upsert", { title: "one" })], incoming)).toEqual({ putOps: [incoming] });
  });

  it("turns an unsent upsert followed by a delete into one delete", () => {
    const change = enqueueOp([pending("a", "upsert", { title: "one" })], pending("b", "delete"));
    expect(change).toEqual({ putOps: [pending("a", "delete")] });
  });

  it("replaces an unsent upsert by a delete made on a newer version with that delete, on its own base", () => {
    const deletion = pending("b", "delete", undefined, { base: 5 });
    expect(enqueueOp([pending("a", "upsert", { title: "one" })], deletion)).toEqual({ deleteOps: ["a"], putOps: [deletion] });
  });

  it("drops a record created here and deleted before it was ever sent", () => {
    const change = enqueueOp([pending("a", "upsert", { title: "one" }, { base: null })], pending("b", "delete", undefined, { base: null }));
    expect(change).toEqual({ deleteOps: ["a"] });
  });

  it("never coalesces into an op that was already sent", () => {
    const incoming = pending("b", "upsert", { title: "two" });
    expect(enqueueOp([pending("a", "upsert", { title: "one" }, { sent: true })], incoming)).toEqual({ putOps: [incoming] });
    const deletion = pending("c", "delete");
    expect(enqueueOp([pending("a", "upsert", { title: "one" }, { sent: true })], deletion)).toEqual({ putOps: [deletion] });
  });

  it("does not merge an upsert into a pending delete, nor across records", () => {
    const incoming = pending("b", "upsert", { title: "again" });
    expect(enqueueOp([pending("a", "delete")], incoming)).toEqual({ putOps: [incoming] });
    const other = pending("c", "upsert", { title: "x" }, { record: OTHER });
    expect(enqueueOp([pending("a", "upsert", { title: "one" })], other)).toEqual({ putOps: [other] });
  });

  it("queues a write behind another record's later op instead of merging it ahead of that op", () => {
    const outbox = [pending("a", "upsert", { title: "one" }, { base: null }), pending("x", "upsert", { title: "list" }, { base: null, record: OTHER })];
    const edit = pending("b", "upsert", { list_id: OTHER }, { base: null });
    expect(enqueueOp(outbox, edit)).toEqual({ putOps: [edit] });
    // A delete neither takes the record's earlier op's place nor drops it: ops between may need the record.
    const deletion = pending("c", "delete", undefined, { base: null });
    expect(enqueueOp(outbox, deletion)).toEqual({ putOps: [deletion] });
  });
});

describe("outboxChange", () => {
  const stored = (ops: PendingOp[]) => {
    const maps = StateMaps.from({ records: [], outbox: ops, cursor: null });
    return (change: ReturnType<typeof outboxChange>) => {
      maps.apply(change);
      return [...maps.outbox.values()];
    };
  };

  it("moves only the ops behind an op put in the middle (a rebased op in its original's place); appending moves none", () => {
    const [a, b, c, d] = ["a", "b", "c", "d"].map((id) => pending(id, "upsert", { title: id }, { record: OTHER }));
    const rebased = pending("r", "upsert", { done: true });
    // a answered (conflict): its rebased op takes its place, ahead of b, c and d.
    expect(outboxChange([a, b, c, d], [rebased, b, c, d])).toEqual({ deleteOps: ["a", "b", "c", "d"], putOps: [rebased, b, c, d] });
    // b answered: a stays where it is, untouched.
    expect(outboxChange([a, b, c, d], [a, rebased, c, d])).toEqual({ deleteOps: ["b", "c", "d"], putOps: [rebased, c, d] });
    const edited = { ...c, sent: true };
    expect(outboxChange([a, b, c], [a, b, edited, d])).toEqual({ deleteOps: [], putOps: [edited, d] });
  });

  it("leaves a store's outbox exactly as asked: every op, in order (property)", () => {
    const ops = fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 15 }).map((ids) => ids.map((id) => pending(`op${id}`, "upsert", { title: String(id) })));
    fc.assert(fc.property(ops, fc.array(fc.tuple(fc.nat(), fc.constantFrom("keep", "replace", "drop", "new"))), (before, steps) => {
      const after = before.map((p) => p);
      steps.forEach(([at, step], n) => {
        if (after.length === 0 && step !== "new") return;
        const i = at % Math.max(after.length, 1);
        if (step === "replace") after[i] = { ...after[i], sent: !after[i].sent };
        if (step === "drop") after.splice(i, 1);
        if (step === "new") after.splice(at % (after.length + 1), 0, pending(`new${n}`, "upsert", { done: true }));
        if (step === "keep" && after.length > 1) after.push(...after.splice(i, 1)); // moved last
      });
      expect(stored(before)(outboxChange(before, after))).toEqual(after);
    }));
  });
});

describe("the client's outbox", () => {
  it("sends three edits of one record as one op", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server);
    const id = await client.create("tasks", { title: "Buy milk" });
    await client.upsert("tasks", id, { done: true });
    await client.upsert("tasks", id, { title: "Buy oat milk" });
    expect(client.status.pending).toBe(1);
    await client.sync();
    expect(server.batches()).toHaveLength(1);
    expect(server.batches()[0].ops).toEqual([
      { op_id: expect.any(String), collection: "tasks", record_id: id, type: "upsert", base_version: null, data: { title: "Buy oat milk", done: true } },
    ]);
    expect((await client.get("tasks", id))).toMatchObject({ version: 1, pending: false, data: { title: "Buy oat milk", done: true } });
  });

  it("sends a task moved to a list created after it behind that list's create, in the order written", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server);
    const task = await client.create("tasks", { list_id: LIST_ID, title: "Pack" });
    const trip = await client.create("lists", { title: "Trip" });
    await client.upsert("tasks", task, { list_id: trip });
    await client.upsert("tasks", task, { title: "Pack bags" }); // consecutive: merged into the move
    expect((await client.get("tasks", task))?.data).toEqual({ list_id: trip, title: "Pack bags" });

    await client.sync();
    // The move after the task's create's answer (client/batching.ts): an edit of the version it wrote (1).
    expect(server.batches().map((b) => b.ops.map((op) => [op.record_id, op.type, op.base_version, op.data]))).toEqual([
      [[task, "upsert", null, { list_id: LIST_ID, title: "Pack" }], [trip, "upsert", null, { title: "Trip" }]],
      [[task, "upsert", 1, { list_id: trip, title: "Pack bags" }]],
    ]);
    expect(server.records.get(`tasks/${task}`)?.data).toEqual({ list_id: trip, title: "Pack bags" });
    expect(await client.get("tasks", task)).toMatchObject({ pending: false, data: { list_id: trip, title: "Pack bags" } });
  });

  it("sends a list's delete after a task's move out of it, though the list's rename was queued before the move (the delete in a batch of its own)", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server);
    const old = await client.create("lists", { title: "Old" });
    const task = await client.create("tasks", { list_id: old, title: "Keep me" });
    await client.sync();
    await client.upsert("lists", old, { title: "Old (to delete)" });
    await client.upsert("tasks", task, { list_id: LIST_ID });
    await client.delete("lists", old);

    await client.sync();
    // The delete waits for the move's answer: were the move refused, its rebased op would go first.
    expect(server.batches().slice(-2).map((batch) => batch.ops.map((op) => [op.record_id, op.type]))).toEqual([[[old, "upsert"], [task, "upsert"]], [[old, "delete"]]]);
  });

  it("sends an op rebased after a conflict where its original was: a task's move goes before its old list's delete, also after a restart", async () => {
    const server = new FakeServer();
    const open = await sqliteFile();
    const l1 = "00000000-0000-4000-8000-0000000001d1";
    const task = "00000000-0000-4000-8000-00000000aa01";
    server.write("lists", l1, { type: "upsert", data: { title: "L1" } });
    server.write("tasks", task, { type: "upsert", data: { list_id: l1, title: "T" } });
    const { client } = await openClient(server, { storage: open() });
    await client.sync();
    const l2 = await client.create("lists", { title: "L2" });
    await client.upsert("tasks", task, { title: "Keep me (phone)", list_id: l2 });
    await client.delete("lists", l1);
    server.write("tasks", task, { type: "upsert", data: { title: "Renamed (tablet)" } });
    // Every batch after the conflict's is lost on the way: the app restarts with the rebased op sent.
    let batches = 0;
    server.script = (request) => {
      if (request.path === "/v1/sync/batch" && ++batches >= 2) throw new TypeError("connection reset");
      return undefined;
    };
    await expect(client.sync()).rejects.toMatchObject({ code: "NETWORK" });
    const reopened = (await openClient(server, { storage: open(), idPrefix: 2 })).client;
    expect(reopened.pendingOps().map(({ op, sent }) => [op.collection, op.type, op.data ?? null, sent])).toEqual([
      ["tasks", "upsert", { list_id: l2 }, true],
      ["lists", "delete", null, false],
    ]);
    server.script = null;
    const lost = server.batches().length;
    await reopened.sync();
    const shapes = (batches: ReturnType<FakeServer["batches"]>) =>
      batches.map((batch) => batch.ops.map((op) => `${op.collection} ${op.type} ${Object.keys(op.data ?? {}).sort().join(",")}`));
    expect(shapes(server.batches().slice(0, 1))).toEqual([["lists upsert title", "tasks upsert list_id,title"]]);
    // The list's delete in a batch of its own, once the move is answered.
    expect(shapes(server.batches().slice(lost))).toEqual([["tasks upsert list_id"], ["lists delete "]]);
    expect(server.records.get(`tasks/${task}`)?.data).toMatchObject({ list_id: l2, title: "Renamed (tablet)" });
  });

  it("keeps one op per run of edits of a record: an app editing one record all day queues a few ops, not thousands", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server);
    const timer = await client.create("tasks", { list_id: LIST_ID, title: "0" });
    for (let i = 1; i <= 500; i++) await client.upsert("tasks", timer, { title: String(i) });
    const note = await client.create("tasks", { list_id: LIST_ID, title: "note" });
    for (let i = 501; i <= 1000; i++) await client.upsert("tasks", timer, { title: String(i) });
    expect(client.pendingOps().map((p) => [p.op.record_id, p.op.data?.title])).toEqual([[timer, "500"], [note, "note"], [timer, "1000"]]);
  });

  it("keeps the order across a restart: a move written after reopening the store goes behind the list's create", async () => {
    const server = new FakeServer();
    const open = await sqliteFile();
    const before = (await openClient(server, { storage: open() })).client;
    const task = await before.create("tasks", { list_id: LIST_ID, title: "Pack" });
    const trip = await before.create("lists", { title: "Trip" });

    const after = (await openClient(server, { storage: open(), idPrefix: 2 })).client;
    await after.upsert("tasks", task, { list_id: trip });
    await after.upsert("tasks", task, { done: true });
    const third = await openClient(server, { storage: open(), idPrefix: 3 });
    expect(third.client.pendingOps().map((p) => [p.op.record_id, p.op.data])).toEqual([
      [task, { list_id: LIST_ID, title: "Pack" }],
      [trip, { title: "Trip" }],
      [task, { list_id: trip, done: true }],
    ]);
    await third.client.sync();
    expect(server.batches().flatMap((b) => b.ops).map((op) => op.record_id)).toEqual([task, trip, task]);
  });

  it("sends nothing for a record created and deleted while offline", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server);
    const id = await client.create("tasks", { title: "typo" });
    await client.delete("tasks", id);
    expect(client.status.pending).toBe(0);
    expect((await client.get("tasks", id))).toBeUndefined();
    await client.sync();
    expect(server.batches()).toHaveLength(0);
  });

  it("keeps a write made while its record's op is in flight as a separate op with its own op_id", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server);
    const id = await client.create("tasks", { title: "first" });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let writeDone: Promise<void> | null = null;
    server.script = async (request) => {
      if (request.path === "/v1/sync/batch" && writeDone === null) {
        // The app writes while the first batch is on the wire.
        writeDone = client.upsert("tasks", id, { title: "second" });
        await writeDone;
        await gate;
      }
      return undefined;
    };
    const syncing = client.sync();
    await new Promise((r) => setTimeout(r, 10));
    expect(client.pendingOps().map((p) => [p.sent, p.op.data])).toEqual([[true, { title: "first" }], [false, { title: "second" }]]);
    release();
    await syncing;
    await client.sync();
    const sent = server.batches().flatMap((b) => b.ops);
    expect(sent.map((op) => op.data?.title)).toEqual(["first", "second"]);
    expect(new Set(sent.map((op) => op.op_id)).size).toBe(2);
    expect((await client.get("tasks", id))?.data).toEqual({ title: "second" });
    expect(server.records.get(`tasks/${id}`)?.data).toEqual({ title: "second" });
  });

  it("sends a delete made after an in-flight create was answered, though an edit queued behind the create was never sent", async () => {
    const server = new FakeServer();
    // One batch per sync, so the app can write between the create's answer and the edit's push.
    const { client } = await openClient(server, { maxBatchesPerSync: 1, backoff: { baseMs: 1, maxMs: 1, maxAttempts: 1 } });
    const id = await client.create("tasks", { list_id: LIST_ID, title: "created" });
    let answered = 0;
    server.script = async (request) => {
      if (request.path !== "/v1/sync/batch" || answered++ > 0) return undefined;
      // The create reaches the server, its answer is lost, and the app edits meanwhile.
      server.answer(request);
      await client.upsert("tasks", id, { title: "edited" });
      throw new TypeError("connection reset");
    };
    await expect(client.sync()).rejects.toThrow();
    expect(client.pendingOps().map((p) => [p.sent, p.op.base_version])).toEqual([[true, null], [false, null]]);

    await client.sync(); // the create again: duplicate, applied; the edit now builds on what it wrote
    const created = server.records.get(`tasks/${id}`)!;
    expect(client.pendingOps().map((p) => [p.sent, p.op.base_version])).toEqual([[false, created.version]]);

    await client.delete("tasks", id);
    await client.sync();
    expect(server.records.get(`tasks/${id}`)?.deleted).toBe(true);
    expect(await client.get("tasks", id)).toBeUndefined();
  });

  it("refuses a write the collection schema refuses, before queueing it", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server);
    await client.refreshSchema();
    await expect(client.create("tasks", { list_id: LIST_ID, title: "" })).rejects.toMatchObject({ code: "VALIDATION_FAILED", details: [{ field: "/data/title", code: "too_short" }] });
    await expect(client.create("nope", { title: "x" })).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
    expect(client.status.pending).toBe(0);
  });
});

describe("Outbox", () => {
  it("holds the ops as a Map by op_id does (a replaced op keeps its place), each record's in that order, and the last one (property)", () => {
    const records = [REC, OTHER];
    const step = fc.record({ put: fc.boolean(), id: fc.integer({ min: 0, max: 7 }), title: fc.string({ maxLength: 2 }) });
    fc.assert(fc.property(fc.array(step, { maxLength: 300 }), (steps) => {
      const outbox = new Outbox();
      const map = new Map<string, PendingOp>();
      for (const { put, id, title } of steps) {
        const opId = `00000000-0000-4000-8000-00000000000${id}`;
        if (put) {
          const p = pending(opId, "upsert", { title }, { record: records[id % 2] });
          outbox.set(p);
          map.set(opId, p);
        } else {
          expect(outbox.delete(opId)).toBe(map.delete(opId));
        }
        expect([...outbox.values()]).toEqual([...map.values()]);
        expect(outbox.last()).toBe([...map.values()].at(-1));
        for (const record of records) expect(outbox.forRecord("tasks", record)).toEqual([...map.values()].filter((p) => p.op.record_id === record));
      }
      expect(outbox.size).toBe(map.size);
    }));
  });
});

/** A store whose loaded outbox counts every read of its ops' `op`: the work a write does over the ops queued before it. */
class CountingStorage extends MemoryStorage {
  reads = 0;
  constructor(private readonly queued: PendingOp[]) {
    super();
  }

  override async loadState() {
    const state = await super.loadState();
    const count = () => this.reads++;
    return { ...state, outbox: this.queued.map(({ op, sent, base_data }) => ({ get op() {
      count();
      return op;
    }, sent, base_data })) };
  }
}

describe("queueing behind a long outbox", () => {
  it("does not go through the queued ops at each write: 200 writes behind 2,000 queued ops read fewer of them than one pass would", async () => {
    const queued = Array.from({ length: 2_000 }, (_, i) => pending(`00000000-0000-4000-8000-${String(i).padStart(12, "0")}`, "upsert", { title: `t${i}` }, { record: `00000000-0000-4000-9000-${String(i).padStart(12, "0")}`, base: null }));
    const storage = new CountingStorage(queued);
    const { client } = await openClient(new FakeServer(), { storage });
    storage.reads = 0; // opening reads the outbox once
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push(await client.create("tasks", { list_id: LIST_ID, title: `new ${i}` }));
    for (const id of ids) await client.upsert("tasks", id, { done: true });
    // The last queued op is looked at (the first write goes behind it, not into it); scanning the outbox at each write read 1.6 million.
    expect(storage.reads).toBeLessThan(queued.length);
    // Nothing else changed: each record's writes are its own ops, in the order written, the queued ones first.
    const ops = client.pendingOps().map((p) => p.op);
    expect(ops).toHaveLength(2_000 + 200);
    expect(ops.slice(2_000, 2_100).map((op) => op.data?.title)).toEqual(ids.map((_, i) => `new ${i}`));
    expect(ops.slice(2_100).map((op) => [op.record_id, op.data])).toEqual(ids.map((id) => [id, { done: true }]));
    expect(await client.get("tasks", ids[7])).toMatchObject({ data: { list_id: LIST_ID, title: "new 7", done: true }, pending: true });
  });
});
