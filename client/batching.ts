// Byte-aware batching of sync ops: cut the outbox into POST /v1/sync/batch
// bodies that stay within both limits GET /v1/meta publishes
// (`max_ops_per_batch` and `max_body_bytes`). Cutting by op count alone sends
// 150 notes of 9 KB as one 1.3 MB body, which the server refuses whole (413)
// on every retry. Pure and dependency-free, so every client (TidesyncClient,
// the WatermelonDB and RxDB adapters, an app's own) cuts batches the same way,
// and asks for pull pages the server takes (pullLimitOf).
import type { Limits } from "../functions/_shared/limits.ts";
import type { SyncOp } from "../functions/_shared/schemas/sync.ts";

export interface BatchBounds {
  /** At most this many ops in one batch (limits.max_ops_per_batch). */
  maxOps: number;
  /** At most this many bytes of request body (limits.max_body_bytes). */
  maxBodyBytes: number;
}

/** The bounds a server publishes in GET /v1/meta `limits`. */
export function batchBoundsOf(limits: Pick<Limits, "max_ops_per_batch" | "max_body_bytes">): BatchBounds {
  return { maxOps: limits.max_ops_per_batch, maxBodyBytes: limits.max_body_bytes };
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
 * `JSON.stringify({ device_id, ops })`). Always at least one when `ops` is not
 * empty: an op too large even alone is sent alone, and the server's answer
 * (413) is about that op only.
 */
export function fittingCount(ops: readonly SyncOp[], bounds: BatchBounds, deviceId?: string, start = 0): number {
  let bytes = jsonBytes(deviceId === undefined ? { ops: [] } : { device_id: deviceId, ops: [] });
  let count = 0;
  for (let i = start; i < ops.length; i++) {
    const op = ops[i];
    if (count >= bounds.maxOps) break;
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
