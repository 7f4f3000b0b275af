// Decides every op of a push batch in memory, in request order, from what the
// store read as the caller (so under RLS) after locking the rows the caller
// may change: the ledger rows of the batch's op_ids, the sync state and data
// of the rows the ops name or point at as their scope, and which of them the
// caller may write. Pure (no database): the number of round trips per batch
// stays constant whatever the op count.
//
// Per op, in this order: duplicate (ledger; an op_id it holds for another
// record is rejected, op_id_reused) → the op's shape (syncOpSchema: the edge
// checked only its op_id) → unknown collection → data on a
// delete → visibility (NOT_FOUND: an unknown id and one the caller cannot see
// answer alike) → a create in a table users insert nothing into (FORBIDDEN) →
// columns of the table (create or change) → the scope the data points at must
// be visible → base_version ahead of the server →
// field-level merge (conflict) → the caller may write the row (FORBIDDEN) →
// record data size (where the op grows it) → live-records quota → applied.
// Ops on one record chain: each sees the state the previous one produced; the
// record is written once, in its final state, and the database has the last
// word (a row it refuses turns that record's applied ops into rejected ones,
// see push-store.ts).
// One exception to "once": a row deleted and then re-created by the batch is
// deleted, and then inserted from the patch, exactly as two batches would do
// it: the writes up to the re-creation form one phase, run before the rest.
// A record the batch creates and deletes again is never written; so that the
// database still judges its create and delete, the plan carries the writes that
// try them (BatchPlan.neverStored), which the push rolls back.
// A scope row's delete takes the rows the batch knows in that scope with it, as
// its cascade does: later ops on them are ops on a record deleted by then (a
// co-owner deleting a list and then leaving it), and their rows are left to the
// cascade, which runs while the caller still has the access their later ops
// would take away.
import { allCollections, type CollectionDefinition, findCollection, scopeCollection } from "../../_shared/collections.ts";
import type { FieldDetail } from "../../_shared/errors.ts";
import { type InexactNumber, inexactNumberAt, inexactNumberDetail } from "../../_shared/inexact-numbers.ts";
import type { Limits } from "../../_shared/limits.ts";
import { ALL_FIELDS, type JsonObject, mergeOp, type ServerRecord } from "../../_shared/merge.ts";
import { nonFiniteNumberAt } from "../../_shared/non-finite-numbers.ts";
import { jsonbTextBytes, recordDataBytes } from "../../_shared/record-size.ts";
import { type SyncOp, type SyncOpEnvelope, type SyncOpError, type SyncOpResult, syncOpSchema, type SyncRecord } from "../../_shared/schemas/sync.ts";
import { MAX_OP_ERROR_BYTES } from "../../_shared/sync-ledger.generated.ts";
import { isUuid } from "../../_shared/uuid.ts";
import { boundedDetails, issueCount, MAX_FIELD_DETAILS, validationMessage, zodIssuesToDetails } from "../../_shared/validation-details.ts";

/**
 * What the ledger keeps of the record an op names, as far as the op names one: a collection this
 * server has, a uuid, a known type (null otherwise: an op rejected for its shape names what it may).
 */
export interface NamedRecord {
  collection: string | null;
  record_id: string | null;
  type: SyncOp["type"] | null;
}

export function namedRecord(op: SyncOpEnvelope): NamedRecord {
  const { collection, record_id, type } = op;
  return {
    collection: typeof collection === "string" && findCollection(collection) ? collection : null,
    record_id: typeof record_id === "string" && isUuid(record_id) ? record_id.toLowerCase() : null,
    type: type === "upsert" || type === "delete" ? type : null,
  };
}

/** A first-time outcome as the ledger keeps it (what exactly-once needs; the record is re-read). */
export interface LedgerEntry extends Omit<NamedRecord, "type"> {
  status: "applied" | "conflict" | "rejected";
  version: number | null;
  error: SyncOpError | null;
}

export interface BatchState {
  /** Live records the caller created (the quota counts them). */
  liveRecords: number;
  /** Ledger entries of the batch's op_ids already processed for this user. */
  ledger: Map<string, LedgerEntry>;
  /** The records the caller can see (live or tombstone), by recordKey. */
  records: Map<string, ServerRecord>;
  /** recordKeys of the rows the caller may change (locked for this batch). */
  writable: Set<string>;
  /**
   * The row version (xmin, as text) of each named row as read, by recordKey. A delete of a row the
   * caller could not lock carries it, so that the database deletes only that version: an edit
   * committed since the read leaves the row (sync_apply), and the push plans the batch again.
   */
  rowVersions?: ReadonlyMap<string, string>;
  /**
   * The answer to a delete the database refused when this batch was first written (a scope row:
   * the rest of the batch was planned as if it were gone), by recordKey; planned again, that delete
   * is rejected so and its scope stays (push-store.ts).
   */
  refusedDeletes?: (key: string, index: number) => SyncOpError | undefined;
}

