// refusedResult (functions/api/sync/db-refusal.ts): the answer to an op of a
// record the database refused, judged against the rows as the caller sees them
// after the write. Where the planner has an answer for the same op against
// those rows, it is the planner's (planBatch): one rule, not two.
import { describe, expect, it } from "vitest";
import type { ServerRecord } from "../../functions/_shared/merge.ts";
import type { SyncOp } from "../../functions/_shared/schemas/sync.ts";
import type { CollectionDefinition } from "../../functions/_shared/collections.ts";
import { LIVE_RECORDS_QUOTA_CONSTRAINT, type Refusal, refusalError, refusedResult } from "../../functions/api/sync/db-refusal.ts";
import { MAX_LIVE_RECORDS_PER_USER } from "../../functions/_shared/sync-quota.generated.ts";
import { type PlannedOp, planBatch, recordKey } from "../../functions/api/sync/plan-batch.ts";

const NOW = "2026-11-26T01:00:00.000000Z";
const LIMITS = { max_record_data_bytes: 10_000, max_live_records_per_user: 100 };
const DEVICE = "dddddddd-0000-4000-8000-000000000001";
let counter = 0;
const uuid = () => `00000000-0000-4000-8000-${String(++counter).padStart(12, "0")}`;

function record(collection: string, id: string, version: number, data: Record<string, unknown> | null): ServerRecord {
  return {
    collection, id, version, deleted: data === null, data, field_versions: { "*": { v: version, d: null } },
    created_at: NOW, updated_at: NOW, deleted_at: data === null ? NOW : null,
  };
}
const byKey = (...records: ServerRecord[]) => new Map(records.map((r) => [recordKey(r.collection, r.id), r]));

/** `op` as the planner planned it against `seen` (all writable), the op's answer if the database takes it. */
function planned(op: SyncOp, ...seen: ServerRecord[]): PlannedOp {
  const rows = byKey(...seen);
  return planBatch([op], DEVICE, { liveRecords: 0, ledger: new Map(), records: rows, writable: new Set(rows.keys()) }, LIMITS, NOW).ops[0];
}

/** What the planner answers for `op` against `now` (the same op sent after the write). */
function replanned(op: SyncOp, ...now: ServerRecord[]) {
  return planned(op, ...now).result;
}

const refusal = (kind: Refusal["kind"], sqlstate: string, id: string, constraint?: string): Refusal => ({ collection: "tasks", id, kind, sqlstate, constraint });
const after = (...now: ServerRecord[]) => ({ records: byKey(...now), deviceId: DEVICE, now: NOW });

