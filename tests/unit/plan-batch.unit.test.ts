// planBatch (functions/api/sync/plan-batch.ts): how a batch is decided in
// memory between the store's one read (as the caller, under RLS) and its one
// write: the order of the checks, the chaining of ops on one record, and the
// write groups app_private.sync_apply receives.
import { describe, expect, it } from "vitest";
import { type BatchState, keyParts, planBatch, recordKey, rejection } from "../../functions/api/sync/plan-batch.ts";
import type { ServerRecord } from "../../functions/_shared/merge.ts";
import { jsonbTextBytes, plainNumber, recordDataBytes } from "../../functions/_shared/record-size.ts";
import type { SyncOp } from "../../functions/_shared/schemas/sync.ts";
import { toStorable } from "../../functions/_shared/storable-text.ts";
import { MAX_OP_ERROR_BYTES } from "../../functions/_shared/sync-ledger.generated.ts";
import { validationMessage } from "../../functions/_shared/validation-details.ts";

const NOW = "2026-11-22T01:00:00.000000Z";
const LIMITS = { max_record_data_bytes: 300, max_live_records_per_user: 3 };
const DEVICE = "dddddddd-0000-4000-8000-000000000001";
let counter = 0;
const uuid = () => `00000000-0000-4000-8000-${String(++counter).padStart(12, "0")}`;
const LIST = uuid();

function op(partial: Partial<SyncOp> & Pick<SyncOp, "record_id">): SyncOp {
  return { op_id: uuid(), collection: "tasks", type: "upsert", base_version: null, ...partial };
}
const create = (id: string, data: Record<string, unknown> = {}) => op({ record_id: id, data: { list_id: LIST, title: "t", ...data } });
const del = (id: string, collection = "tasks", base: number | null = null) => op({ record_id: id, collection, type: "delete", base_version: base });

function record(collection: string, id: string, version: number, data: Record<string, unknown> | null, device: string | null = null): ServerRecord {
  const fields = data === null ? ["*"] : Object.keys(data);
  return {
    collection, id, version, deleted: data === null, data,
    field_versions: Object.fromEntries(fields.map((f) => [f, { v: version, d: device }])),
    created_at: NOW, updated_at: NOW, deleted_at: data === null ? NOW : null,
  };
}

/** The caller sees (and may write) their list LIST, plus `records`. */
function state(records: ServerRecord[] = [], partial: Partial<BatchState> = {}): BatchState {
  const all = [record("lists", LIST, 5, { title: "L" }), ...records];
  return {
    liveRecords: 0,
    ledger: new Map(),
    records: new Map(all.map((r) => [recordKey(r.collection, r.id), r])),
    writable: new Set(all.map((r) => recordKey(r.collection, r.id))),
    ...partial,
  };
}

const statuses = (plan: ReturnType<typeof planBatch>) => plan.ops.map((p) => p.result.status);