/**
 * One statement's worth of writes for app_private.sync_apply. An insert
 * group's rows all carry its columns; an update group (one per table) holds
 * every edited row of the table, each carrying only the columns it changes,
 * and its columns are all of those; a delete group's rows are `{id}`, or
 * `{id, xmin}` for a row deleted only if it is still the version read.
 */
export interface WriteGroup {
  collection: string;
  kind: "insert" | "update" | "delete";
  columns: string[];
  rows: JsonObject[];
}

export interface PlannedOp {
  /** The op as syncOpSchema parsed it; null for one it refuses (rejected, so it writes nothing). */
  op: SyncOp | null;
  /** What the ledger keeps of the op. */
  named: NamedRecord;
  index: number;
  /** The outcome if the database accepts the record's final state. */
  result: SyncOpResult;
  /** recordKey of the record whose write this op's outcome depends on. */
  writes?: string;
  /** Written to the ledger (false for a duplicate). */
  logged: boolean;
  /** The phase whose writes this op's outcome depends on (see BatchPlan.phasesOf). */
  phase: number;
}

export interface BatchPlan {
  ops: PlannedOp[];
  /**
   * Writes phase by phase, in dependency order within a phase: scopes are created before their
   * rows and deleted after them.
   */
  groups: WriteGroup[];
  /** recordKeys the plan writes. */
  written: Set<string>;
  /**
   * The records written in more than one phase (deleted, then re-created): each phase's write of
   * the record, in order, so that a refusal of one of them rejects only the ops from that phase on.
   */
  phasesOf: Map<string, { phase: number; kind: WriteGroup["kind"] }[]>;
  /**
   * Only when the batch creates records and deletes them again, with no row of them written
   * (`keys`: never stored, so the database would never judge their creates or deletes): the plan's
   * writes up to the last phase that creates one, none of a membership table (whose writes run
   * last), with each such record inserted in its last live state where the write would have
   * inserted it and, when an op deleted it (not its list's cascade), deleted where the write
   * deletes rows. The push runs them and rolls them back (push-store.ts): the database's refusal
   * of such a create answers its ops; of such a delete, plans the batch again with it known.
   */
  neverStored?: { keys: Set<string>; groups: WriteGroup[] };
}

/** The writes of a run of ops, from the rows as the database holds them when the run begins. */
interface Phase {
  start: Map<string, ServerRecord>;
  written: Set<string>;
  /** The records a scope delete of this phase takes with it: its cascade deletes their rows. */
  cascaded: Set<string>;
  /** The row version each unlocked row this phase deletes was read at (BatchState.rowVersions). */
  readAt: Map<string, string>;
  /** The last live state of each record this phase's ops left live (BatchPlan.neverStored). */
  lastLive: Map<string, ServerRecord>;
  /** The records this phase deleted last by an op of theirs, not by their scope's delete. */
  deletedByOp: Set<string>;
  /** Each record's first and last op in this phase (op indexes): where its write stands in the batch's order. */
  ops: Map<string, { first: number; last: number }>;
}

export function recordKey(collection: string, id: string): string {
  return `${collection}/${id.toLowerCase()}`;
}

/** The collection and id a recordKey names (collection names hold no "/"). */
export function keyParts(key: string): { collection: string; id: string } {
  const slash = key.indexOf("/");
  return { collection: key.slice(0, slash), id: key.slice(slash + 1) };
}

export function toSyncRecord(record: ServerRecord): SyncRecord {
  return {
    collection: record.collection,
    id: record.id,
    version: record.version,
    deleted: record.deleted,
    data: record.deleted ? null : record.data,
    updated_at: record.updated_at,
  };
}

/**
 * A create over the live-records quota: the planner's answer, and the database's when its own
 * check refuses the row (db-refusal.ts), in the words of the database's error.
 */
export function quotaExceeded(max: number): SyncOpError {
  return rejection("QUOTA_EXCEEDED", `at most ${max} live records per user; delete some first`);
}

/**
 * An op's error, as the answer and the ledger carry it: its details bounded in count and length,
 * and no more of them than fit the ledger's bound on a stored error, which counts the bytes of its
 * JSON text (a multi-byte or escaped character is more than one byte): over it, the ledger insert,
 * and so the whole batch, would fail.
 */
