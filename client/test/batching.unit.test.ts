// Byte-aware batching (client/batching.ts): every batch body the cut produces
// is within max_body_bytes and max_ops_per_batch, in order, nothing lost or
// repeated; a client that learned the server's limits from GET /v1/meta never
// sends a body the server must refuse whole (the 9 KB notes × 150 case).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { collectionSchemas } from "../../functions/_shared/collections.ts";
import { DEFAULT_LIMITS } from "../../functions/_shared/limits.ts";
import type { SyncOp } from "../../functions/_shared/schemas/sync.ts";
import { batchBoundsOf, fittingCount, jsonBytes, pullLimitOf, scopeFieldsOf, splitIntoBatches } from "../batching.ts";
import { FakeServer, idSequence, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

const DEVICE = "00000000-0000-4000-8000-0000000000d1";
const ids = idSequence(7);

function noteOp(bytes: number, title = "note"): SyncOp {
  return { op_id: ids(), collection: "tasks", record_id: ids(), type: "upsert", base_version: null, data: { list_id: LIST_ID, title, notes: "é".repeat(bytes / 2) } };
}

const bodyBytes = (ops: SyncOp[]) => jsonBytes({ device_id: DEVICE, ops });

describe("splitIntoBatches", () => {
  it("cuts 150 notes of 9 KB into bodies under 1 MiB, in order", () => {
    const ops = Array.from({ length: 150 }, (_, i) => noteOp(9_000, `n${i}`));
    const bounds = { maxOps: 500, maxBodyBytes: 1_048_576 };
    expect(bodyBytes(ops)).toBeGreaterThan(bounds.maxBodyBytes); // cut by count alone: one batch, refused whole
    const batches = splitIntoBatches(ops, bounds, DEVICE);
    expect(batches.length).toBe(2);
    for (const batch of batches) expect(bodyBytes(batch)).toBeLessThanOrEqual(bounds.maxBodyBytes);
    expect(batches.flat()).toEqual(ops);
  });

  it("keeps every batch within both limits, exactly as sent (property)", () => {
    fc.assert(fc.property(
      fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 0, maxLength: 60 }),
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 200, max: 20_000 }),
      (sizes, maxOps, maxBodyBytes) => {
        const ops = sizes.map((size) => noteOp(size * 2));
        const batches = splitIntoBatches(ops, { maxOps, maxBodyBytes }, DEVICE);
        expect(batches.flat()).toEqual(ops);
        for (const batch of batches) {
          expect(batch.length).toBeGreaterThan(0);
          expect(batch.length).toBeLessThanOrEqual(maxOps);
          // Over the byte limit only as a lone op that is too large by itself.
          if (batch.length > 1) expect(bodyBytes(batch)).toBeLessThanOrEqual(maxBodyBytes);
        }
        // Greedy: the next op would not have fitted.
        for (let i = 0; i + 1 < batches.length; i++) {
          const grown = [...batches[i], batches[i + 1][0]];
          expect(grown.length > maxOps || bodyBytes(grown) > maxBodyBytes).toBe(true);
        }
      },
    ));
  });

  it("sends an op too large even alone on its own", () => {
    const ops = [noteOp(100), noteOp(5_000), noteOp(100)];
    expect(splitIntoBatches(ops, { maxOps: 10, maxBodyBytes: 1_000 }).map((b) => b.length)).toEqual([1, 1, 1]);
    expect(fittingCount([], { maxOps: 10, maxBodyBytes: 1_000 })).toBe(0);
  });
});

