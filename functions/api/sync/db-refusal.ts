// When the database refuses a record's final state (app_private.sync_apply
// reports the row with its SQLSTATE, constraint and column), this answers the
// ops of that record: judged against the rows as the caller sees them after
// the write, and when the refusal stands, why in the op's own terms (which
// field, which rule). Pure; the names of the table's constraints and unique
// indexes (and its domains' constraints) map back to its columns through the
// generated collection description.
import { type CollectionDefinition, findCollection } from "../../_shared/collections.ts";
import type { FieldDetail } from "../../_shared/errors.ts";
import { ALL_FIELDS, mergeOp, type ServerRecord } from "../../_shared/merge.ts";
import type { SyncOp, SyncOpError, SyncOpResult } from "../../_shared/schemas/sync.ts";
import { MAX_LIVE_RECORDS_PER_USER } from "../../_shared/sync-quota.generated.ts";
import { notFound, type PlannedOp, quotaExceeded, recordKey, rejection, scopeNotFound, toSyncRecord } from "./plan-batch.ts";

/**
 * The constraint name of the database's live-records quota (the trigger on app_private.sync_usage,
 * migration 20261126002100): its 23514 is the quota, not a rule of the record's table.
 */
export const LIVE_RECORDS_QUOTA_CONSTRAINT = "max_live_records_per_user";

/**
 * A row the policies let the caller write that the table's SELECT policy hides from them once
 * written (push-store.ts leaves it out of the batch's write).
 */
export const NOT_READABLE_AFTER_WRITE = "not_readable_after_write";

export interface Refusal {
  collection: string;
  id: string;
  kind: "insert" | "update" | "delete";
  /** A SQLSTATE, "not_permitted" (the policies left a visible row unwritten), or NOT_READABLE_AFTER_WRITE. */
  sqlstate: string;
  constraint?: string | null;
  column?: string | null;
  message?: string;
}

/** The rows as they stand after the batch's write (a later statement than the planner's read). */
export interface AfterRefusal {
  /** By recordKey: the refused records and the scopes their ops point at, as the caller sees them now. */
  records: Map<string, ServerRecord>;
  /** The batch's device (its row id, WriteContext.deviceId) and server time (for a merge against a record found there). */
  deviceId: string | null;
  now: string;
}

/**
 * The database's own permission errors among the refusals (42501 "permission denied for function …",
 * "… for table …", "… for sequence …"): a grant `authenticated` lacks on something the write uses (a
 * trigger's function, a default's sequence), not a policy's refusal. The op answers FORBIDDEN either
 * way; these go in the request's log line, where the developer sees which grant is missing. Postgres
 * names only the object in them, never a value.
 */
export function permissionsDenied(refusals: readonly Refusal[]): string[] {
  const denied = refusals.filter((r) => r.sqlstate === "42501" && r.message?.startsWith("permission denied for "));
  return [...new Set(denied.map((r) => r.message!))].sort();
}

function isPrimaryKey(refusal: Refusal, collection: CollectionDefinition | undefined): boolean {
  return refusal.sqlstate === "23505" && refusal.constraint === `${collection?.table.split(".").pop()}_pkey`;
}

/**
 * The answer to an op of a record the database refused (an op from the refused phase on). The
 * planner judged it from the rows as they stood when the batch read them; another transaction
 * may have committed since, so it is judged again against what the caller sees now, as a batch
 * sent after the write would be. Every answer carries the record as it stands now (none if the
 * caller cannot see it).
 */