export function rejection(code: SyncOpError["code"], message: string, details: FieldDetail[] = []): SyncOpError {
  const error: SyncOpError = { code, message };
  const kept = boundedDetails(details);
  while (kept.length > 0 && jsonbTextBytes({ ...error, details: kept }) > MAX_OP_ERROR_BYTES) kept.pop();
  return kept.length > 0 ? { ...error, details: kept } : error;
}

const at = (index: number, ...path: PropertyKey[]) => "/" + ["ops", index, ...path].join("/");

/**
 * A ledger's error as this request's answer: its pointers name the op where this request holds it
 * (errors.md: pointers are relative to the request body), not where the first request did.
 */
function reindexed(error: SyncOpError, index: number): SyncOpError {
  if (!error.details) return error;
  return { ...error, details: error.details.map((d) => ({ ...d, field: d.field.replace(/^\/ops\/\d+(?=\/|$)/, `/ops/${index}`) })) };
}

/** The one answer for a record the caller cannot see, whether it exists or not. */
export function notFound(index: number, collection: string): SyncOpError {
  return rejection("NOT_FOUND", `no such record in ${collection}`, [
    { field: at(index, "record_id"), code: "not_found", message: "is not a record you can see" },
  ]);
}

/** The one answer for a scope the op puts its row in that the caller cannot see, whether it exists or not. */
export function scopeNotFound(index: number, definition: CollectionDefinition): SyncOpError {
  const scopes = definition.scopeCollection;
  return rejection("NOT_FOUND", `no such ${scopes} record`, [
    { field: at(index, "data", definition.scopeColumn), code: "not_found", message: `is not a ${scopes} record you can see` },
  ]);
}

/** The answer for a row naming, by a foreign key's `column`, a record of `collection` the batch deleted. */
export function referenceNotFound(index: number, column: string, collection: string): SyncOpError {
  return rejection("NOT_FOUND", `no such ${collection} record`, [
    { field: at(index, "data", column), code: "not_found", message: `is not a ${collection} record you can see` },
  ]);
}

/** Whether a row of `definition` with `data` lies in one of `scopes` (recordKeys of scope rows). */
export function inOneOf(scopes: ReadonlySet<string>, definition: CollectionDefinition | undefined, data: JsonObject | null | undefined): boolean {
  const scopeId = definition && !definition.isScope ? data?.[definition.scopeColumn] : undefined;
  return typeof scopeId === "string" && scopes.has(recordKey(definition!.scopeCollection, scopeId));
}

/** The ledger's op was for the record this op names (ids compared in any case). */
function sameRecord(entry: LedgerEntry, named: NamedRecord): boolean {
  return entry.collection === named.collection && (entry.record_id?.toLowerCase() ?? null) === named.record_id;
}

/** Validates the op's data against the table's columns: the parsed (normalised) data, or why not. */
function validateData(definition: CollectionDefinition, op: SyncOp, index: number, creating: boolean, inexact: readonly InexactNumber[]):
  { data: JsonObject; error?: undefined } | { error: SyncOpError } {
  // JSON.parse made `1e309` Infinity, which would be stored as null (the
  // batch's own non-finite numbers are a 400 before this: routes/sync-batch.ts).
  const infinite = nonFiniteNumberAt(op.data ?? null);
  if (infinite !== null) {
    return { error: rejection("VALIDATION_FAILED", "a number is out of range", [
      { field: at(index, "data") + infinite, code: "not_finite", message: "must be a finite number" },
    ]) };
  }
  // JSON.parse read 12345678901234567 as 12345678901234568: in a column that stores the digits
  // it is sent (not a double precision one), that other number would be stored.
  const altered = inexact.flatMap((found) => {
    const pointer = definition.exactNumberFields.has(String(found.path[0])) ? inexactNumberAt(op.data, found) : null;
    return pointer === null ? [] : [inexactNumberDetail(at(index, "data") + pointer, found.literal)];
  });
  if (altered.length > 0) {
    return { error: rejection("VALIDATION_FAILED", "a number cannot be stored exactly as sent", altered) };
  }
  const data = op.data ?? {};
  const parsed = (creating ? definition.create : definition.update).safeParse(data);
  if (parsed.success) return { data: parsed.data };
  const { issues } = parsed.error;
  const details = zodIssuesToDetails(issues, data, ["ops", index, "data"], MAX_FIELD_DETAILS);
  return { error: rejection("VALIDATION_FAILED", validationMessage(issueCount(issues)), details) };
}

