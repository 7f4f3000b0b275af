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
// For the same reason an op rebased after a conflict (rebase.ts) takes its
// original's place, ahead of the ops queued after it (outboxChange): at the
// end it would go after them, e.g. a task's move after its old list's delete,
// whose cascade takes the task.
// A create the server refused, of a record it holds nothing of, is carried on by
// the record's next queued create-style op when the user wrote the record again
// (foldRefusedCreate): the server judges the record as the user last wrote it.
// The client holds the outbox as an `Outbox`: each record's ops and the last
// op at hand, so a write costs the same behind 10 queued ops or 10,000.
import type { SyncOp, SyncRecord } from "../functions/_shared/schemas/sync.ts";
import { type PendingOp, recordKey, type StorageChange } from "./storage.ts";

/**
 * The outbox in memory: the ops by op_id in order (a replaced op keeps its place, a new one goes
 * last, as in the stores), with each record's ops and the last op at hand, so that a write looks
 * at its record's ops only, not at the whole outbox (queueing n writes offline took n² steps).
 */
export class Outbox {
  private readonly ops = new Map<string, PendingOp>();
  /** Each record's ops by op_id: the same puts and removals keep them in the outbox's order. */
  private readonly byRecord = new Map<string, Map<string, PendingOp>>();
  /** op_ids in the order they went last, some removed since (skipped): the last op without a scan. */
  private order: string[] = [];

  constructor(ops: Iterable<PendingOp> = []) {
    for (const pending of ops) this.set(pending);
  }

  get size(): number {
    return this.ops.size;
  }

  has(opId: string): boolean {
    return this.ops.has(opId);
  }

  get(opId: string): PendingOp | undefined {
    return this.ops.get(opId);
  }

  keys(): IterableIterator<string> {
    return this.ops.keys();
  }

  values(): IterableIterator<PendingOp> {
    return this.ops.values();
  }

  /** Puts `pending` in its op's place, or last if its op_id is not queued. */
  set(pending: PendingOp): void {
    const opId = pending.op.op_id;
    const key = recordKey(pending.op.collection, pending.op.record_id);
    const current = this.ops.get(opId);
    if (!current) this.order.push(opId);
    else if (recordKey(current.op.collection, current.op.record_id) !== key) this.removeFromRecord(current);
    this.ops.set(opId, pending);
    let forRecord = this.byRecord.get(key);
    if (!forRecord) this.byRecord.set(key, forRecord = new Map());
    forRecord.set(opId, pending);
  }

  delete(opId: string): boolean {
    const current = this.ops.get(opId);
    if (!current) return false;
    this.ops.delete(opId);
    this.removeFromRecord(current);
    if (this.order.length > 2 * this.ops.size + 64) this.order = [...this.ops.keys()];
    return true;
  }

  private removeFromRecord({ op }: PendingOp): void {
    const key = recordKey(op.collection, op.record_id);
    const forRecord = this.byRecord.get(key);
    forRecord?.delete(op.op_id);
    if (forRecord?.size === 0) this.byRecord.delete(key);
  }

  clear(): void {
    this.ops.clear();
    this.byRecord.clear();
    this.order = [];
  }

  /** The record's ops, oldest first. */
  forRecord(collection: string, recordId: string): PendingOp[] {
    return [...(this.byRecord.get(recordKey(collection, recordId))?.values() ?? [])];
  }

  /** The op queued last. */
  last(): PendingOp | undefined {
    // An op_id removed and put again went last again: its later entry is the one that counts.
    while (this.order.length > 0 && !this.ops.has(this.order.at(-1)!)) this.order.pop();
    const opId = this.order.at(-1);
    return opId === undefined ? undefined : this.ops.get(opId);
  }
}

/**
 * The storage change that queues `incoming` behind `outbox`, coalescing it
 * with the outbox's last op when that is an unsent upsert of the same record
 * on the same base version.
 */
