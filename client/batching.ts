// Byte-aware batching of sync ops: cut the outbox into POST /v1/sync/batch
// bodies that stay within both limits GET /v1/meta publishes
// (`max_ops_per_batch` and `max_body_bytes`). Cutting by op count alone sends
// 150 notes of 9 KB as one 1.3 MB body, which the server refuses whole (413)
// on every retry. Pure and dependency-free, so every client (TidesyncClient,
// the WatermelonDB and RxDB adapters, an app's own) cuts batches the same way,
// and asks for pull pages the server takes (pullLimitOf).
//
// One more cut keeps the user's data, not the server's limits: a delete of a
// scope record (a list) ends the batch before it when an earlier op of the
// batch puts a record in a scope (an upsert setting its scope field: a task
// created in, or moved to, a list). Such an op answered `conflict` (another
// device changed one of its other fields) applies nothing, the move neither,
// and the delete's cascade, later in the same batch, would take the record;
// the rebased op carrying the move would come too late. In a later batch
// the delete goes once every op before it is answered and every rebased op
// queued in its original's place (client/outbox.ts) is sent: one round trip
// more, only then. Deletes and other edits before it share its batch: nothing
// of them needs the record outside the list.
//
// And no cut (that one, or the limits') falls between a scope record's delete
// and the deletes right before it, when they fit in one batch: the server
// takes an owner's delete of their own membership only in the batch of the
// list's delete (list_members_keep_an_owner), and deletes sent children first
// (the list's tasks, its memberships, the list) are one run. The batch then
// ends before as much of the run as the next one holds.
//
// And a batch ends before a create-style op (an upsert with no base version)
// of a record whose create is earlier in the batch: a write made before any
// create of the record was answered, after a write of another record (else it
// would have been merged into the create). Should the create be refused (its
// list gone, or no longer writable), the server would judge that later op, a
// patch, as a create on its own (a task moved to another list: no title) and
// refuse it too. In the next batch it goes once the create is answered: based
// on the version the create wrote, or carrying the refused create's data
// (client/outbox.ts, foldRefusedCreate). One round trip more, only then.
import type { Limits } from "../functions/_shared/limits.ts";
import type { MetaResponse } from "../functions/_shared/schemas/meta.ts";
import type { SyncOp } from "../functions/_shared/schemas/sync.ts";

/** Per collection, the field naming the scope its records are in (GET /v1/meta `collection_schemas[c].scope`; "id": a scope collection). */
export type ScopeFields = Readonly<Record<string, string>>;

export interface BatchBounds {
  /** At most this many ops in one batch (limits.max_ops_per_batch). */
  maxOps: number;
  /** At most this many bytes of request body (limits.max_body_bytes). */
  maxBodyBytes: number;
  /** The collections' scope fields: a scope record's delete then ends a batch that puts a record in a scope (above). */
  scopeFields?: ScopeFields;
}

/** The bounds a server publishes in GET /v1/meta: `limits`, and the scope of each of `collection_schemas`. */
export function batchBoundsOf(limits: Pick<Limits, "max_ops_per_batch" | "max_body_bytes">, collectionSchemas?: MetaResponse["collection_schemas"]): BatchBounds {
  return {
    maxOps: limits.max_ops_per_batch,
    maxBodyBytes: limits.max_body_bytes,
    ...(collectionSchemas ? { scopeFields: scopeFieldsOf(collectionSchemas) } : {}),
  };
}

/** The scope field of each collection GET /v1/meta describes. */
export function scopeFieldsOf(collectionSchemas: MetaResponse["collection_schemas"]): ScopeFields {
  return Object.fromEntries(Object.entries(collectionSchemas).map(([collection, { scope }]) => [collection, scope]));
}

/** The op deletes a scope record (a list): its cascade takes every record in it. */
function deletesScope(op: SyncOp, scopeFields: ScopeFields): boolean {
  return op.type === "delete" && scopeFields[op.collection] === "id";
}

/** An upsert with no base version: a create, or a write of a record whose create is not answered yet. */
function createStyle(op: SyncOp): boolean {
  return op.type === "upsert" && op.base_version === null;
}

/** The op puts its record in a scope: an upsert setting the record's scope field (a create, or a move). */
function placesInScope(op: SyncOp, scopeFields: ScopeFields): boolean {
  const field = scopeFields[op.collection];
  return op.type === "upsert" && field !== undefined && field !== "id" && op.data !== undefined && Object.hasOwn(op.data, field);
}

