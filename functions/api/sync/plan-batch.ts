// Decides every op of a push batch in memory, in request order, from what the
// store read under the user's head lock: the ledger rows of the batch's op_ids
// and the current records the ops touch. Pure (no database), so the number of
// database round trips per batch stays constant whatever the op count.
//
// Per op, in this order: duplicate (ledger) → unknown collection → data on a
// delete → patch against the collection schema → base_version ahead of the
// server → field-level merge (conflict) → record data size → live-records
// quota → applied. Ops on the same record chain: each sees the state the
// previous one produced.
import { findCollection } from "../../_shared/collections.ts";
import type { FieldDetail } from "../../_shared/errors.ts";
import type { Limits } from "../../_shared/limits.ts";
import { mergeOp, type ServerRecord } from "../../_shared/merge.ts";
import { recordDataBytes } from "../../_shared/record-size.ts";
import type { SyncOp, SyncOpError, SyncOpResult, SyncRecord } from "../../_shared/schemas/sync.ts";
import { validationMessage, zodIssuesToDetails } from "../../_shared/validation-details.ts";

/** A first-time outcome, as stored in the ledger and replayed to duplicates. */
export type StoredOpResult = Omit<SyncOpResult, "status" | "original_status"> & { status: "applied" | "conflict" | "rejected" };

export interface BatchState {
  lastSeq: number;
  liveRecords: number;
  /** The ledger's stored result per op_id (lower-case) already processed for this user. */
  ledger: Map<string, StoredOpResult>;
  /** Current records by recordKey(collection, id). */
  records: Map<string, ServerRecord>;
}

export interface LedgerRow {
  op_id: string;
  device_id: string | null;
  collection: string;
  record_id: string;
  type: "upsert" | "delete";
  status: StoredOpResult["status"];
  result: StoredOpResult;
  version: number | null;
}

export interface BatchPlan {
  results: SyncOpResult[];
  /** Final state of every record the batch changes (one row per record). */
  writes: ServerRecord[];
  ledgerRows: LedgerRow[];
  lastSeq: number;
  liveRecords: number;
}

export function recordKey(collection: string, id: string): string {
  return `${collection}/${id.toLowerCase()}`;
}

export function toSyncRecord(record: ServerRecord): SyncRecord {
  return {
    collection: record.collection,
    id: record.id,
    version: record.version,
    deleted: record.deleted,
    data: record.data,
    updated_at: record.updated_at,
  };
}

function rejection(code: SyncOpError["code"], message: string, details: FieldDetail[]): SyncOpError {
  return { code, message, ...(details.length > 0 ? { details } : {}) };
}

/** Checks an op's content; returns why it must be rejected, or null. */
function validateOp(op: SyncOp, index: number): SyncOpError | null {
  const at = (...path: PropertyKey[]) => "/" + ["ops", index, ...path].join("/");
  const definition = findCollection(op.collection);
  if (!definition) {
    return rejection("VALIDATION_FAILED", `unknown collection ${JSON.stringify(op.collection)}`, [
      { field: at("collection"), code: "unknown_collection", message: "is not a collection of this server (see GET /v1/meta)" },
    ]);
  }
  if (op.type === "delete") {
    if (op.data !== undefined) {
      return rejection("VALIDATION_FAILED", "a delete carries no data", [
        { field: at("data"), code: "unexpected_field", message: "is not accepted on a delete" },
      ]);
    }
    return null;
  }
  const parsed = definition.patch.safeParse(op.data ?? {});
  if (!parsed.success) {
    const details = zodIssuesToDetails(parsed.error.issues, ["ops", index, "data"]);
    return rejection("VALIDATION_FAILED", validationMessage(details), details);
  }
  return null;
}

export function planBatch(
  ops: SyncOp[],
  deviceId: string | null,
  state: BatchState,
  limits: Pick<Limits, "max_record_data_bytes" | "max_live_records_per_user">,
  now: string,
): BatchPlan {
  const records = new Map(state.records);
  const written = new Map<string, ServerRecord>();
  const results: SyncOpResult[] = [];
  const ledgerRows: LedgerRow[] = [];
  let lastSeq = state.lastSeq;
  let liveRecords = state.liveRecords;

  ops.forEach((op, index) => {
    const original = state.ledger.get(op.op_id.toLowerCase());
    if (original) {
      const { status, ...rest } = original;
      results.push({ ...rest, op_id: op.op_id, status: "duplicate", original_status: status });
      return;
    }

    const finish = (result: StoredOpResult, version: number | null) => {
      results.push(result);
      ledgerRows.push({
        op_id: op.op_id,
        device_id: deviceId,
        collection: op.collection,
        record_id: op.record_id,
        type: op.type,
        status: result.status,
        result,
        version,
      });
    };
    const reject = (error: SyncOpError) => finish({ op_id: op.op_id, status: "rejected", error }, null);

    const invalid = validateOp(op, index);
    if (invalid) return reject(invalid);

    const key = recordKey(op.collection, op.record_id);
    const current = records.get(key) ?? null;
    if (current && op.base_version !== null && op.base_version > current.version) {
      return reject(rejection("VALIDATION_FAILED", "base_version is newer than the record's server version", [
        { field: `/ops/${index}/base_version`, code: "ahead_of_server", message: `at most ${current.version}, the record's server version` },
      ]));
    }

    const merged = mergeOp(current, op, {
      collection: op.collection,
      id: current?.id ?? op.record_id.toLowerCase(),
      deviceId,
      seq: lastSeq + 1,
      now,
      batchFloor: state.lastSeq,
    });
    if (merged.outcome === "conflict") {
      return finish({ op_id: op.op_id, status: "conflict", record: toSyncRecord(merged.current) }, null);
    }
    const next = merged.next;
    if (!merged.written) return finish({ op_id: op.op_id, status: "applied", record: toSyncRecord(next) }, next.version);

    if (next.data) {
      const bytes = recordDataBytes(next.data);
      if (bytes > limits.max_record_data_bytes) {
        return reject(rejection("PAYLOAD_TOO_LARGE", `the record's data would be ${bytes} bytes; at most ${limits.max_record_data_bytes}`, [
          { field: `/ops/${index}/data`, code: "too_large", message: `the record's data must be at most ${limits.max_record_data_bytes} bytes` },
        ]));
      }
    }
    const wasLive = current !== null && !current.deleted;
    const isLive = !next.deleted;
    if (!wasLive && isLive && liveRecords + 1 > limits.max_live_records_per_user) {
      return reject(rejection("QUOTA_EXCEEDED", `at most ${limits.max_live_records_per_user} live records per user; delete some first`, []));
    }

    liveRecords += Number(isLive) - Number(wasLive);
    lastSeq = next.version;
    records.set(key, next);
    written.set(key, next);
    finish({ op_id: op.op_id, status: "applied", record: toSyncRecord(next) }, next.version);
  });

  return { results, writes: [...written.values()], ledgerRows, lastSeq, liveRecords };
}