describe("a list's delete after an op that puts a record in a list", () => {
  const bounds = batchBoundsOf(DEFAULT_LIMITS, collectionSchemas());
  const [L1, L2, T, M] = [ids(), ids(), ids(), ids()];
  const op = (collection: string, record_id: string, type: "upsert" | "delete", data?: Record<string, unknown>): SyncOp =>
    ({ op_id: ids(), collection, record_id, type, base_version: 1, ...(data ? { data } : {}) });
  const shapes = (batches: SyncOp[][]) => batches.map((batch) => batch.map((o) => `${o.collection} ${o.type}`));

  it("goes in the next batch: a task moved (or created) in the batch is answered first", () => {
    expect(scopeFieldsOf(collectionSchemas())).toMatchObject({ lists: "id", tasks: "list_id", list_members: "list_id" });
    const moved = [op("lists", L2, "upsert", { title: "L2" }), op("tasks", T, "upsert", { title: "t", list_id: L2 }), op("lists", L1, "delete")];
    expect(shapes(splitIntoBatches(moved, bounds, DEVICE))).toEqual([["lists upsert", "tasks upsert"], ["lists delete"]]);
  });

  it("shares the batch of deletes and of edits that move nothing, and leads a batch of its own (no cut when it comes first)", () => {
    const edits = [op("tasks", T, "upsert", { title: "renamed" }), op("lists", L2, "upsert", { title: "L2" }), op("list_members", M, "upsert", { role: "viewer" }), op("lists", L1, "delete")];
    expect(shapes(splitIntoBatches(edits, bounds, DEVICE))).toEqual([["tasks upsert", "lists upsert", "list_members upsert", "lists delete"]]);
    // An owner's delete of their own membership goes with the list's (a batch of its own would leave the list without an owner).
    const owner = [op("tasks", T, "delete"), op("list_members", M, "delete"), op("lists", L1, "delete")];
    expect(shapes(splitIntoBatches(owner, bounds, DEVICE))).toEqual([["tasks delete", "list_members delete", "lists delete"]]);
    const first = [op("lists", L1, "delete"), op("tasks", T, "upsert", { list_id: L2 }), op("lists", L2, "delete")];
    expect(shapes(splitIntoBatches(first, bounds, DEVICE))).toEqual([["lists delete", "tasks upsert"], ["lists delete"]]);
    // Bounds without the collections' scopes (an app's own client on batchBoundsOf(limits)) cut by size only.
    expect(splitIntoBatches(first, batchBoundsOf(DEFAULT_LIMITS), DEVICE)).toHaveLength(1);
  });

  it("takes the deletes right before it along (an owner's own membership's): the cut goes before them", () => {
    // An owner deleting a shared list, children first, after a task created in their own list: their
    // membership's delete in the batch before the list's would be refused (list_members_keep_an_owner).
    const [M2, T2] = [ids(), ids()];
    const ownerAfterCreate = [
      op("tasks", T2, "upsert", { list_id: L2, title: "new" }),
      op("tasks", T, "delete"),
      op("list_members", M, "delete"),
      op("list_members", M2, "delete"),
      op("lists", L1, "delete"),
    ];
    expect(shapes(splitIntoBatches(ownerAfterCreate, bounds, DEVICE))).toEqual([
      ["tasks upsert"],
      ["tasks delete", "list_members delete", "list_members delete", "lists delete"],
    ]);
    // The same when the op count or the body size would cut between them: the run goes on together.
    expect(shapes(splitIntoBatches(ownerAfterCreate.slice(1), { ...bounds, maxOps: 3 }, DEVICE))).toEqual([
      ["tasks delete"],
      ["list_members delete", "list_members delete", "lists delete"],
    ]);
    const [, ...deletes] = ownerAfterCreate;
    const oneEdit = [op("tasks", T2, "upsert", { title: "renamed" }), ...deletes];
    expect(shapes(splitIntoBatches(oneEdit, { ...bounds, maxOps: 4 }, DEVICE))).toEqual([
      ["tasks upsert"],
      ["tasks delete", "list_members delete", "list_members delete", "lists delete"],
    ]);
    // By size the first batch takes the edit and two deletes: the memberships' go on with the list's.
    const bytes = bodyBytes(oneEdit.slice(0, 3));
    expect(shapes(splitIntoBatches(oneEdit, { ...bounds, maxBodyBytes: bytes }, DEVICE))).toEqual([
      ["tasks upsert", "tasks delete"],
      ["list_members delete", "list_members delete", "lists delete"],
    ]);
    // A run longer than a batch can hold is cut where the limits say (each batch at least one op).
    expect(splitIntoBatches(deletes, { ...bounds, maxOps: 2 }, DEVICE).map((batch) => batch.length)).toEqual([2, 2]);
  });

  it("never shares a batch with an earlier op that puts a record in a list; nothing lost or reordered (property)", () => {
    const anOp = fc.record({
      collection: fc.constantFrom("lists", "tasks", "list_members"),
      record: fc.constantFrom(L1, L2, T, M),
      type: fc.constantFrom("upsert" as const, "delete" as const),
      moves: fc.boolean(),
    }).map(({ collection, record, type, moves }) => op(collection, record, type, type === "upsert" ? (moves ? { list_id: L2 } : { title: "x" }) : undefined));
    fc.assert(fc.property(fc.array(anOp, { maxLength: 30 }), fc.integer({ min: 1, max: 8 }), (ops, maxOps) => {
      const batches = splitIntoBatches(ops, { ...bounds, maxOps }, DEVICE);
      expect(batches.flat()).toEqual(ops);
      for (const batch of batches) {
        const firstMove = batch.findIndex((o) => o.collection !== "lists" && o.type === "upsert" && o.data?.list_id !== undefined);
        if (firstMove >= 0) expect(batch.slice(firstMove).some((o) => o.collection === "lists" && o.type === "delete")).toBe(false);
      }
      // A list's delete and the deletes right before it (a run that fits one batch) are never cut apart.
      const batchOf = batches.flatMap((batch, b) => batch.map(() => b));
      ops.forEach((o, j) => {
        if (o.collection !== "lists" || o.type !== "delete") return;
        let from = j;
        while (from > 0 && ops[from - 1].type === "delete") from--;
        if (j - from + 1 <= maxOps) expect(new Set(batchOf.slice(from, j + 1)).size, JSON.stringify(shapes(batches))).toBe(1);
      });
    }));
  });
});