export function refusedResult(p: PlannedOp, refusal: Refusal, after: AfterRefusal): SyncOpResult {
  const { op, index } = p;
  if (!op) return p.result; // an op the planner refused for its shape writes nothing, so is never refused
  const collection = findCollection(op.collection);
  const current = after.records.get(p.writes!);
  const record = current ? { record: toSyncRecord(current) } : {};
  const { record: _planned, ...planned } = p.result;
  if (planned.status !== "applied" && planned.status !== "conflict") return { ...planned, ...record };
  const reject = (error: SyncOpError): SyncOpResult => ({ op_id: op.op_id, status: "rejected", error, ...record });
  // A record the batch found and the caller cannot see now (they lost access to its scope
  // meanwhile): answered as an unknown id, without the record as it was.
  if (!current && (refusal.kind !== "insert" || op.type === "delete" || op.base_version !== null)) return reject(notFound(index, op.collection));
  // The scope the op puts the row in is not one the caller can see now: they lost it meanwhile,
  // or only this batch's own refused create made it look like theirs (an id someone else's
  // list has). Answered as for an unknown scope, as the planner answers it.
  const scoped = op.type === "upsert" && collection && !collection.isScope ? collection : undefined;
  const scopeId = scoped && op.data?.[scoped.scopeColumn];
  if (scoped && typeof scopeId === "string" && !after.records.get(recordKey(scoped.scopeCollection, scopeId))?.data) {
    return reject(scopeNotFound(index, scoped));
  }
  // A record the batch meant to change or delete and that is deleted now: by another writer, or
  // by the batch's own cascade (its list deleted, then re-created, before this write ran).
  // Answered as for a record deleted since the op's base.
  if (current?.deleted && refusal.kind !== "insert") return deletedSinceBase(op, current);
  if (planned.status === "conflict" && current) return { ...planned, record: toSyncRecord(current) };
  // The id was free when the batch read it and someone created the row since: if the caller can
  // see it, this is a create of an existing record (create twice), merged on base 0.
  if (refusal.kind === "insert" && isPrimaryKey(refusal, collection) && current && !current.deleted) {
    const merged = mergeOp(current, op, { collection: op.collection, id: current.id, deviceId: after.deviceId, seq: current.version + 1, now: after.now, batchFloor: Infinity, serverFields: collection?.serverFields });
    if (merged.outcome === "conflict") return { op_id: op.op_id, status: "conflict", record: toSyncRecord(current), conflicting_fields: merged.fields };
  }
  return reject(refusalError(refusal, index, collection));
}

/** An op on a record deleted since the batch read it live: a delete has nothing left to do, an upsert conflicts with the tombstone. */
function deletedSinceBase(op: SyncOp, tombstone: ServerRecord): SyncOpResult {
  return op.type === "delete"
    ? { op_id: op.op_id, status: "applied", record: toSyncRecord(tombstone) }
    : { op_id: op.op_id, status: "conflict", record: toSyncRecord(tombstone), conflicting_fields: [ALL_FIELDS] };
}

/**
 * The answer to an op the planner answered with a live record it did not write (conflict,
 * rejected, duplicate) in a scope the batch deleted: the delete's cascade, which the planner does
 * not follow, may have removed the record. Answered as the same op sent after the batch would be,
 * with the record as it stands after the write (`current`, none if the caller cannot see it): on a
 * tombstone, an upsert conflicts before its data is judged and a delete is applied (unless it
 * carries data); a duplicate, or an op_id used for another record (not logged), stays what it was.
 */
export function cascadedResult(p: PlannedOp, current: ServerRecord | undefined): SyncOpResult {
  const { op, result: planned } = p;
  if (current?.deleted && op && p.logged && !(op.type === "delete" && op.data !== undefined)) return deletedSinceBase(op, current);
  if (current) return { ...planned, record: toSyncRecord(current) };
  const { record: _found, ...result } = planned;
  return result.status === "conflict" ? planned : result; // a conflict carries a record
}

function fieldsOf(refusal: Refusal, collection: CollectionDefinition | undefined): string[] {
  if (refusal.column) return [refusal.column];
  const columns = refusal.constraint ? collection?.constraints[refusal.constraint] : undefined;
  return columns?.filter((c) => c !== "id") ?? [];
}

/**
 * Whether a 23503 refuses the record because rows (of another table, or of its own) still refer to
 * it by a foreign key without an action (restrict, no action), not because it refers to a record
 * that does not exist. A delete's always (the record is there: NOT_FOUND would have the client drop
 * it). An update's when it changed a key another row refers to: Postgres says "update or delete on
 * table …" (and "insert or update on table …" for a missing reference); with its messages in another
 * language, when the key is another table's (the table's own are in its constraints).
 */
function isStillReferenced(refusal: Refusal, collection: CollectionDefinition | undefined): boolean {
  if (refusal.kind === "delete") return true;
  if (refusal.kind !== "update") return false;
  if (refusal.message?.startsWith("update or delete on table ")) return true;
  if (refusal.message?.startsWith("insert or update on table ")) return false;
  return !!refusal.constraint && !!collection && !(refusal.constraint in collection.constraints);
}

