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
// the rebased op carrying the move would come too late. In a batch of its own
// the delete goes once every op before it is answered and every rebased op
// queued in its original's place (client/outbox.ts) is sent: one round trip
// more, only then. Deletes and other edits before it share its batch: nothing
// of them needs the record outside the list (and the server takes an owner's
// delete of their own membership only with the list's delete).
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

/** The op puts its record in a scope: an upsert setting the record's scope field (a create, or a move). */
function placesInScope(op: SyncOp, scopeFields: ScopeFields): boolean {
  const field = scopeFields[op.collection];
  return op.type === "upsert" && field !== undefined && field !== "id" && op.data !== undefined && Object.hasOwn(op.data, field);
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
 * scope (above). Always at least one when `ops` is not empty: an op too large
 * even alone is sent alone, and the server's answer (413) is about that op only.
 */
export function fittingCount(ops: readonly SyncOp[], bounds: BatchBounds, deviceId?: string, start = 0): number {
  let bytes = jsonBytes(deviceId === undefined ? { ops: [] } : { device_id: deviceId, ops: [] });
  let count = 0;
  let placed = false;
  for (let i = start; i < ops.length; i++) {
    const op = ops[i];
    if (count >= bounds.maxOps) break;
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
  return count;
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