describe("refusedResult", () => {
  const list = record("lists", uuid(), 3, { title: "L" });
  const edit = (id: string, data: Record<string, unknown>, base: number | null = 5): SyncOp =>
    ({ op_id: uuid(), collection: "tasks", record_id: id, type: "upsert", base_version: base, data });

  it("a record the caller no longer sees: NOT_FOUND without it, as the planner answers an unknown id", () => {
    const task = record("tasks", uuid(), 5, { list_id: list.id, title: "t" });
    const op = edit(task.id, { title: "x" });
    const answer = refusedResult(planned(op, list, task), refusal("update", "not_permitted", task.id), after());
    expect(answer).toEqual(replanned(op));
    expect(answer).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });
    expect(answer.record).toBeUndefined();
  });

  it("a create in a scope the caller no longer sees: NOT_FOUND on the scope field, as the planner answers it", () => {
    const op = edit(uuid(), { list_id: list.id, title: "t" }, null);
    const answer = refusedResult(planned(op, list), refusal("insert", "42501", op.record_id), after());
    expect(answer).toEqual(replanned(op));
    expect(answer.error?.details).toEqual([expect.objectContaining({ field: "/ops/0/data/list_id" })]);
  });

  it("a create whose id someone took meanwhile: conflict with the record when visible, as create twice; NOT_FOUND when not", () => {
    const op = edit(uuid(), { list_id: list.id, title: "mine" }, null);
    const theirs = record("tasks", op.record_id, 9, { list_id: list.id, title: "theirs", done: false });
    const pkey = refusal("insert", "23505", op.record_id, "tasks_pkey");
    const answer = refusedResult(planned(op, list), pkey, after(list, theirs));
    expect(answer).toEqual(replanned(op, list, theirs));
    expect(answer).toMatchObject({ status: "conflict", conflicting_fields: ["list_id", "title"] });
    expect(refusedResult(planned(op, list), pkey, after(list))).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });
  });

  it("a record deleted meanwhile (a cascade of the batch's own list delete): conflict [*] for a change, applied for a delete, with the tombstone", () => {
    const task = record("tasks", uuid(), 5, { list_id: list.id, title: "t" });
    const tombstone = record("tasks", task.id, 11, null);
    const change = refusedResult(planned(edit(task.id, { title: "x" }), list, task), refusal("update", "not_permitted", task.id), after(list, tombstone));
    expect(change).toMatchObject({ status: "conflict", conflicting_fields: ["*"], record: { id: task.id, version: 11, deleted: true } });
    const remove: SyncOp = { op_id: uuid(), collection: "tasks", record_id: task.id, type: "delete", base_version: 5 };
    expect(refusedResult(planned(remove, list, task), refusal("delete", "not_permitted", task.id), after(list, tombstone)))
      .toMatchObject({ status: "applied", record: { version: 11, deleted: true } });
  });

  it("otherwise the database's reason, with the record as it stands now; an op the planner rejected keeps its answer", () => {
    const task = record("tasks", uuid(), 5, { list_id: list.id, title: "t" });
    const moved = record("tasks", task.id, 8, { list_id: list.id, title: "changed meanwhile" });
    const answer = refusedResult(planned(edit(task.id, { title: "x" }), list, task), refusal("update", "not_permitted", task.id), after(list, moved));
    expect(answer).toMatchObject({ status: "rejected", error: { code: "FORBIDDEN" }, record: { version: 8, data: { title: "changed meanwhile" } } });
    const invalid = planned(edit(task.id, { title: "" }), list, task);
    expect(invalid.result.status).toBe("rejected");
    expect(refusedResult({ ...invalid, writes: recordKey("tasks", task.id) }, refusal("update", "not_permitted", task.id), after(list, moved)))
      .toEqual({ ...invalid.result, record: expect.objectContaining({ version: 8 }) });
  });

  it("a create the database refuses over the live-records quota (a race, a trigger's rows): QUOTA_EXCEEDED, as the planner answers it", () => {
    const op = edit(uuid(), { list_id: list.id, title: "one too many" }, null);
    const quota = refusal("insert", "23514", op.record_id, LIVE_RECORDS_QUOTA_CONSTRAINT);
    const answer = refusedResult(planned(op, list), quota, after(list));
    // The same create sent after the write: the planner with the user at the quota.
    const limits = { ...LIMITS, max_live_records_per_user: MAX_LIVE_RECORDS_PER_USER };
    const rows = byKey(list);
    const afterwards = planBatch([op], DEVICE, { liveRecords: MAX_LIVE_RECORDS_PER_USER, ledger: new Map(), records: rows, writable: new Set(rows.keys()) }, limits, NOW);
    expect(answer).toEqual(afterwards.ops[0].result);
    expect(answer).toEqual({ op_id: op.op_id, status: "rejected", error: { code: "QUOTA_EXCEEDED", message: `at most ${MAX_LIVE_RECORDS_PER_USER} live records per user; delete some first` } });
    // Another check of the table (23514 under its own name) is still a rule of the record.
    expect(refusedResult(planned(op, list), refusal("insert", "23514", op.record_id, "tasks_title_length"), after(list)).error)
      .toMatchObject({ code: "VALIDATION_FAILED" });
  });
});

