// The order an adapter sends a push's ops in. WatermelonDB and RxDB hand over
// what changed, not the order the app wrote it in (the core client's outbox
// keeps that order, client/outbox.ts), so the adapters order ops by a rule
// that keeps the user's data in the sequences an app makes:
//   1. every upsert, the collections parents first: a task created in a new
//      list reaches the server after the list;
//   2. then every delete, the collections children first: a task moved out of
//      a list goes before the list's delete (whose cascade would take it), an
//      editor's edits and deletes of a list's tasks before their leaving the
//      list (a delete of their list_members row: list it before tasks).
// Its limit: a write that needs a delete before it, e.g. a create reusing a
// unique value a delete frees, or one a quota only admits after a delete,
// is sent before that delete and refused (reported, op_rejected).
import type { SyncOp } from "../../../functions/_shared/schemas/sync.ts";

/**
 * When an op goes among the collections' ops (lower first): `collections` is
 * the app's synced collections, parents first. A collection not listed goes
 * with the last one.
 */
export function sendPhase(type: SyncOp["type"], collection: string, collections: readonly string[]): number {
  const listed = collections.indexOf(collection);
  const index = listed === -1 ? collections.length - 1 : listed;
  return type === "upsert" ? index : 2 * collections.length - 1 - index;
}

/**
 * `ops` in the order they are sent: by sendPhase, a phase's ops in their given order. A record's
 * op never goes before an earlier one of the same record (a re-create after its delete goes with
 * the delete), so the order of ordered ops, or of their collections' parts, orders them the same.
 */
export function orderOps(ops: readonly SyncOp[], collections: readonly string[]): SyncOp[] {
  const latest = new Map<string, number>();
  return ops.map((op, i) => {
    const key = `${op.collection}/${op.record_id}`;
    const phase = Math.max(sendPhase(op.type, op.collection, collections), latest.get(key) ?? 0);
    latest.set(key, phase);
    return { op, i, phase };
  })
    .sort((a, b) => a.phase - b.phase || a.i - b.i)
    .map(({ op }) => op);
}