describe("planBatch", () => {
  it("chains ops on one record and writes it once, in its final state; rejected ops write nothing but are logged", () => {
    const id = uuid();
    const plan = planBatch([
      create(id, { title: "a" }),
      op({ record_id: uuid(), collection: "nope" }),
      op({ record_id: id, data: { done: true } }),
      create(uuid(), { title: "x".repeat(201) }),
    ], DEVICE, state(), LIMITS, NOW);
    expect(statuses(plan)).toEqual(["applied", "rejected", "applied", "rejected"]);
    expect(plan.groups).toEqual([{ collection: "tasks", kind: "insert", columns: ["done", "list_id", "title"], rows: [{ id, list_id: LIST, title: "a", done: true }] }]);
    expect(plan.ops.map((p) => p.writes)).toEqual([recordKey("tasks", id), undefined, recordKey("tasks", id), undefined]);
    expect(plan.ops.every((p) => p.logged)).toBe(true);
    expect(plan.ops[3].result.error).toMatchObject({ code: "VALIDATION_FAILED", details: [{ field: "/ops/3/data/title", code: "too_long" }] });
  });

  it("updates only the columns whose value changes; an unchanged patch writes nothing", () => {
    const id = uuid();
    const current = record("tasks", id, 7, { list_id: LIST, title: "same", done: false }, DEVICE);
    const plan = planBatch([op({ record_id: id, base_version: 7, data: { title: "same", done: true } })], DEVICE, state([current]), LIMITS, NOW);
    expect(plan.groups).toEqual([{ collection: "tasks", kind: "update", columns: ["done"], rows: [{ id, done: true }] }]);
    const noop = planBatch([op({ record_id: id, base_version: 7, data: { title: "same" } })], DEVICE, state([current]), LIMITS, NOW);
    expect(statuses(noop)).toEqual(["applied"]);
    expect(noop.groups).toEqual([]);
  });

  it("sends the edits of a table as one update group, each row with only the columns it changes", () => {
    const [a, b, c] = [uuid(), uuid(), uuid()];
    const current = [a, b, c].map((id) => record("tasks", id, 7, { list_id: LIST, title: "old", done: false, notes: null }, DEVICE));
    const plan = planBatch([
      op({ record_id: a, base_version: 7, data: { title: "new" } }),
      op({ record_id: b, base_version: 7, data: { done: true } }),
      op({ record_id: c, base_version: 7, data: { title: "old", notes: "n", done: true } }),
    ], DEVICE, state(current), LIMITS, NOW);
    expect(statuses(plan)).toEqual(["applied", "applied", "applied"]);
    expect(plan.groups).toEqual([{
      collection: "tasks",
      kind: "update",
      columns: ["done", "notes", "title"],
      rows: [{ id: a, title: "new" }, { id: b, done: true }, { id: c, notes: "n", done: true }],
    }]);
  });

  it("answers a known op_id as duplicate with the original outcome and the current record, and does not log it again", () => {
    const id = uuid();
    const current = record("tasks", id, 9, { list_id: LIST, title: "now" });
    const known = op({ record_id: id });
    const error = { code: "QUOTA_EXCEEDED" as const, message: "full" };
    const plan = planBatch([known], DEVICE, state([current], { ledger: new Map([[known.op_id, { collection: "tasks", record_id: id, status: "rejected", version: null, error }]]) }), LIMITS, NOW);
    expect(plan.ops[0].result).toEqual({
      op_id: known.op_id, status: "duplicate", original_status: "rejected", error,
      record: { collection: "tasks", id, version: 9, deleted: false, data: current.data, updated_at: NOW },
    });
    expect(plan.ops[0].logged).toBe(false);
    expect(plan.groups).toEqual([]);
  });

  it("rejects an op_id the ledger holds for another record (op_id_reused), without logging it; an unknown collection is stored as null", () => {
    const [id, other] = [uuid(), uuid()];
    const current = record("tasks", id, 9, { list_id: LIST, title: "now" });
    const known = op({ record_id: other });
    const unknown = op({ record_id: id, collection: "nope" });
    const ledger = new Map([
      [known.op_id, { collection: "tasks", record_id: other, status: "applied" as const, version: 7, error: null }],
      [unknown.op_id, { collection: null, record_id: id.toUpperCase(), status: "rejected" as const, version: null, error: { code: "VALIDATION_FAILED" as const, message: "unknown collection" } }],
    ]);
    const plan = planBatch([
      { ...known, record_id: id, base_version: 9, data: { title: "x" } },
      { ...known, collection: "lists", data: { title: "x" } },
      unknown,
      { ...unknown, collection: "tasks", data: { title: "x" } },
    ], DEVICE, state([current], { ledger }), LIMITS, NOW);
    expect(plan.ops.map((p) => [p.result.status, p.result.error?.details?.[0]?.code])).toEqual([
      ["rejected", "op_id_reused"], ["rejected", "op_id_reused"], ["duplicate", undefined], ["rejected", "op_id_reused"],
    ]);
    expect(plan.ops[0].result).toMatchObject({ record: { id, version: 9 }, error: { details: [{ field: "/ops/0/op_id" }] } });
    expect(plan.ops.every((p) => !p.logged)).toBe(true);
    expect(plan.groups).toEqual([]);
  });

  it("a delete, or a change with a base_version, of a record the caller cannot see is NOT_FOUND; a delete of a never-seen id writes no tombstone", () => {
    const plan = planBatch([del(uuid()), del(uuid(), "lists"), op({ record_id: uuid(), base_version: 3, data: { title: "x" } })], DEVICE, state(), LIMITS, NOW);
    expect(plan.ops.map((p) => [p.result.status, p.result.error?.code, p.result.error?.details?.[0].field])).toEqual([
      ["rejected", "NOT_FOUND", "/ops/0/record_id"], ["rejected", "NOT_FOUND", "/ops/1/record_id"], ["rejected", "NOT_FOUND", "/ops/2/record_id"],
    ]);
    expect(plan.groups).toEqual([]);
    expect(plan.written.size).toBe(0);
  });

  it("a record created and deleted in the same batch is never written", () => {
    const id = uuid();
    const plan = planBatch([create(id), del(id)], DEVICE, state(), LIMITS, NOW);
    expect(statuses(plan)).toEqual(["applied", "applied"]);
    expect(plan.groups).toEqual([]);
  });

  it("a record created and deleted again is tried: inserted in its last live state, and deleted, where the write would have written it, for the database to judge", () => {
    const [id, list, inList, kept] = [uuid(), uuid(), uuid(), uuid()];
    const plan = planBatch([
      create(kept, { title: "kept" }),
      create(id, { title: "a" }), op({ record_id: id, data: { title: "b" } }), del(id),
      op({ record_id: list, collection: "lists", data: { title: "N" } }), create(inList, { list_id: list }), del(inList),
    ], DEVICE, state(), LIMITS, NOW);
    expect(statuses(plan)).toEqual(Array(7).fill("applied"));
    expect(plan.groups.map((g) => [g.kind, g.collection, g.rows.map((r) => r.id)])).toEqual([["insert", "lists", [list]], ["insert", "tasks", [kept]]]);
    expect(plan.neverStored!.keys).toEqual(new Set([recordKey("tasks", id), recordKey("tasks", inList)]));
    // The batch's own list first, then the tasks, each as it stood before its delete; then their deletes.
    expect(plan.neverStored!.groups).toEqual([
      { collection: "lists", kind: "insert", columns: ["title"], rows: [{ id: list, title: "N" }] },
      { collection: "tasks", kind: "insert", columns: ["list_id", "title"], rows: [{ id: kept, list_id: LIST, title: "kept" }, { id, list_id: LIST, title: "b" }, { id: inList, list_id: list, title: "t" }] },
      { collection: "tasks", kind: "delete", columns: [], rows: [{ id }, { id: inList }] },
    ]);
  });

  it("a task created in a list the batch then deletes is tried, its delete left to the list's cascade; a batch that stores every record it creates tries nothing", () => {
    const id = uuid();
    const plan = planBatch([create(id), del(LIST, "lists", 5)], DEVICE, state(), LIMITS, NOW);
    expect(plan.groups.map((g) => [g.kind, g.collection])).toEqual([["delete", "lists"]]);
    expect(plan.neverStored).toEqual({ keys: new Set([recordKey("tasks", id)]), groups: [
      { collection: "tasks", kind: "insert", columns: ["list_id", "title"], rows: [{ id, list_id: LIST, title: "t" }] },
      { collection: "lists", kind: "delete", columns: [], rows: [{ id: LIST }] },
    ] });
    expect(planBatch([create(uuid()), del(uuid())], DEVICE, state(), LIMITS, NOW).neverStored).toBeUndefined();
  });

  it("a visible row the caller may not lock: a change is FORBIDDEN, with the current record, a delete is the database's to allow; a scope the caller cannot see is NOT_FOUND", () => {
    const id = uuid();
    const current = record("tasks", id, 4, { list_id: LIST, title: "read only" });
    const readOnly = state([current]);
    readOnly.writable.delete(recordKey("tasks", id));
    const plan = planBatch([
      op({ record_id: id, base_version: 4, data: { done: true } }),
      del(id, "tasks", 4),
      create(uuid(), { list_id: uuid() }),
    ], DEVICE, readOnly, LIMITS, NOW);
    expect(plan.ops.map((p) => [p.result.status, p.result.error?.code])).toEqual([["rejected", "FORBIDDEN"], ["applied", undefined], ["rejected", "NOT_FOUND"]]);
    expect(plan.ops[0].result.record).toMatchObject({ id, version: 4 });
    expect(plan.ops[2].result.error!.details).toEqual([expect.objectContaining({ field: "/ops/2/data/list_id", code: "not_found" })]);
    // (the table's DELETE policy decides it: a member may delete their own membership, not change it)
    expect(plan.groups.map((g) => [g.kind, g.collection, g.rows.map((r) => r.id)])).toEqual([["delete", "tasks", [id]]]);
  });

  it("a delete of a row the caller could not lock names the row version read (so the database deletes only that version); one of a locked row, or a member leaving, names none", () => {
    const [unlocked, locked, membership] = [uuid(), uuid(), uuid()];
    const rows = [
      record("tasks", unlocked, 4, { list_id: LIST, title: "theirs" }),
      record("tasks", locked, 4, { list_id: LIST, title: "mine" }),
      record("list_members", membership, 6, { list_id: LIST, user_id: uuid(), role: "editor" }),
    ];
    const read = state(rows, { rowVersions: new Map(rows.map((r, i) => [recordKey(r.collection, r.id), String(900 + i)])) });
    read.writable.delete(recordKey("tasks", unlocked));
    read.writable.delete(recordKey("list_members", membership));
    const plan = planBatch([del(unlocked, "tasks", 4), del(locked, "tasks", 4), del(membership, "list_members", 2)], DEVICE, read, LIMITS, NOW);
    expect(statuses(plan)).toEqual(["applied", "applied", "applied"]);
    expect(plan.groups.map((g) => [g.collection, g.kind, g.rows])).toEqual([
      ["tasks", "delete", [{ id: unlocked, xmin: "900" }, { id: locked }]],
      ["list_members", "delete", [{ id: membership }]],
    ]);
  });

  it("a create in a table users may not insert into (list_members: members join through invites) is FORBIDDEN, whatever its data; its role may change", () => {
    const member = uuid();
    const plan = planBatch([
      op({ record_id: uuid(), collection: "list_members", data: { list_id: LIST, user_id: uuid(), role: "editor" } }),
      op({ record_id: uuid(), collection: "list_members", data: {} }),
      op({ record_id: member, collection: "list_members", data: { role: "viewer" }, base_version: 7 }),
    ], DEVICE, state([record("list_members", member, 7, { list_id: LIST, user_id: uuid(), role: "editor" })]), LIMITS, NOW);
    expect(plan.ops.map((p) => [p.result.status, p.result.error?.code, p.result.error?.message])).toEqual([
      ["rejected", "FORBIDDEN", "you may not create records in this collection"],
      ["rejected", "FORBIDDEN", "you may not create records in this collection"],
      ["applied", undefined, undefined],
    ]);
    expect(plan.groups.map((g) => [g.kind, g.collection])).toEqual([["update", "list_members"]]);
  });

  it("a scope delete the database refused when the batch was first written is rejected so, planned again, and the ops in that scope go on", () => {
    const t = uuid();
    const refused = rejection("FORBIDDEN", "you may not delete this record");
    const plan = planBatch([del(LIST, "lists", 5), create(t)], DEVICE, state([], {
      refusedDeletes: (key) => (key === recordKey("lists", LIST) ? refused : undefined),
    }), LIMITS, NOW);
    expect(plan.ops.map((p) => [p.result.status, p.result.error?.code])).toEqual([["rejected", "FORBIDDEN"], ["applied", undefined]]);
    expect(plan.ops[0].result.record).toMatchObject({ id: LIST, deleted: false });
    expect(plan.groups.map((g) => `${g.kind} ${g.collection}`)).toEqual(["insert tasks"]);
  });

  it("orders the writes: scopes are created before the rows in them and deleted after them", () => {
    const [list, t, oldTask, other] = [uuid(), uuid(), uuid(), uuid()];
    const current = record("tasks", oldTask, 6, { list_id: other, title: "old" });
    const plan = planBatch([
      del(oldTask, "tasks", 6),
      del(other, "lists", 4),
      op({ record_id: list, collection: "lists", data: { title: "new" } }),
      create(t, { list_id: list }),
    ], DEVICE, state([current, record("lists", other, 4, { title: "O" })]), LIMITS, NOW);
    expect(statuses(plan)).toEqual(["applied", "applied", "applied", "applied"]);
    // (the task deleted before its list's delete is that delete's cascade's: see below)
    expect(plan.groups.map((g) => `${g.kind} ${g.collection}`)).toEqual(["insert lists", "insert tasks", "delete lists"]);
    const elsewhere = planBatch([del(oldTask, "tasks", 6), op({ record_id: list, collection: "lists", data: { title: "new" } }), create(t, { list_id: list })],
      DEVICE, state([current, record("lists", other, 4, { title: "O" })]), LIMITS, NOW);
    // (a task's delete, of rows no synced table refers to, runs first: what it frees is free for the creates)
    expect(elsewhere.groups.map((g) => `${g.kind} ${g.collection}`)).toEqual(["delete tasks", "insert lists", "insert tasks"]);
  });

  it("keeps the batch's order where the database may judge a row by another: a unique value freed, then taken; a list created, then a task moved into it after an edit of its own", () => {
    const [gone, renamed, taken, moved, list] = [uuid(), uuid(), uuid(), uuid(), uuid()];
    const rows = [record("tasks", gone, 3, { list_id: LIST, title: "Milk" }), record("tasks", renamed, 3, { list_id: LIST, title: "a" }),
      record("tasks", moved, 3, { list_id: LIST, title: "m" })];
    const plan = planBatch([
      del(gone, "tasks", 3),
      op({ record_id: renamed, base_version: 3, data: { title: "b" } }),
      create(taken, { title: "Milk" }),
      op({ record_id: moved, base_version: 3, data: { title: "moved" } }),
      op({ record_id: list, collection: "lists", data: { title: "new" } }),
      op({ record_id: moved, base_version: 3, data: { list_id: list } }),
    ], DEVICE, state(rows), { ...LIMITS, max_live_records_per_user: 10 }, NOW);
    expect(statuses(plan)).toEqual(Array(6).fill("applied"));
    // The task's delete first (the new task may take the name it freed); the creates, the list
    // first; then the table's edits in one statement, since one of them came after a create (the
    // move into the new list, with the title set before it).
    expect(plan.groups.map((g) => `${g.kind} ${g.collection} ${g.rows.map((r) => r.id).join(",")}`)).toEqual([
      `delete tasks ${gone}`, `insert lists ${list}`, `insert tasks ${taken}`, `update tasks ${renamed},${moved}`,
    ]);
    // A table whose edits all came before the batch's first create has them written before the creates.
    const renamedFirst = planBatch([op({ record_id: renamed, base_version: 3, data: { title: "b" } }), create(taken, { title: "a" })],
      DEVICE, state(rows), { ...LIMITS, max_live_records_per_user: 10 }, NOW);
    expect(renamedFirst.groups.map((g) => `${g.kind} ${g.collection}`)).toEqual(["update tasks", "insert tasks"]);
  });

  it("still writes a table's creates in one statement and its edits in another, however the batch interleaves them", () => {
    const edited = Array.from({ length: 4 }, () => uuid());
    const created = Array.from({ length: 4 }, () => uuid());
    const ops = edited.flatMap((id, i) => [create(created[i]), op({ record_id: id, base_version: 3, data: { done: true } })]);
    const plan = planBatch(ops, DEVICE, state(edited.map((id) => record("tasks", id, 3, { list_id: LIST, title: "t", done: false }))),
      { ...LIMITS, max_live_records_per_user: 20 }, NOW);
    expect(plan.groups.map((g) => [g.kind, g.rows.map((r) => r.id)])).toEqual([["insert", created], ["update", edited]]);
  });

  it("a row deleted before its scope's delete in one batch is left to the cascade (a co-owner leaving, then deleting the list)", () => {
    const member = uuid();
    const plan = planBatch([del(member, "list_members", 6), del(LIST, "lists", 5)],
      DEVICE, state([record("list_members", member, 6, { list_id: LIST, user_id: uuid(), role: "owner" })]), LIMITS, NOW);
    expect(statuses(plan)).toEqual(["applied", "applied"]);
    expect(plan.groups).toEqual([{ collection: "lists", kind: "delete", columns: [], rows: [{ id: LIST }] }]);
    expect(plan.ops.map((p) => p.writes)).toEqual([recordKey("list_members", member), recordKey("lists", LIST)]);
  });

  it("a scope delete takes the rows in it with it: later ops on them are ops on a deleted record, their rows the cascade's", () => {
    const [task, member, edited, movedIn, elsewhere] = [uuid(), uuid(), uuid(), uuid(), uuid()];
    const other = record("lists", elsewhere, 4, { title: "O" });
    const rows = [
      record("tasks", task, 6, { list_id: LIST, title: "t" }),
      record("list_members", member, 6, { list_id: LIST, user_id: uuid(), role: "owner" }),
      record("tasks", edited, 6, { list_id: LIST, title: "e" }),
      record("tasks", movedIn, 6, { list_id: elsewhere, title: "m" }),
    ];
    const plan = planBatch([
      op({ record_id: edited, base_version: 6, data: { title: "E" } }),
      op({ record_id: movedIn, base_version: 6, data: { list_id: LIST } }),
      del(LIST, "lists", 5),
      del(member, "list_members", 6), // a co-owner leaving the list they just deleted
      op({ record_id: member, collection: "list_members", base_version: 6, data: { role: "editor" } }),
      op({ record_id: task, base_version: 6, data: { done: true } }),
      del(task, "tasks", 6),
    ], DEVICE, state([other, ...rows]), LIMITS, NOW);
    expect(statuses(plan)).toEqual(["applied", "applied", "applied", "applied", "conflict", "conflict", "applied"]);
    expect(plan.ops[4].result).toMatchObject({ conflicting_fields: ["*"], record: { deleted: true, data: null } });
    // Only the list's delete and the task moved into it: the database holds the others in the list,
    // and its cascade deletes them, after nothing of the caller's access has changed.
    expect(plan.groups.map((g) => `${g.kind} ${g.collection} ${g.rows.map((r) => r.id).join(",")}`)).toEqual([
      `delete tasks ${movedIn}`, `delete lists ${LIST}`,
    ]);
    // Every op is answered with its record as the write leaves it (read back).
    expect(plan.ops.map((p) => p.writes)).toEqual([
      recordKey("tasks", edited), recordKey("tasks", movedIn), recordKey("lists", LIST), recordKey("list_members", member),
      recordKey("list_members", member), recordKey("tasks", task), recordKey("tasks", task),
    ]);
  });

  it("a row deleted and re-created is deleted, then inserted from the patch, with the writes after it in a later phase", () => {
    const [moved, added, other] = [uuid(), uuid(), uuid()];
    const current = record("tasks", moved, 6, { list_id: LIST, title: "moved", notes: "n" });
    const elsewhere = record("lists", other, 4, { title: "O" });
    const plan = planBatch([
      op({ record_id: moved, base_version: 6, data: { list_id: other } }),
      del(LIST, "lists", 5),
      op({ record_id: LIST, collection: "lists", data: { title: "L" } }),
      create(added),
    ], DEVICE, state([current, elsewhere]), LIMITS, NOW);
    expect(statuses(plan)).toEqual(["applied", "applied", "applied", "applied"]);
    // The task leaves the list before the list's delete (whose cascade would take it); the new
    // list (same data as the old: still deleted and inserted) exists before the task added to it.
    expect(plan.groups.map((g) => `${g.kind} ${g.collection} ${g.rows.map((r) => r.id).join(",")}`)).toEqual([
      `update tasks ${moved}`, `delete lists ${LIST}`, `insert lists ${LIST}`, `insert tasks ${added}`,
    ]);
    expect(plan.groups[2]).toMatchObject({ columns: ["title"], rows: [{ id: LIST, title: "L" }] });
    expect(plan.ops.map((p) => p.phase)).toEqual([0, 0, 1, 1]);
    expect(plan.phasesOf).toEqual(new Map([[recordKey("lists", LIST), [{ phase: 0, kind: "delete" }, { phase: 1, kind: "insert" }]]]));
  });

  it("a row re-created twice, or deleted again, needs no more phases than the database's row does", () => {
    const id = uuid();
    const current = record("tasks", id, 6, { list_id: LIST, title: "t", done: true });
    const twice = planBatch([del(id, "tasks", 6), create(id, { title: "a" }), del(id), create(id, { title: "b" })], DEVICE, state([current]), LIMITS, NOW);
    expect(twice.groups).toEqual([
      { collection: "tasks", kind: "delete", columns: [], rows: [{ id }] },
      { collection: "tasks", kind: "insert", columns: ["list_id", "title"], rows: [{ id, list_id: LIST, title: "b" }] },
    ]);
    const gone = planBatch([del(id, "tasks", 6), create(id, { title: "a" }), del(id)], DEVICE, state([current]), LIMITS, NOW);
    expect(gone.groups).toEqual([{ collection: "tasks", kind: "delete", columns: [], rows: [{ id }] }]);
    expect(gone.phasesOf.size).toBe(0);
    // (A row of it is written, the delete: the database judges the ops before the re-creation.)
    expect(gone.neverStored).toBeUndefined();
  });

  it("counts live records for the quota: creates add, deletes free, updates are neutral", () => {
    const [a, b, c, d] = [uuid(), uuid(), uuid(), uuid()];
    const plan = planBatch([
      create(a), create(b), op({ record_id: a, data: { done: true } }),
      create(c), create(d),
      del(b), create(d),
    ], DEVICE, state([], { liveRecords: 1 }), LIMITS, NOW);
    expect(statuses(plan)).toEqual(["applied", "applied", "applied", "rejected", "rejected", "applied", "applied"]);
    expect(plan.ops[3].result.error!.code).toBe("QUOTA_EXCEEDED");
  });

  it("rejects data over the size limit, measured on the merged record", () => {
    const id = uuid();
    const plan = planBatch([create(id, { notes: "n".repeat(150) }), op({ record_id: id, data: { title: "t".repeat(150) } })], DEVICE, state(), LIMITS, NOW);
    expect(statuses(plan)).toEqual(["applied", "rejected"]);
    expect(plan.ops[1].result.error).toMatchObject({ code: "PAYLOAD_TOO_LARGE", details: [{ field: "/ops/1/data", code: "too_large" }] });
    expect(plan.groups[0].rows).toEqual([{ id, list_id: LIST, title: "t", notes: "n".repeat(150) }]);
  });

  it("bounds a rejection's details in count and size, however many keys the op carries", () => {
    const keys = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`.padEnd(400, "x"), 0]));
    const plan = planBatch([create(uuid(), keys)], DEVICE, state(), LIMITS, NOW);
    const error = plan.ops[0].result.error!;
    expect(error.message).toBe("5000 fields are invalid");
    expect(error.details).toHaveLength(20);
    for (const detail of error.details!) expect(detail.field.length).toBeLessThanOrEqual(256);
  });

  it("keeps a rejection within the ledger's bound in bytes, whatever characters the key names hold", () => {
    for (const unit of ["€", '"', "\\", "\u{1F600}", "x\u{1F600}", "\u0001"]) {
      const keys = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [unit.repeat(300) + i, 0]));
      const error = planBatch([create(uuid(), keys)], DEVICE, state(), LIMITS, NOW).ops[0].result.error!;
      expect(error.message).toBe("20 fields are invalid");
      expect(error.details!.length).toBeGreaterThan(0);
      expect(jsonbTextBytes(error)).toBeLessThanOrEqual(MAX_OP_ERROR_BYTES);
      // Cut to 256 UTF-16 units, never through an emoji (a lone surrogate, which jsonb refuses).
      for (const detail of error.details!) expect(toStorable(detail.field)).toBe(detail.field);
    }
  });

  it("the ledger's bound holds at least one detail of the longest pointer and message in the costliest characters", () => {
    // Escaped as \u0001, a character is 6 bytes of JSON text: a lower bound in the database's
    // check would leave rejections without any detail.
    const costly = "\u0001".repeat(1000);
    const error = rejection("VALIDATION_FAILED", validationMessage(1_000_000), [{ field: costly, code: "unexpected_field", message: costly }]);
    expect(error.details).toHaveLength(1);
  });

  it("a field another device changed after the op's base conflicts; the op's own device never conflicts with itself", () => {
    const id = uuid();
    const current = record("tasks", id, 8, { list_id: LIST, title: "theirs" }, "eeeeeeee-0000-4000-8000-000000000002");
    current.field_versions.title = { v: 8, d: "eeeeeeee-0000-4000-8000-000000000002" };
    const plan = planBatch([op({ record_id: id, base_version: 6, data: { title: "mine" } })], DEVICE, state([current]), LIMITS, NOW);
    expect(plan.ops[0].result).toMatchObject({ status: "conflict", record: { id, version: 8, data: { title: "theirs" } } });
    expect(plan.groups).toEqual([]);
    const own = planBatch([op({ record_id: id, base_version: 6, data: { title: "mine" } })], "eeeeeeee-0000-4000-8000-000000000002", state([current]), LIMITS, NOW);
    expect(own.ops[0].result.status).toBe("applied");
  });
});

describe("planBatch on a tombstone", () => {
  it("a change based on a version from before another device's delete conflicts with the tombstone, whatever its data", () => {
    const id = uuid();
    const tombstone = record("tasks", id, 12, null, "eeeeeeee-0000-4000-8000-000000000002");
    // { done: true } alone could not create the row: the conflict is found first, so the client learns of the delete.
    const plan = planBatch([op({ record_id: id, base_version: 10, data: { done: true } })], DEVICE, state([tombstone]), LIMITS, NOW);
    expect(plan.ops[0].result).toMatchObject({ status: "conflict", record: { id, version: 12, deleted: true, data: null } });
    expect(plan.groups).toEqual([]);
    // Based on the tombstone itself, the same op is judged as a new row's data.
    const rebased = planBatch([op({ record_id: id, base_version: 12, data: { done: true } })], DEVICE, state([tombstone]), LIMITS, NOW);
    expect(rebased.ops[0].result).toMatchObject({ status: "rejected", error: { code: "VALIDATION_FAILED" } });
  });
});

describe("recordKey", () => {
  it("names a record by collection and lowercase id, and keyParts reads both back (the push reads written rows back by them)", () => {
    const id = "0A1B2C3D-0000-4000-8000-00000000ABCD";
    expect(recordKey("tasks", id)).toBe(`tasks/${id.toLowerCase()}`);
    expect(keyParts(recordKey("list_members", id))).toEqual({ collection: "list_members", id: id.toLowerCase() });
  });
});

describe("record and ledger sizes", () => {
  it("recordDataBytes measures the data's compact UTF-8 JSON, as api-v1.md's limit says", () => {
    expect(recordDataBytes({})).toBe(2);
    expect(recordDataBytes({ a: 1, b: [true, null] })).toBe('{"a":1,"b":[true,null]}'.length);
    expect(recordDataBytes({ big: 1e21, small: 1.5e-7 })).toBe('{"big":1e+21,"small":1.5e-7}'.length);
    expect(recordDataBytes({ é: "€" })).toBe(new TextEncoder().encode('{"é":"€"}').byteLength);
    expect(recordDataBytes({ ß: "😀 x\u{10FFFF}" })).toBe(new TextEncoder().encode('{"ß":"😀 x\u{10FFFF}"}').byteLength);
    expect(recordDataBytes({ lone: "\uD800" })).toBe('{"lone":"\\ud800"}'.length);
    // each UTF-8 length's first and last code point (1, 2, 3 and 4 bytes)
    for (const text of ["\u007F", "\u0080", "\u07FF", "\u0800", "\uFFFF", "\u{10000}", "\u{10FFFF}"]) {
      expect(recordDataBytes({ t: text }), `U+${text.codePointAt(0)!.toString(16)}`).toBe(Buffer.byteLength(JSON.stringify({ t: text })));
    }
    expect(recordDataBytes({ q: 'say "hi"\n' })).toBe('{"q":"say \\"hi\\"\\n"}'.length);
    // Less the fields only the server writes, as if the object had none of them.
    const server = new Set(["created_by", "created_at"]);
    expect(recordDataBytes({ created_by: "u", a: 1, created_at: "t", b: "é" }, server)).toBe(new TextEncoder().encode('{"a":1,"b":"é"}').byteLength);
    expect(recordDataBytes({ created_by: "u" }, server)).toBe(2);
  });

  it("jsonbTextBytes measures Postgres' jsonb text (the ledger's bound on an error): spaced separators, plain-notation numbers, UTF-8", () => {
    expect(jsonbTextBytes({})).toBe(2);
    expect(jsonbTextBytes({ a: 1, b: [true, null] })).toBe('{"a": 1, "b": [true, null]}'.length);
    expect(jsonbTextBytes({ big: 1e21 })).toBe('{"big": 1000000000000000000000}'.length);
    expect(jsonbTextBytes({ é: "€" })).toBe(new TextEncoder().encode('{"é": "€"}').byteLength);
    expect(jsonbTextBytes({ lone: "\uD800" })).toBe('{"lone": "\\ud800"}'.length);
  });

  it("writes numbers as Postgres' numeric prints them", () => {
    expect(plainNumber(1e21)).toBe("1000000000000000000000");
    expect(plainNumber(1.5e-7)).toBe("0.00000015");
    expect(plainNumber(-2.5e22)).toBe("-25000000000000000000000");
    expect(plainNumber(0.125)).toBe("0.125");
    expect(plainNumber(-0)).toBe("0");
  });
});