describe("refusalError: the database's reason in the op's own terms", () => {
  // A synced table with column kinds the sample app lacks, as the generator describes it: a
  // domain's CHECK (email_address_check) maps to the columns of that domain.
  const probe = {
    name: "probe", table: "public.probe", scopeColumn: "list_id", scopeCollection: "lists", isScope: false, fields: [],
    constraints: { probe_pkey: ["id"], probe_note_length: ["note"], email_address_check: ["email"] },
  } as unknown as CollectionDefinition;
  const refused = (sqlstate: string, column?: string, constraint?: string): Refusal =>
    ({ collection: "probe", id: uuid(), kind: "update", sqlstate, column, constraint });

  it("a value its column's type refuses is answered on that column (sync_apply names it)", () => {
    expect(refusalError(refused("22003", "amount"), 1, probe)).toMatchObject({
      code: "VALIDATION_FAILED", details: [{ field: "/ops/1/data/amount", code: "invalid_value" }],
    });
    expect(refusalError(refused("22007", "at"), 2, probe).details).toEqual([expect.objectContaining({ field: "/ops/2/data/at", code: "invalid_format" })]);
    for (const [sqlstate, column] of [["22008", "day"], ["22P02", "mood"], ["22P02", "tags"], ["22023", "x"]]) {
      expect(refusalError(refused(sqlstate, column), 0, probe).details, sqlstate).toEqual([expect.objectContaining({ field: `/ops/0/data/${column}`, code: "invalid_value" })]);
    }
    expect(refusalError(refused("22001", "code"), 0, probe).details).toEqual([expect.objectContaining({ field: "/ops/0/data/code", code: "too_long" })]);
  });

  it("a domain's CHECK or NOT NULL: on its column, also by the constraint's name alone", () => {
    expect(refusalError(refused("23514", "email", "email_address_check"), 1, probe).details)
      .toEqual([expect.objectContaining({ field: "/ops/1/data/email", code: "check_failed" })]);
    expect(refusalError(refused("23514", undefined, "email_address_check"), 1, probe).details)
      .toEqual([expect.objectContaining({ field: "/ops/1/data/email", code: "check_failed" })]);
    expect(refusalError(refused("23502", "label"), 3, probe).details).toEqual([expect.objectContaining({ field: "/ops/3/data/label", code: "required" })]);
  });

  it("a NOT NULL column left null that clients cannot set (23502): required, saying the client cannot give it", () => {
    const notes = {
      ...probe,
      fields: [
        { name: "body", type: "text", nullable: false, has_default: false, insertable: true, updatable: true },
        { name: "note_key", type: "text", nullable: false, has_default: false, insertable: false, updatable: false },
      ],
    } as unknown as CollectionDefinition;
    const inserted = (column: string): Refusal => ({ collection: "probe", id: uuid(), kind: "insert", sqlstate: "23502", column });
    expect(refusalError(inserted("body"), 0, notes).details).toEqual([{ field: "/ops/0/data/body", code: "required", message: "is required" }]);
    expect(refusalError(inserted("note_key"), 0, notes).details).toEqual([{
      field: "/ops/0/data/note_key", code: "required",
      message: "is required, and clients cannot set it: the table needs a default for it or an insert grant on it",
    }]);
  });

  it("a generated or identity-always column written (428C9): read_only on it, as the schema answers", () => {
    expect(refusalError(refused("428C9", "doubled"), 4, probe)).toMatchObject({
      code: "VALIDATION_FAILED", details: [{ field: "/ops/4/data/doubled", code: "read_only", message: "is set by the server" }],
    });
  });

  it("a foreign key's 23503: still_referenced when rows still refer to the record (a delete; an update of a key referred to), NOT_FOUND for a reference to a missing one", () => {
    const fk = (kind: Refusal["kind"], constraint: string, message?: string, column?: string): Refusal =>
      ({ collection: "probe", id: uuid(), kind, sqlstate: "23503", constraint, column, message });
    const withFk = { ...probe, constraints: { ...probe.constraints, probe_parent_fkey: ["parent"] } } as unknown as CollectionDefinition;
    const stillReferenced = (field: string, key: string) => ({
      code: "VALIDATION_FAILED", message: `other records still refer to this one (${key})`,
      details: [{ field, code: "still_referenced", message: `is still referred to by other records (${key})` }],
    });
    expect(refusalError(fk("delete", "pins_probe_fkey"), 2, withFk)).toEqual(stillReferenced("/ops/2/record_id", "pins_probe_fkey"));
    // An update's, by Postgres' message, or (its messages in another language) by whose key it is.
    expect(refusalError(fk("update", "probe_parent_fkey", 'update or delete on table "probe" violates foreign key constraint "probe_parent_fkey" on table "probe"'), 1, withFk))
      .toEqual(stillReferenced("/ops/1/data", "probe_parent_fkey"));
    expect(refusalError(fk("update", "labels_code_fkey", "UPDATE oder DELETE in Tabelle »probe« verletzt Fremdschlüssel-Constraint"), 1, withFk))
      .toEqual(stillReferenced("/ops/1/data", "labels_code_fkey"));
    for (const refusal of [
      fk("update", "probe_parent_fkey", 'insert or update on table "probe" violates foreign key constraint "probe_parent_fkey"'),
      fk("update", "probe_parent_fkey", "INSERT oder UPDATE in Tabelle »probe« verletzt Fremdschlüssel-Constraint"),
      fk("insert", "probe_parent_fkey"),
      // A row of another table the record's own trigger writes, referring to a missing one.
      fk("update", "audit_probe_fkey", 'insert or update on table "audit" violates foreign key constraint "audit_probe_fkey"'),
    ]) {
      expect(refusalError(refusal, 0, withFk), refusal.message).toMatchObject({ code: "NOT_FOUND", message: `refers to a record that does not exist (${refusal.constraint})` });
    }
  });

  it("any other error the row alone raised (a trigger's own SQLSTATE): VALIDATION_FAILED on the data, never a 500", () => {
    for (const sqlstate of ["AB123", "P0001", "22012", "0A000"]) {
      expect(refusalError(refused(sqlstate), 5, probe), sqlstate).toMatchObject({
        code: "VALIDATION_FAILED", details: [{ field: "/ops/5/data", code: "invalid_value" }],
      });
    }
  });
});
