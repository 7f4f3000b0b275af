// Coalescing of the outbox: what to store when the app writes a record that
// already has pending ops. Pure functions over the outbox, so the rules are
// unit-tested on their own. A new write is merged only into the LAST op of the
// whole outbox, when that op is of the same record (consecutive writes):
//   unsent upsert + upsert  → one upsert, the later values win per field
//   unsent upsert + delete  → one delete (or nothing at all if the record was
//                             only ever created locally and never sent)
//   anything sent           → never touched: the server may have applied it,
//                             so it is resent as is, with its op_id
// Merging into an earlier op would move the write ahead of the ops queued
// after it, and the server runs them in order: a task moved to a list created
// since would reach it before the list exists (NOT_FOUND, the task lost), a
// list's delete would take a task with it before the task's move out of it.
// The server's own rules (scopes, roles, foreign keys, triggers) decide which
// writes of two records commute; the client cannot, so it never reorders them.
// An app that keeps editing one record still queues one op for the run.
import type { SyncOp, SyncRecord } from "../functions/_shared/schemas/sync.ts";
import type { PendingOp, StorageChange } from "./storage.ts";

/** Pending ops of one record, oldest first. */
export function pendingFor(outbox: Iterable<PendingOp>, collection: string, recordId: string): PendingOp[] {
  const ops: PendingOp[] = [];
  for (const pending of outbox) {
    if (pending.op.collection === collection && pending.op.record_id === recordId) ops.push(pending);
  }
  return ops;
}

/**
 * The storage change that queues `incoming` behind `outbox`, coalescing it
 * with the outbox's last op when that is an unsent upsert of the same record.
 */
export function enqueueOp(outbox: Iterable<PendingOp>, incoming: PendingOp): Pick<StorageChange, "putOps" | "deleteOps"> {
  const queued = [...outbox];
  const forRecord = pendingFor(queued, incoming.op.collection, incoming.op.record_id);
  const last = forRecord.at(-1);
  if (!last || last !== queued.at(-1) || last.sent || last.op.type !== "upsert") return { putOps: [incoming] };

  if (incoming.op.type === "upsert") {
    // Same op_id, same base: the server sees one change with the union of the fields.
    const merged: SyncOp = { ...last.op, data: { ...(last.op.data ?? {}), ...(incoming.op.data ?? {}) } };
    return { putOps: [{ ...last, op: merged }] };
  }

  // upsert then delete
  if (forRecord.length === 1 && last.op.base_version === null) {
    // Created here and never sent: the server never heard of it, so nothing to send.
    return { deleteOps: [last.op.op_id] };
  }
  const deletion: SyncOp = { op_id: last.op.op_id, collection: last.op.collection, record_id: last.op.record_id, type: "delete", base_version: last.op.base_version };
  return { putOps: [{ ...last, op: deletion }] };
}

/**
 * The base_version of a new op of a record: the server version this device
 * holds, except over a tombstone that an answer stored while edits of the live
 * record were still queued. Those edits will conflict with that delete; a new
 * edit on top of them is the same lineage and takes their base, so it
 * conflicts too. Based on the tombstone it would be a deliberate re-create
 * (refused for missing required fields, or resurrecting the record).
 */
export function baseVersion(server: SyncRecord | undefined, queued: readonly PendingOp[]): number | null {
  const last = queued.at(-1);
  if (server?.deleted && last) return last.op.base_version;
  return server?.version ?? null;
}