/**
 * Where to cut instead of before `ops[cut]` (an index in (`start`, `cut`]), when `ops[cut]` is a
 * scope record's delete or one of the deletes leading up to it: before the whole run of deletes
 * that ends in it when the next batch holds them; else before as many of them as it holds, back
 * to the last scope record's delete of the run at most (the run before that one stays with it).
 * The run is followed at most `maxOps` ops on.
 */
function cutBeforeDeleteRun(ops: readonly SyncOp[], bounds: BatchBounds, scopeFields: ScopeFields, deviceId: string | undefined, start: number, cut: number): number {
  if (ops[cut - 1]?.type !== "delete") return cut;
  let scopeDelete = -1;
  for (let i = cut; i < ops.length && i < cut + bounds.maxOps && ops[i].type === "delete"; i++) {
    if (deletesScope(ops[i], scopeFields)) {
      scopeDelete = i;
      break;
    }
  }
  if (scopeDelete < 0) return cut;
  const next = ops.slice(cut, scopeDelete + 1);
  let bytes = jsonBytes(deviceId === undefined ? { ops: next } : { device_id: deviceId, ops: next });
  let from = cut;
  let best = cut;
  let crossed = false;
  let fits = true;
  while (from - 1 > start && ops[from - 1].type === "delete") {
    bytes += jsonBytes(ops[from - 1]) + 1;
    fits = scopeDelete - from + 2 <= bounds.maxOps && bytes <= bounds.maxBodyBytes;
    if (!fits) break;
    from--;
    if (deletesScope(ops[from], scopeFields)) crossed = true;
    else if (!crossed) best = from;
  }
  // Past another scope record's delete, only the run's start is a cut that splits no run.
  const runStart = fits && ops[from - 1].type !== "delete";
  return runStart ? from : best;
}

/**
 * The `limit` a pull asks for: the app's page size (undefined: the server's default), at most the
 * `max_pull_limit` the server published (undefined: not known yet). A larger one is refused, 400
 * VALIDATION_FAILED, on every retry: the pull would never get a page.
 */
export function pullLimitOf(requested: number | undefined, maxPullLimit: number | undefined): number | undefined {
  return requested === undefined || maxPullLimit === undefined ? requested : Math.min(requested, maxPullLimit);
}

const encoder = new TextEncoder();

/** Bytes of `value` as UTF-8 JSON text: what it adds to a request body. */
export function jsonBytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).length;
}

/**
 * How many of `ops`, from index `start`, fit in one batch body sent with
 * `deviceId`: at most `maxOps` and `maxBodyBytes` (the exact size of
 * `JSON.stringify({ device_id, ops })`), and, with `scopeFields`, none from a
 * scope record's delete on when an earlier op of the batch puts a record in a
 * scope, and none of the deletes right before a scope record's delete the next
 * batch holds with it (above); and none from a create-style op of a record
 * created earlier in the batch (above). Always at least one when `ops` is not
 * empty: an op too large even alone is sent alone, and the server's answer
 * (413) is about that op only.
 */
export function fittingCount(ops: readonly SyncOp[], bounds: BatchBounds, deviceId?: string, start = 0): number {
  let bytes = jsonBytes(deviceId === undefined ? { ops: [] } : { device_id: deviceId, ops: [] });
  let count = 0;
  let placed = false;
  /** The records (collection/id) the batch creates so far. */
  const created = new Set<string>();
  for (let i = start; i < ops.length; i++) {
    const op = ops[i];
    if (count >= bounds.maxOps) break;
    if (createStyle(op)) {
      const record = `${op.collection}/${op.record_id}`;
      if (created.has(record)) break;
      created.add(record);
    }
    if (bounds.scopeFields) {
      if (placed && deletesScope(op, bounds.scopeFields)) break;
      placed ||= placesInScope(op, bounds.scopeFields);
    }
    // Every op after the first adds a comma.
    const size = jsonBytes(op) + (count > 0 ? 1 : 0);
    if (count > 0 && bytes + size > bounds.maxBodyBytes) break;
    bytes += size;
    count++;
  }
  const cut = start + count;
  if (!bounds.scopeFields || cut >= ops.length) return count;
  return cutBeforeDeleteRun(ops, bounds, bounds.scopeFields, deviceId, start, cut) - start;
}

/** `ops` cut, in order, into consecutive batches that each fit (see fittingCount). */
export function splitIntoBatches(ops: readonly SyncOp[], bounds: BatchBounds, deviceId?: string): SyncOp[][] {
  const batches: SyncOp[][] = [];
  for (let start = 0; start < ops.length;) {
    const count = fittingCount(ops, bounds, deviceId, start);
    batches.push(ops.slice(start, start + count));
    start += count;
  }
  return batches;
}