export function refusalError(refusal: Refusal, index: number, collection: CollectionDefinition | undefined): SyncOpError {
  const at = (field: string) => `/ops/${index}/data/${field}`;
  const details = (code: string, message: string): FieldDetail[] => {
    const fields = fieldsOf(refusal, collection);
    return fields.length > 0 ? fields.map((f) => ({ field: at(f), code, message })) : [{ field: `/ops/${index}/data`, code, message }];
  };
  const rule = refusal.constraint ? ` (${refusal.constraint})` : "";
  switch (refusal.sqlstate) {
    case "not_permitted":
    case "42501": // a policy's WITH CHECK refused the row
      return rejection("FORBIDDEN", refusal.kind === "delete" ? "you may not delete this record" : "you may not make this change to this record");
    case NOT_READABLE_AFTER_WRITE:
      // Kept, the row would be one its writer never lists (counted in their quota): as an update
      // that hides its row, refused by the database (42501), is.
      return rejection("FORBIDDEN", "you may not make this change to this record", [{
        field: `/ops/${index}/data`, code: NOT_READABLE_AFTER_WRITE, message: "the row would not be readable by its writer: the table's SELECT policy hides it",
      }]);
    case "23505":
      if (isPrimaryKey(refusal, collection)) {
        // The id belongs to a row the caller cannot see: answered like an unknown id.
        return notFound(index, refusal.collection);
      }
      return rejection("VALIDATION_FAILED", `the value must be unique${rule}`, details("taken", "is already taken"));
    case "23503":
      if (isStillReferenced(refusal, collection)) {
        // Named by the key alone: the rows that refer to it may be ones the caller cannot see.
        return rejection("VALIDATION_FAILED", `other records still refer to this one${rule}`, [{
          field: refusal.kind === "delete" ? `/ops/${index}/record_id` : `/ops/${index}/data`,
          code: "still_referenced",
          message: `is still referred to by other records${rule}`,
        }]);
      }
      return rejection("NOT_FOUND", `refers to a record that does not exist${rule}`, details("not_found", "is not a record you can see"));
    case "23502": {
      // A column this op could not have set (not granted to authenticated for it): "is required"
      // alone would send the client looking for a value it may not send.
      const field = refusal.column ? collection?.fields.find((f) => f.name === refusal.column) : undefined;
      const settable = !field || (refusal.kind === "insert" ? field.insertable : field.updatable);
      const fix = refusal.kind === "insert" ? ": the table needs a default for it or an insert grant on it" : "";
      return rejection("VALIDATION_FAILED", "a required field is missing", details("required", settable ? "is required" : `is required, and clients cannot set it${fix}`));
    }
    case "23514":
      // The database's quota, reached by what the planner could not count: a write of the user's that
      // committed while the push waited, or rows the table's own triggers add in the user's name,
      // or a delete the batch runs after its creates (a list's: plan-batch.ts STAGES). (A list's owner membership
      // counts for no one since migration 20261128000300.)
      if (refusal.constraint === LIVE_RECORDS_QUOTA_CONSTRAINT) return quotaExceeded(MAX_LIVE_RECORDS_PER_USER);
      return rejection("VALIDATION_FAILED", `the record breaks a rule of the table${rule}`, details("check_failed", `breaks the rule ${refusal.constraint ?? "of the table"}`));
    case "428C9":
      // A generated or identity-always column (the collection description marks them read-only;
      // this answers a description older than the table).
      return rejection("VALIDATION_FAILED", "a field is set by the server", details("read_only", "is set by the server"));
    case "22001":
      return rejection("VALIDATION_FAILED", "a value is too long for its column", details("too_long", "is longer than the column holds"));
    default: {
      // 22xxx: a value the column's type or domain refuses (sync_apply names the column; without
      // one, a trigger's own error, answered as below).
      const value = VALUE_REFUSALS[refusal.sqlstate] ?? (refusal.sqlstate.startsWith("22") ? VALUE_REFUSALS["22"] : undefined);
      if (value && fieldsOf(refusal, collection).length > 0) return rejection("VALIDATION_FAILED", "a value is not one its column can hold", details(value[0], value[1]));
      // Other 23xxx, P0001 (a trigger refused the row), and any other error the row alone raised
      // (sync_apply refuses the row for it, never the batch, unless it ends the transaction).
      return rejection("VALIDATION_FAILED", "the database refused this record", details("invalid_value", "is not accepted by the database"));
    }
  }
}

/** A value its column's type refuses (SQLSTATE, or its class "22"): the detail's code and message. */
const VALUE_REFUSALS: Record<string, [code: string, message: string]> = {
  "22003": ["invalid_value", "is out of the range of the column's type"],
  "22007": ["invalid_format", "is not a date or time the column's type reads"],
  "22008": ["invalid_value", "is out of the range of dates and times the column holds"],
  "22P02": ["invalid_value", "is not a value of the column's type"],
  "22": ["invalid_value", "is not a value the column can hold"],
};