/** Same value as JSON (column values are JSON scalars, or JSON for json columns). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // Two scalars that are not identical differ; only objects and arrays (json columns) are compared as text.
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

export function planBatch(
  ops: readonly SyncOpEnvelope[],
  /** The caller's device row id (WriteContext.deviceId), not the batch's installation id. */
  deviceId: string | null,
  state: BatchState,
  limits: Pick<Limits, "max_record_data_bytes" | "max_live_records_per_user">,
  now: string,
  /** Per op index, the numbers of its data JSON.parse did not read exactly (inexact-op-numbers.ts). */
  inexactNumbers: ReadonlyMap<number, readonly InexactNumber[]> = new Map(),
): BatchPlan {
  const records = new Map(state.records);
  const initial = state.records;
  const written = new Set<string>();
  const planned: PlannedOp[] = [];
  let liveRecords = state.liveRecords;
  // Provisional versions for writes made earlier in this batch (the real ones
  // come from the database): above every version read, so they count as own.
  const floor = Math.max(0, ...[...state.records.values()].map((r) => r.version));
  let provisional = floor;
  const phases: Phase[] = [];
  let phase: Phase = { start: initial, written: new Set(), cascaded: new Set(), readAt: new Map(), lastLive: new Map(), deletedByOp: new Set(), ops: new Map() };
  // Every record a scope delete of the batch took with it (cascaded in some phase).
  const cascaded = new Set<string>();
  // Every record the batch has seen in each scope (by the scope's recordKey): where a scope's delete
  // looks for the rows it takes, without a walk over every record per delete.
  const seenInScope = new Map<string, Set<string>>();
  const noteScope = (key: string, record: ServerRecord) => {
    const definition = findCollection(record.collection);
    const scopeId = definition && !definition.isScope ? record.data?.[definition.scopeColumn] : undefined;
    if (typeof scopeId !== "string") return;
    const scope = recordKey(definition!.scopeCollection, scopeId);
    (seenInScope.get(scope) ?? seenInScope.set(scope, new Set()).get(scope)!).add(key);
  };
  for (const [key, record] of initial) noteScope(key, record);

  ops.forEach((sent, index) => {
    const checked = syncOpSchema.safeParse(sent);
    const parsed = checked.success ? checked.data : null;
    const opId = sent.op_id.toLowerCase();
    const named = namedRecord(sent);
    // ("": the op names no record this server has.)
    const key = named.collection !== null && named.record_id !== null ? recordKey(named.collection, named.record_id) : "";
    // A record this batch already wrote has a provisional version: settle() puts the stored one in.
    const writtenHere = () => (written.has(key) ? key : undefined);
    const original = state.ledger.get(opId);
    if (original) {
      // The ledger already holds this op_id: answered, never applied or logged again.
      const current = records.get(key);
      const record = current ? { record: toSyncRecord(current) } : {};
      const result: SyncOpResult = sameRecord(original, named)
        ? {
          op_id: opId,
          status: "duplicate",
          original_status: original.status,
          ...(original.version !== null ? { original_version: original.version } : {}),
          ...(original.error ? { error: reindexed(original.error, index) } : {}),
          ...record,
        }
        // A client bug: this op_id was another record's op. Not a duplicate: that would
        // answer with the other record's outcome (the ledger keeps the first).
        : {
          op_id: opId,
          status: "rejected",
          error: rejection("VALIDATION_FAILED", "op_id was already used for another record", [
            { field: at(index, "op_id"), code: "op_id_reused", message: "was already used for another record; give each op its own op_id" },
          ]),
          ...record,
        };
      planned.push({ op: parsed, named, index, logged: false, phase: phases.length, writes: writtenHere(), result });
      return;
    }
    const finish = (result: SyncOpResult, writes?: string) => planned.push({ op: parsed, named, index, result, writes, logged: true, phase: phases.length });
    const reject = (error: SyncOpError, current?: ServerRecord | null) =>
      finish({ op_id: opId, status: "rejected", error, ...(current ? { record: toSyncRecord(current) } : {}) }, writtenHere());
    const conflict = (current: ServerRecord, fields: string[]) =>
      finish({ op_id: opId, status: "conflict", record: toSyncRecord(current), conflicting_fields: fields }, writtenHere());

    // An op of the wrong shape is this op's answer, not the batch's (api-v1.md: one bad op never
    // blocks a batch), with field details as for its data; recorded in the ledger like any
    // rejection. It is answered without a record (none is written for it).
    if (!checked.success) {
      const { issues } = checked.error;
      const error = rejection("VALIDATION_FAILED", validationMessage(issueCount(issues)), zodIssuesToDetails(issues, sent, ["ops", index], MAX_FIELD_DETAILS));
      return finish({ op_id: opId, status: "rejected", error });
    }
    const op = checked.data;

    const definition = findCollection(op.collection);
    if (!definition) {
      return reject(rejection("VALIDATION_FAILED", "unknown collection", [
        { field: at(index, "collection"), code: "unknown_collection", message: "is not a collection of this server (see GET /v1/meta)" },
      ]));
    }
    const current = records.get(key) ?? null;
    if (op.type === "delete" && op.data !== undefined) {
      return reject(rejection("VALIDATION_FAILED", "a delete carries no data", [
        { field: at(index, "data"), code: "unexpected_field", message: "is not accepted on a delete" },
      ]), current);
    }

    const live = current !== null && !current.deleted;
    // A delete, or a change based on a version, of a record the caller cannot see (an unknown id
    // and another user's answer alike); an upsert with no base_version creates the record.
    if (current === null && (op.type === "delete" || op.base_version !== null)) return reject(notFound(index, op.collection));
    const refusedDelete = op.type === "delete" ? state.refusedDeletes?.(key, index) : undefined;
    if (refusedDelete) return reject(refusedDelete, current);
    // A row that existed when the batch began needs the right to change it
    // (rows this batch created were never locked, and need none). A delete of a
    // row the caller may not change goes to the database, whose DELETE policy
    // decides (a member may delete their own membership, not change it).
    const unlockable = initial.get(key)?.deleted === false && !state.writable.has(key);
    if (unlockable && op.type !== "delete") {
      return reject(rejection("FORBIDDEN", "you may not change this record"), current);
    }

    const context = { collection: op.collection, id: op.record_id, deviceId, seq: provisional + 1, now, batchFloor: floor, serverFields: definition.serverFields };
    // An upsert on a record another device deleted since the op's base conflicts with the
    // tombstone (so the client learns of the delete) before its data is judged as a new row's;
    // so does any upsert of one an earlier op's scope delete took with it (a cascade is no op the
    // device sent: two batches would answer so).
    if (op.type === "upsert" && current?.deleted && cascaded.has(key)) return conflict(current, [ALL_FIELDS]);
    if (op.type === "upsert" && current?.deleted) {
      const onTombstone = mergeOp(current, { type: "upsert", base_version: op.base_version }, context);
      if (onTombstone.outcome === "conflict") return conflict(onTombstone.current, onTombstone.fields);
    }

    let data: JsonObject | undefined;
    if (op.type === "upsert") {
      if (!live && !definition.creatable) return reject(rejection("FORBIDDEN", "you may not create records in this collection"), current);
      const checked = validateData(definition, op, index, !live, inexactNumbers.get(index) ?? []);
      if (checked.error) return reject(checked.error, current);
      data = checked.data;
      // The scope a row is created in or moved to must be one the caller can see.
      const scopeId = definition.isScope ? undefined : data[definition.scopeColumn];
      const scopes = scopeCollection(definition);
      if (typeof scopeId === "string" && scopes && !records.get(recordKey(scopes.name, scopeId))?.data) {
        return reject(scopeNotFound(index, definition), current);
      }
      // A row naming a record an earlier op of the batch deleted (a step into a deleted project):
      // the delete is written after the creates and edits (writeGroups), and its cascade would
      // take the row with it, answered `applied`; the batch's order refuses it, as an unknown id.
      for (const [column, referenced] of definition.foreignKeys) {
        const id = data[column];
        if (typeof id === "string" && records.get(recordKey(referenced, id))?.deleted) return reject(referenceNotFound(index, column, referenced), current);
      }
    }
    if (current && op.base_version !== null && op.base_version > current.version) {
      return reject(rejection("VALIDATION_FAILED", "base_version is newer than the record's server version", [
        { field: at(index, "base_version"), code: "ahead_of_server", message: `at most ${current.version}, the record's server version` },
      ]), current);
    }

    // A member's delete of a membership they may not change (leaving) is the DELETE policy's
    // alone (step 3): the fields it would conflict on (the role) are ones only owners write. Any
    // other delete merges: a newer edit by someone else is never deleted unseen.
    const policyDecides = op.type === "delete" && definition.memberColumn !== null && unlockable;
    const merged = mergeOp(current, { type: op.type, base_version: policyDecides ? current!.version : op.base_version, data }, context);
    if (merged.outcome === "conflict") return conflict(merged.current, merged.fields);
    const next = merged.next;
    if (!merged.written) return finish({ op_id: opId, status: "applied", record: toSyncRecord(next) }, writtenHere());

    // The size of what clients write (recordDataBytes), bounded only where an op grows it: a
    // record the table's defaults took over the limit when created (a create counts the fields it
    // sends), or that a lower limit now exceeds, stays editable.
    if (next.data) {
      const bytes = recordDataBytes(next.data, definition.serverFields);
      if (bytes > limits.max_record_data_bytes && bytes > (live ? recordDataBytes(current.data!, definition.serverFields) : 0)) {
        return reject(rejection("PAYLOAD_TOO_LARGE", `the record's data would be ${bytes} bytes; at most ${limits.max_record_data_bytes}`, [
          { field: at(index, "data"), code: "too_large", message: `the record's data must be at most ${limits.max_record_data_bytes} bytes` },
        ]), current);
      }
    }
    const isLive = !next.deleted;
    if (!live && isLive && liveRecords + 1 > limits.max_live_records_per_user) {
      return reject(quotaExceeded(limits.max_live_records_per_user), current);
    }
    // A row re-created after this phase deleted it: the delete runs first, in its own phase, so
    // that its cascades run and the new row gets the table's defaults, not the old row's columns.
    if (isLive && current?.deleted && phase.start.get(key)?.deleted === false) {
      phases.push(phase);
      phase = { start: new Map(records), written: new Set(), cascaded: new Set(), readAt: new Map(), lastLive: new Map(), deletedByOp: new Set(), ops: new Map() };
    }
    // A row deleted as the batch read it that it could not lock (its DELETE policy is wider than
    // its UPDATE policy): another writer may change it before the delete runs, so the delete names
    // the version it was planned against. (A member leaving is the policy's alone, whatever the
    // role is by then.)
    const readAt = op.type === "delete" && unlockable && !policyDecides && !written.has(key) ? state.rowVersions?.get(key) : undefined;
    if (readAt !== undefined) phase.readAt.set(key, readAt);
    liveRecords += Number(isLive) - Number(live);
    provisional = next.version;
    records.set(key, next);
    if (isLive) {
      phase.lastLive.set(key, next);
      phase.deletedByOp.delete(key);
    } else {
      phase.deletedByOp.add(key);
    }
    noteScope(key, next);
    written.add(key);
    phase.written.add(key);
    phase.ops.set(key, { first: phase.ops.get(key)?.first ?? index, last: index });
    finish({ op_id: opId, status: "applied", record: toSyncRecord(next) }, key);
    if (definition.isScope && live && !isLive) {
      // The scope's rows the batch knows go with it. The delete's cascade writes the tombstones of
      // those the database holds in it, also of those an earlier op deleted (a co-owner leaving,
      // then deleting the list: the list's DELETE policy judges them as they were, as it judges
      // every op of the batch before its membership writes); one the batch moved into it is
      // deleted by its own write.
      const scope = new Set([key]);
      for (const inside of seenInScope.get(key) ?? []) {
        const record = records.get(inside)!;
        const rowDefinition = findCollection(record.collection);
        const heldInScope = inOneOf(scope, rowDefinition, phase.start.get(inside)?.data);
        if (record.deleted) {
          if (heldInScope && phase.written.has(inside)) phase.cascaded.add(inside);
          continue;
        }
        if (!inOneOf(scope, rowDefinition, record.data)) continue;
        const gone = mergeOp(record, { type: "delete", base_version: record.version }, { ...context, collection: record.collection, id: record.id, seq: ++provisional });
        if (gone.outcome !== "applied") continue;
        records.set(inside, gone.next);
        phase.deletedByOp.delete(inside);
        written.add(inside);
        phase.written.add(inside);
        cascaded.add(inside);
        if (heldInScope) phase.cascaded.add(inside);
      }
    }
  });

  phases.push(phase);
  const groups: WriteGroup[] = [];
  const phasesOf = new Map<string, { phase: number; kind: WriteGroup["kind"] }[]>();
  phases.forEach((p, i) => {
    for (const group of writeGroups(p, phases[i + 1]?.start ?? records)) {
      groups.push(group);
      if (phases.length > 1) for (const row of group.rows) {
        const key = recordKey(group.collection, row.id as string);
        phasesOf.set(key, [...phasesOf.get(key) ?? [], { phase: i, kind: group.kind }]);
      }
    }
  });
  for (const [key, steps] of phasesOf) if (steps.length < 2) phasesOf.delete(key);

  // A live record whose final state equals its initial one (e.g. `done` set to the value it
  // has) is not written and gets no new version: its ops answer with the record as it stands.
  const rowsWritten = new Set(groups.flatMap((g) => g.rows.map((row) => recordKey(g.collection, row.id as string))));
  for (const key of written) {
    const before = initial.get(key);
    if (!before || before.deleted || records.get(key)!.deleted || rowsWritten.has(key)) continue;
    written.delete(key);
    for (const p of planned) {
      if (p.writes !== key) continue;
      p.writes = undefined;
      if (p.result.record) p.result = { ...p.result, record: toSyncRecord(before) };
    }
  }
  const neverStored = neverStoredTrial(phases, records, rowsWritten);
  return { ops: planned, groups, written, phasesOf, ...(neverStored ? { neverStored } : {}) };
}