describe("a record's create-style op after its create", () => {
  const bounds = batchBoundsOf(DEFAULT_LIMITS, collectionSchemas());
  const [T, U] = [ids(), ids()];
  const write = (record_id: string, base_version: number | null, data: Record<string, unknown>): SyncOp =>
    ({ op_id: ids(), collection: "tasks", record_id, type: "upsert", base_version, data });

  it("goes in the next batch, after the create's answer: were the create refused, it would be judged a create on its own", () => {
    const created = write(T, null, { list_id: LIST_ID, title: "Call the plumber" });
    const other = write(U, null, { list_id: LIST_ID, title: "Something else" });
    const moved = write(T, null, { list_id: ids() });
    expect(splitIntoBatches([created, other, moved], bounds, DEVICE)).toEqual([[created, other], [moved]]);
    // Edits of a record the device holds (a base version) share the batch, as do other records' creates.
    const edited = write(T, 3, { title: "renamed" });
    expect(splitIntoBatches([write(T, 3, { done: true }), other, edited], bounds, DEVICE)).toHaveLength(1);
    // Without the collections' scopes too (the cut is about the record, not its list).
    expect(splitIntoBatches([created, other, moved], batchBoundsOf(DEFAULT_LIMITS), DEVICE)).toHaveLength(2);
  });

  it("never shares a batch with its record's create; nothing lost or reordered (property)", () => {
    const anOp = fc.record({ record: fc.constantFrom(T, U), based: fc.boolean() })
      .map(({ record, based }) => write(record, based ? 1 : null, { title: "x" }));
    fc.assert(fc.property(fc.array(anOp, { maxLength: 30 }), fc.integer({ min: 1, max: 8 }), (ops, maxOps) => {
      const batches = splitIntoBatches(ops, { ...bounds, maxOps }, DEVICE);
      expect(batches.flat()).toEqual(ops);
      for (const batch of batches) {
        const creates = batch.filter((o) => o.base_version === null).map((o) => o.record_id);
        expect(new Set(creates).size).toBe(creates.length);
      }
    }));
  });
});

describe("the client's batches", () => {
  it("follow max_body_bytes and max_ops_per_batch from GET /v1/meta: no 413 on a device that knows the limits", async () => {
    const server = new FakeServer();
    server.limits = { ...DEFAULT_LIMITS, max_ops_per_batch: 4, max_body_bytes: 40_000 };
    const { client } = await openClient(server);
    await client.refreshSchema();
    for (let i = 0; i < 10; i++) await client.upsert("tasks", ids(), { list_id: LIST_ID, title: `t${i}`, notes: "x".repeat(9_000) });
    await client.sync();
    const sizes = server.batches().map((b) => ({ ops: b.ops.length, bytes: jsonBytes(b) }));
    expect(sizes.every((s) => s.ops <= 4 && s.bytes <= 40_000)).toBe(true);
    expect(sizes.reduce((n, s) => n + s.ops, 0)).toBe(10);
    expect(server.records.size).toBe(10);
  });
});

describe("pullLimitOf", () => {
  it("caps the page size at the published max_pull_limit; no page size stays the server's default", () => {
    expect(pullLimitOf(100, 50)).toBe(50);
    expect(pullLimitOf(20, 50)).toBe(20);
    expect(pullLimitOf(undefined, 50)).toBeUndefined();
    expect(pullLimitOf(2000, undefined)).toBe(2000);
  });
});
