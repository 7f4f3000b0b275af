// Turning what a local database reports as changed (Watermelon's dirty
// records, RxDB's push rows) into sync ops, given the ops already sent and
// not yet answered. Neither library remembers op_ids: each retry hands over
// the changed records again. Re-sending them as NEW ops is the bug that lets a
// retry overwrite a later edit of another device; instead a change the sent
// ops already carry is not sent again (the sent op goes out again with its
// op_id), and only what the record gained since becomes a new op. Pure.
import type { SyncOp } from "../../../functions/_shared/schemas/sync.ts";
import { isUuid } from "../../../functions/_shared/uuid.ts";
import type { OpRejectedEvent } from "../../events.ts";
import { jsonEqual } from "../../rebase.ts";
import type { RecordData } from "../../storage.ts";

/** A record the local database says differs from what the server last acknowledged. */
export interface LocalChange {
  collection: string;
  /** Lower-case uuid. */
  id: string;
  type: "upsert" | "delete";
  /** upsert: the fields the device changed, with their current local values (a create: every field it sets). */
  data?: RecordData;
  /** The server version the change started from; null for a record created on this device. */
  baseVersion: number | null;
}

/** The fields the sent ops of one record leave it with, and whether the last one deleted it. */
function sentState(sent: readonly SyncOp[]): { deleted: boolean; values: RecordData } {
  let deleted = false;
  let values: RecordData = {};
  for (const op of sent) {
    if (op.type === "delete") {
      deleted = true;
      values = {};
    } else {
      deleted = false;
      values = { ...values, ...(op.data ?? {}) };
    }
  }
  return { deleted, values };
}

/** New ops for `changes` behind the unanswered `sent` ones (which are re-sent as they are). */
export function planOps(sent: readonly SyncOp[], changes: readonly LocalChange[], newId: () => string): SyncOp[] {
  const byRecord = new Map<string, SyncOp[]>();
  for (const op of sent) {
    const key = `${op.collection}/${op.record_id}`;
    byRecord.set(key, [...(byRecord.get(key) ?? []), op]);
  }
  const ops: SyncOp[] = [];
  for (const change of changes) {
    const before = byRecord.get(`${change.collection}/${change.id}`) ?? [];
    const state = sentState(before);
    const base = { collection: change.collection, record_id: change.id, base_version: change.baseVersion };
    if (change.type === "delete") {
      if (before.length === 0 || !state.deleted) ops.push({ op_id: newId(), ...base, type: "delete" });
      continue;
    }
    const data = change.data ?? {};
    const remaining = before.length === 0 || state.deleted
      ? data
      : Object.fromEntries(Object.entries(data).filter(([field, value]) => !(Object.hasOwn(state.values, field) && jsonEqual(state.values[field], value))));
    if (Object.keys(remaining).length > 0) ops.push({ op_id: newId(), ...base, type: "upsert", data: remaining });
  }
  return ops;
}

/**
 * The server compares and returns ids as lower-case uuids: a record stored
 * locally under another id (Swift's `UUID().uuidString` is upper-case) would
 * come back as a second record. Such a change is not sent; the app is told
 * (op_rejected, VALIDATION_FAILED on /record_id) and must store lower-case ids.
 */
export function unsendableId(change: Pick<LocalChange, "collection" | "id" | "type">, opId: string): OpRejectedEvent | null {
  if (isUuid(change.id) && change.id === change.id.toLowerCase()) return null;
  return {
    type: "op_rejected",
    op: { op_id: opId, collection: change.collection, record_id: change.id.toLowerCase(), type: change.type, base_version: null },
    error: { code: "VALIDATION_FAILED", message: "record ids must be lower-case uuids", details: [{ field: "/record_id", code: "invalid_format", message: "must be a lower-case uuid (store ids as crypto.randomUUID() makes them)" }] },
    dropped: false,
  };
}