/**
 * BatchPlan.neverStored: the records a phase creates and deletes again (not live when it begins,
 * deleted when it ends) of which no phase writes a row, and the writes that try them.
 */
function neverStoredTrial(phases: Phase[], final: Map<string, ServerRecord>, rowsWritten: Set<string>): BatchPlan["neverStored"] {
  const created = new Map<string, { phase: number; record: ServerRecord }>();
  phases.forEach((p, i) => {
    const end = phases[i + 1]?.start ?? final;
    for (const [key, record] of p.lastLive) {
      if (p.start.get(key)?.deleted !== false && end.get(key)!.deleted && !rowsWritten.has(key)) created.set(key, { phase: i, record });
    }
  });
  if (created.size === 0) return undefined;
  const last = Math.max(...[...created.values()].map((c) => c.phase));
  const groups = phases.slice(0, last + 1).flatMap((p, i) =>
    writeGroups(p, phases[i + 1]?.start ?? final, new Map([...created].filter(([, c]) => c.phase === i).map(([key, c]) => [key, c.record])))
  );
  return { keys: new Set(created.keys()), groups: groups.filter((g) => !findCollection(g.collection)?.memberColumn) };
}

function changedColumns(before: ServerRecord, after: ServerRecord): string[] {
  return Object.keys(after.data ?? {}).filter((c) => !sameValue(after.data![c], before.data?.[c])).sort();
}