export function enqueueOp(outbox: Iterable<PendingOp>, incoming: PendingOp): Pick<StorageChange, "putOps" | "deleteOps"> {
  const queued = outbox instanceof Outbox ? outbox : new Outbox(outbox);
  return enqueueBehind(queued.forRecord(incoming.op.collection, incoming.op.record_id), queued.last(), incoming);
}

/** enqueueOp given the record's queued ops (`forRecord`, oldest first) and the outbox's last op. */
export function enqueueBehind(forRecord: readonly PendingOp[], lastOfOutbox: PendingOp | undefined, incoming: PendingOp): Pick<StorageChange, "putOps" | "deleteOps"> {
  const last = forRecord.at(-1);
  if (!last || last !== lastOfOutbox || last.sent || last.op.type !== "upsert") return { putOps: [incoming] };
  // Made on a newer version (a pull brought another device's change since the queued op): the user
  // saw that change, so their write is judged against it, in an op of its own. Merged, it would go out
  // on the older base and conflict with what they saw (their untick discarded, their delete refused).
  if (incoming.op.base_version !== last.op.base_version) {
    // A delete makes the queued upsert moot: it goes, and the delete takes its place at the end.
    return incoming.op.type === "delete" ? { deleteOps: [last.op.op_id], putOps: [incoming] } : { putOps: [incoming] };
  }

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
 * A create the server refused (an upsert with no base version: `refused`, already out of
 * `outbox`), of a record the server holds nothing of: when the record's next queued op is an
 * unsent create-style upsert (written before any create of it was answered, after a write of
 * another record, so not merged into the create), that op takes the refused op's data under its own
 * (its fields win), keeping its op_id and place. The server then judges the record as the user last
 * wrote it: a task created in a list the user lost, then moved to a list of their own, is created
 * there with its title and notes, where the move alone would be refused as a create with no title.
 * Returns the folded op (put in `outbox`), or null when there is none to fold into. Never an op
 * already sent: it is resent as it left (exactly once by op_id); client/batching.ts sends the
 * record's later create-style ops only after its create's answer, so they are unsent then.
 */
export function foldRefusedCreate(outbox: Outbox, refused: SyncOp): PendingOp | null {
  if (refused.type !== "upsert" || refused.base_version !== null) return null;
  const [next] = outbox.forRecord(refused.collection, refused.record_id);
  if (!next || next.sent || next.op.type !== "upsert" || next.op.base_version !== null) return null;
  const folded: PendingOp = { ...next, op: { ...next.op, data: { ...(refused.data ?? {}), ...(next.op.data ?? {}) } } };
  outbox.set(folded);
  return folded;
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

/**
 * The storage change that turns the stored outbox `before` into `after` (the same ops, some
 * replaced, removed or new, in `after`'s order), with the stores' one ordering rule (`deleteOps`
 * first; a replaced op keeps its place, a new one goes last): from the first op out of place on,
 * the ops are removed and put again, in order. Only an op put in the middle (a rebased op in its
 * original's place) moves any, and then only the ops behind it.
 */
export function outboxChange(before: Iterable<PendingOp>, after: readonly PendingOp[]): Required<Pick<StorageChange, "putOps" | "deleteOps">> {
  const stored = new Map([...before].map((pending) => [pending.op.op_id, pending]));
  const kept = new Set(after.map((pending) => pending.op.op_id));
  const deleteOps = [...stored.keys()].filter((opId) => !kept.has(opId));
  const remaining = [...stored.keys()].filter((opId) => kept.has(opId));
  let inPlace = 0;
  while (inPlace < after.length && inPlace < remaining.length && after[inPlace].op.op_id === remaining[inPlace]) inPlace++;
  const putOps: PendingOp[] = [];
  for (const [i, pending] of after.entries()) {
    const current = stored.get(pending.op.op_id);
    if (i >= inPlace && current) deleteOps.push(pending.op.op_id);
    if (i >= inPlace || current !== pending) putOps.push(pending);
  }
  return { putOps, deleteOps };
}
