// The cursor decisions of GET /v1/sync/changes, pure (property-tested in
// tests/unit/plan-pull.unit.test.ts): which page to read for a cursor, when a
// cursor is too old (410 RESYNC_REQUIRED), and the next position.
//
// Positions (docs/sync.md): a full sync pages through the visible live rows by
// (scope, collection, id) below the snapshot bound `upper` it started with;
// then incremental pulls follow change and access entries by (txid, seq,
// collection, id), never past the xmin of the reader's own snapshot, below
// which no entry can appear any more.
import { ApiError } from "../../_shared/errors.ts";
import type { CursorPayload } from "./cursor.ts";

const SECONDS_PER_DAY = 86_400;
export const ZERO_UUID = "00000000-0000-0000-0000-000000000000";

export type FullKey = [scope: string, collection: string, id: string];
export type IncrementalKey = [txid: string, seq: number, collection: string, id: string];

export type PageRequest =
  | { mode: "full"; /** null: the first page, bound by its own snapshot */ upper: string | null; after: FullKey }
  | { mode: "incremental"; after: IncrementalKey };

export interface PageOutcome {
  hasMore: boolean;
  /** The snapshot bound the page was read under (the cursor's `upper` for a continued full sync). */
  upper: string;
  /** Highest txid the retention purge has removed entries of ("0": none). */
  horizon: string;
  /** Key of the page's last entry (null for an empty page). */
  lastKey: FullKey | IncrementalKey | null;
}

export function resyncRequired(): ApiError {
  return new ApiError("RESYNC_REQUIRED", "this cursor is older than the changes the server still keeps; discard local synced data and pull again without a cursor");
}

/** What to read for a cursor (null: a full sync from the start). Throws 410 for a cursor past the retention window. */
export function pageRequestFor(cursor: CursorPayload | null, nowSeconds: number, retentionDays: number): PageRequest {
  if (cursor === null) return { mode: "full", upper: null, after: [ZERO_UUID, "", ZERO_UUID] };
  if (nowSeconds - cursor.iat > retentionDays * SECONDS_PER_DAY) throw resyncRequired();
  return cursor.mode === "full" ? { mode: "full", upper: cursor.upper, after: cursor.after } : { mode: "incremental", after: cursor.after };
}

/** The next cursor position after a page; 410 when the purge may have removed an entry the holder still needs. */
export function nextPosition(request: PageRequest, page: PageOutcome): Pick<CursorPayload, "mode"> & ({ mode: "full"; upper: string; after: FullKey } | { mode: "incremental"; after: IncrementalKey }) {
  const horizon = BigInt(page.horizon);
  // Entries at or below the horizon are gone: a position there may have missed some.
  const from = request.mode === "full" ? BigInt(page.upper) : BigInt(request.after[0]);
  if (horizon > 0n && from <= horizon) throw resyncRequired();

  if (page.hasMore) {
    if (request.mode === "full") return { mode: "full", upper: page.upper, after: page.lastKey as FullKey };
    return { mode: "incremental", after: page.lastKey as IncrementalKey };
  }
  // Done: everything below `upper` was delivered (for a full sync: every row
  // live when it started; what changed since has a txid at or above it).
  // (A position never moves back: the bound only grows.)
  if (request.mode === "incremental" && BigInt(request.after[0]) >= BigInt(page.upper)) return { mode: "incremental", after: request.after };
  return { mode: "incremental", after: [page.upper, 0, "", ZERO_UUID] };
}