/**
 * What the database must do to take each written record from its state at
 * the start of a phase to its state at the end (a live record left as it was
 * needs nothing, nor one a scope delete's cascade deletes), one statement per
 * kind and table (inserts also per set of columns), in stages that keep the
 * batch's order wherever the database may judge a row by another (STAGES).
 */
function writeGroups(
  { written, start: initial, cascaded, readAt, deletedByOp, ops }: Phase,
  final: Map<string, ServerRecord>,
  /**
   * Records the phase creates and deletes again, to insert in this state all the same, and to delete
   * again where an op of theirs deleted them (BatchPlan.neverStored).
   */
  tried: Map<string, ServerRecord> = new Map(),
): WriteGroup[] {
  type Staged = Omit<WriteGroup, "columns"> & { stage: Stage; columns: Set<string> };
  const groups = new Map<string, Staged>();
  const add = (stage: Stage, collection: string, kind: WriteGroup["kind"], columns: string[], row: JsonObject, run = 0) => {
    const id = `${stage}:${kind}:${collection}:${run}${kind === "insert" ? `:${columns.join(",")}` : ""}`;
    let group = groups.get(id);
    if (!group) groups.set(id, group = { stage, collection, kind, columns: new Set(), rows: [] });
    group.rows.push(row);
    for (const column of columns) group.columns.add(column);
  };
  const stateOf = (key: string) => {
    const before = initial.get(key);
    const after = tried.get(key) ?? final.get(key)!;
    return { before, after, wasLive: before !== undefined && !before.deleted };
  };
  // The phase's first op that creates a record: the edits run before the creates only when all of
  // them came before it (a table's edits stay one statement, as a rename chain needs: "Bread" to
  // "Rye", then "Buns" to "Bread"; and the tables' edits keep their order: a list un-archived, then
  // an item moved into it). And its first op that creates or edits (a record edited, then deleted,
  // too): a delete runs first only when it came before that (a list un-archived, then one of its
  // items deleted, whose DELETE policy reads the list, keeps its place).
  let firstCreate = Infinity;
  let firstWrite = Infinity;
  let lastEdit = -Infinity;
  for (const key of written) {
    const { after, wasLive } = stateOf(key);
    const { first, last } = ops.get(key) ?? { first: Infinity, last: Infinity };
    if (!after.deleted && !wasLive) firstCreate = Math.min(firstCreate, first);
    if (!after.deleted && wasLive) lastEdit = Math.max(lastEdit, last);
    if (!after.deleted || first < last) firstWrite = Math.min(firstWrite, first);
  }
  const editsBeforeCreates = lastEdit < firstCreate;
  // A self-referencing table's creates start a new statement where their set of columns changes, so
  // that they run in the batch's order (a child, a new parent, a child of it).
  const insertRun = new Map<string, { columns: string; run: number }>();
  for (const key of written) {
    const { before, after, wasLive } = stateOf(key);
    if (!after.deleted && !wasLive) {
      // Created (or re-created after a delete): only the columns ops set; the table's defaults fill the rest.
      const columns = Object.keys(after.data ?? {}).sort();
      let run = 0;
      if (findCollection(after.collection)?.references.has(after.collection)) {
        const last = insertRun.get(after.collection);
        run = last === undefined ? 0 : last.run + Number(last.columns !== columns.join());
        insertRun.set(after.collection, { columns: columns.join(), run });
      }
      add("insert", after.collection, "insert", columns, { id: after.id, ...after.data }, run);
      if (tried.has(key) && deletedByOp.has(key)) add("delete", after.collection, "delete", [], { id: after.id });
    } else if (!after.deleted) {
      const columns = changedColumns(before!, after);
      const stage = editsBeforeCreates ? "edit before creates" : "edit";
      if (columns.length > 0) add(stage, after.collection, "update", columns, { id: after.id, ...Object.fromEntries(columns.map((c) => [c, after.data![c]])) });
    } else if (wasLive && !cascaded.has(key)) {
      const xmin = readAt.get(key);
      const early = !REFERENCED.has(after.collection) && (ops.get(key)?.last ?? Infinity) < firstWrite;
      add(early ? "delete before writes" : "delete", after.collection, "delete", [], xmin === undefined ? { id: after.id } : { id: after.id, xmin });
    }
  }
  // Within a stage, tables referred to first (deletes: last); groups of one rank keep their first
  // row's place in the batch (Array.prototype.sort is stable).
  const rank = (g: Staged) => (g.stage === "delete" ? -1 : 1) * (REFERENCE_RANK.get(g.collection) ?? 0);
  return [...groups.values()].sort((a, b) => STAGES.indexOf(a.stage) - STAGES.indexOf(b.stage) || rank(a) - rank(b))
    .map(({ collection, kind, columns, rows }): WriteGroup => ({ collection, kind, columns: [...columns].sort(), rows }));
}

