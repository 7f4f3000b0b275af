// What a push does when POST /v1/sync/batch refuses a whole batch: nothing of
// it was applied (a batch commits atomically or not at all), so the only
// question is whether an op is at fault (the server's wording:
// functions/api/routes/sync-batch.ts, docs/errors.md):
// - 413 PAYLOAD_TOO_LARGE: the batch is over the server's limits; smaller
//   batches from now on, and an op refused even alone can never be sent.
// - 400 VALIDATION_FAILED whose every detail points into an op
//   (`/ops/<index>/…`, e.g. an op_id that is not a uuid): halve the batch until
//   that op is alone, then it can never be sent.
// - Anything else, a VALIDATION_FAILED about the request itself included
//   (`/device_id` unknown_device: the installation is not registered yet): no op
//   is at fault, so every op stays queued and the push fails; the same ops go
//   out again, unchanged, once the cause is gone.
// TidesyncClient and the adapters' pushOps both decide with BatchSize.
import type { SyncOpError } from "../functions/_shared/schemas/sync.ts";
import { TidesyncApiError } from "./api-error.ts";

const OP_POINTER = /^\/ops\/\d+(\/|$)/;

/** The refusal of a whole batch an op is at fault for, with what that op is rejected with; null for any other failure. */
export function batchRefusalOf(error: unknown): { kind: "too_large" | "broken_op"; error: SyncOpError } | null {
  if (!(error instanceof TidesyncApiError)) return null;
  if (error.code === "PAYLOAD_TOO_LARGE") return { kind: "too_large", error: { code: error.code, message: error.message } };
  const details = error.details ?? [];
  if (error.code === "VALIDATION_FAILED" && details.length > 0 && details.every((detail) => OP_POINTER.test(detail.field))) {
    return { kind: "broken_op", error: { code: error.code, message: error.message, details } };
  }
  return null;
}

/** The op count of the next batch of one push loop, as whole-batch refusals taught it. */
export class BatchSize {
  /** Halved for good by a 413: the server's limits are lower than assumed. */
  private allowed: number;
  /** Halved by a refusal naming an op, to isolate it; lifted by the next answered batch. */
  private isolating = Number.POSITIVE_INFINITY;

  constructor(max: number) {
    this.allowed = max;
  }

  get limit(): number {
    return Math.max(1, Math.min(this.allowed, this.isolating));
  }

  /**
   * After a batch of `size` ops was refused with `error`: `retry` (later
   * batches are smaller), `reject` (the op was alone: reject it locally), or
   * null (no op is at fault: keep them all and fail the push with `error`).
   */
  refused(error: unknown, size: number): { type: "retry" } | { type: "reject"; error: SyncOpError } | null {
    const refusal = batchRefusalOf(error);
    if (!refusal) return null;
    if (size <= 1) return { type: "reject", error: refusal.error };
    const half = Math.floor(size / 2);
    if (refusal.kind === "too_large") this.allowed = half;
    else this.isolating = half;
    return { type: "retry" };
  }

  answered(): void {
    this.isolating = Number.POSITIVE_INFINITY;
  }
}
