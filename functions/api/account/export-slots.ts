// At most `max` data exports of one function process stream at once. Each
// holds a pool connection for its whole download (up to EXPORT_TIME_LIMIT_MS,
// as long as a slow or stalled reader keeps it open), while a request of any
// other route holds one for milliseconds: without a cap, a few stalled
// downloads take the whole pool and every other request waits for a
// connection until it answers 503. One more export answers 429 RATE_LIMITED
// with Retry-After (docs/account-export.md), before the caller's export
// budget is spent: too many requests of this kind at once, which a client
// retries like any 429 (a 5xx would say the server failed, which it did not).
import { ApiError } from "../../_shared/errors.ts";

/** Seconds a refused export is told to wait: most exports take a few seconds. */
export const EXPORT_BUSY_RETRY_AFTER_S = 30;

export interface ExportSlots {
  /** Takes a slot, or throws 429 when all are taken; returns how to give it back (once, however often called). */
  take(): () => void;
}

export function exportSlots(max: number): ExportSlots {
  let taken = 0;
  return {
    take() {
      if (taken >= max) {
        throw new ApiError("RATE_LIMITED", "too many data exports are running on this server right now; retry after Retry-After seconds", {
          headers: { "Retry-After": String(EXPORT_BUSY_RETRY_AFTER_S) },
        });
      }
      taken++;
      let given = false;
      return () => {
        if (given) return;
        given = true;
        taken--;
      };
    },
  };
}