/**
 * The order of a phase's writes (docs/sync.md "The order of a batch's writes"), each stage one
 * statement per table:
 * - deletes of rows no synced table refers to (a task) that came before every create and edit:
 *   first, so that a unique value (or the quota) they free is free for every write after them
 *   ("Milk" deleted, then added again);
 * - the edits, when all of them came before the batch's first create: before the creates, as the
 *   batch has them (a row renamed from `a`, then a new `a`);
 * - creates, of the tables other synced tables refer to first (REFERENCE_RANK: a list before its
 *   tasks, a project before its steps);
 * - the other edits, which may refer to the rows just created (a task moved into a new list);
 * - the other deletes, of the tables referring to others first, after every write that may have
 *   moved a row out of what they delete (a list, after the tasks moved out of it), and the deletes
 *   of records a trial creates and deletes again (BatchPlan.neverStored).
 * Each stage keeps the batch's order wherever it moves a write; where it cannot (a write kept in
 * its stage although the batch made it earlier), it keeps the order of the code before the stages:
 * creates, then edits, then deletes.
 */
const STAGES = ["delete before writes", "edit before creates", "insert", "edit", "delete"] as const;
type Stage = (typeof STAGES)[number];

/** The collections a synced table refers to by foreign key (a self-reference too). */
const REFERENCED: ReadonlySet<string> = new Set(allCollections().flatMap((c) => [...c.references]));

/**
 * Each collection's place among the synced tables: those it refers to by foreign key come first.
 * Its depth is 0 for one that refers to none, else one more than the deepest it refers to, not
 * counting references within a cycle (folders and their documents, each referring to the other;
 * a list pinning one of its tasks): the tables of a cycle keep the batch's order among themselves,
 * but a scope table comes before the other tables of its depth (a list before the tasks in it).
 */
const REFERENCE_RANK: ReadonlyMap<string, number> = (() => {
  const collections = allCollections();
  const refersTo = new Map(collections.map((c) => [c.name, [...c.references].filter((r) => r !== c.name)]));
  const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
    from === to || (!seen.has(from) && (seen.add(from), (refersTo.get(from) ?? []).some((r) => reaches(r, to, seen))));
  const depth = new Map<string, number>();
  const depthOf = (name: string): number => {
    if (!depth.has(name)) {
      const acyclic = (refersTo.get(name) ?? []).filter((r) => !reaches(r, name));
      depth.set(name, Math.max(0, ...acyclic.map((r) => depthOf(r) + 1)));
    }
    return depth.get(name)!;
  };
  return new Map(collections.map((c) => [c.name, depthOf(c.name) * 2 + (c.isScope ? 0 : 1)]));
})();
