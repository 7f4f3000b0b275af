// The cursor decisions of GET /v1/sync/changes, pure (property-tested in
// tests/unit/plan-pull.unit.test.ts): which page to read for a cursor, when a
// cursor is too old or from another history of the database (410 RESYNC_REQUIRED), how the collections
// it was issued for differ from this server's, and the next position.
//
// Positions (docs/sync.md): a full sync pages through the visible live rows by
// (scope, collection, id), each page also catching up on the scopes already
// passed (rows written there, or scopes granted, by transactions the previous
// page's snapshot did not see); then incremental pulls follow change and
// access entries by (txid, seq, collection, id) from the snapshot bound
// `upper` the full sync started with, never past the xmin of the reader's own
// snapshot, below which no entry can appear any more.
import { ApiError } from "../../_shared/errors.ts";
import type { CursorPayload } from "./cursor.ts";
import { snapshotBelow } from "./cursor-snapshot.ts";

const SECONDS_PER_DAY = 86_400;
export const ZERO_UUID = "00000000-0000-0000-0000-000000000000";

export type FullKey = [scope: string, collection: string, id: string];
export type IncrementalKey = [txid: string, seq: number, collection: string, id: string];

/** A catch-up of passed keys that did not fit on one page (see FullRequest.catchUp). */
export interface CatchUp {
  /** Keys up to here are caught up as of `next`. */
  after: FullKey;
  /** The snapshot of the page that began the catch-up (pg_snapshot text, in the cursor form: cursor-snapshot.ts). */
  next: string;
}

export interface FullRequest {
  mode: "full";
  /** null: the first page, bound by its own snapshot */
  upper: string | null;
  /** Every key up to here was passed. */
  after: FullKey;
  /**
   * The previous page's snapshot (pg_snapshot text in the cursor form; null or absent: nothing passed yet, or
   * "upper:upper:"). The page lists again the rows of passed keys that a transaction this
   * snapshot did not see wrote, or whose scope such a transaction granted to the caller.
   */
  since?: string | null;
  /** Keys up to catchUp.after are caught up already (as of catchUp.next): catch up only after them. */
  catchUp?: CatchUp | null;
}

export type PageRequest = FullRequest | { mode: "incremental"; after: IncrementalKey };

export interface PageOutcome {
  hasMore: boolean;
  /** The snapshot bound the page was read under (the cursor's `upper` for a continued full sync). */
  upper: string;
  /** The page's own snapshot (pg_snapshot text, in the cursor form: cursor-snapshot.ts). */
  snapshot: string;
  /** Highest txid the retention purge has removed entries of ("0": none). */
  horizon: string;
  /** Key of the page's last entry (null for an empty page). */
  lastKey: FullKey | IncrementalKey | null;
  /** A full sync's page whose last entry is a passed key it caught up on (at or before the request's `after`). */
  lastCaughtUp: boolean;
}

/** Where the next page starts: the cursor's payload without its common fields. */
export type Position =
  | { mode: "full"; upper: string; after: FullKey; since: string; catch_up?: CatchUp }
  | { mode: "incremental"; after: IncrementalKey };

/** xmax of a pg_snapshot text "xmin:xmax:xip,…" (one past the latest completed txid): no txid at or above it had completed. */
const snapshotXmax = (snapshot: string) => BigInt(snapshot.split(":")[1]);
/** xmin of a pg_snapshot text: every txid below it had ended. */
const snapshotXmin = (snapshot: string) => BigInt(snapshot.split(":")[0]);

export function resyncRequired(): ApiError {
  return new ApiError("RESYNC_REQUIRED", "this cursor is older than the changes the server still keeps; discard local synced data and pull again without a cursor");
}

/**
 * How the collections a cursor was issued for (`issued`, the tags of its `synced`; none in a cursor
 * from before they were bound) differ from those this server pulls for it (`synced`: name → tag,
 * cursor.ts collectionTags). A collection whose tag the cursor lacks was added, or had its columns
 * changed, since the issuing server's deploy (or the cursor predates the tags): the cursor may have
 * passed its rows unlisted, or listed without those columns.
 */
export function collectionsChange(issued: readonly string[] | undefined, synced: ReadonlyMap<string, string>): {
  /** Tags the issuing server synced that this one does not know: a newer function's, or no longer synced. */
  unknown: string[];
  /** Collections this server pulls that the issuing server did not, or not with these columns. */
  missing: string[];
} {
  const theirs = new Set(issued ?? []);
  const mine = new Set(synced.values());
  return {
    unknown: [...theirs].filter((tag) => !mine.has(tag)),
    missing: [...synced].filter(([, tag]) => !theirs.has(tag)).map(([name]) => name),
  };
}

/**
 * How long after issuing a cursor its server may still be rolling out (its older instances
 * answering too): an older instance answers such a cursor 503 while it is younger than this, and
 * after it as any cursor predating its collections (410 when the device may hold their rows), so a
 * function rolled back after a schema change never keeps a device waiting longer (docs/sync.md,
 * "A deploy that adds or drops a synced collection").
 */
export const ROLLOUT_SECONDS = 300;

/** Whether a cursor naming collections this server does not know, as the database syncs them now, is a newer function's still rolling out. */
export function issuedDuringRollout(cursor: CursorPayload, nowSeconds: number): boolean {
  return nowSeconds - cursor.iat < ROLLOUT_SECONDS;
}

/**
 * 503 for a cursor naming a collection as the database syncs it now and this server does not know
 * it (a collection, or columns of one, it was not generated with): a newer function issued it (a
 * deploy under way). Following it would leave that collection, or those columns, out and move the
 * cursor past its rows; a 400 or 410 would make the device drop its cursor. The newer one serves it.
 */
export function issuedByNewerFunction(): ApiError {
  return new ApiError(
    "UNAVAILABLE",
    "this cursor was issued by a newer version of this server, which syncs collections or columns this one does not know (a deploy is under way); retry later",
    { headers: { "Retry-After": "10" } },
  );
}

/** 410 for a cursor that may have passed rows of collections its server did not sync, or synced with other columns (`missing`), so listed without them or not at all. */
export function collectionsChangedSince(missing: readonly string[]): ApiError {
  return new ApiError(
    "RESYNC_REQUIRED",
    `this server now syncs ${missing.join(", ")} with columns this cursor predates (the server that issued it did not sync that collection, ` +
      "or synced other columns of it, so rows the device holds may lack values the server has); discard local synced data and pull again without a cursor",
  );
}

/**
 * Whether `cursor` was issued to an earlier account with the caller's user id (deleted, then created
 * again with it: auth.admin.createUser({ id })), by the account's creation time `born` (epoch
 * microseconds; null: unknown, never refused). Its device may hold rows of lists that account was
 * shared: their access-loss entries went with it (sync_access rows go with auth.users), so no pull
 * removes them. A cursor naming its account's creation time is judged by it; one from before
 * (without `born`) by when it was issued: before the second the account was created (one issued in
 * that second passes, as before).
 */
export function issuedToEarlierAccount(cursor: CursorPayload, born: string | null): boolean {
  if (born === null) return false;
  if (cursor.born !== undefined) return BigInt(cursor.born) !== BigInt(born);
  return BigInt(cursor.iat) < BigInt(born) / 1_000_000n;
}

export function accountResyncRequired(): ApiError {
  return new ApiError(
    "RESYNC_REQUIRED",
    "this cursor was issued to an earlier account with this user id (deleted since); discard local synced data and pull again without a cursor",
  );
}

/** What to read for a cursor (null: a full sync from the start). Throws 410 for a cursor past the retention window. */
export function pageRequestFor(cursor: CursorPayload | null, nowSeconds: number, retentionDays: number): PageRequest {
  if (cursor === null) return { mode: "full", upper: null, after: [ZERO_UUID, "", ZERO_UUID] };
  if (nowSeconds - cursor.iat > retentionDays * SECONDS_PER_DAY) throw resyncRequired();
  if (cursor.mode === "incremental") return { mode: "incremental", after: cursor.after };
  return { mode: "full", upper: cursor.upper, after: cursor.after, since: cursor.since ?? snapshotBelow(cursor.upper), catchUp: cursor.catch_up ?? null };
}

/**
 * The next cursor position after a page, and whether to pull again now (has_more); 410 when
 * the purge may have removed an entry the holder of the cursor still needs (never without a cursor).
 *
 * A full sync (docs/sync.md, "2. A full sync lists every record") goes in rounds: the first
 * page of a round catches up on every passed key since the previous page's snapshot; when
 * that catch-up does not fit on the page, the next pages go on with it (catch_up) and the
 * round ends once it is done, every passed key then caught up as of the round's first
 * snapshot (`next`). It ends when a round's first page reads everything left: its snapshot
 * then shows no row the pages did not list.
 */
export function nextPosition(request: PageRequest, page: PageOutcome): { position: Position; hasMore: boolean } {
  // A pull without a cursor (a full sync's first page) has missed nothing: it lists the rows its own
  // snapshot shows, and every entry a purge it sees removed was committed before that purge, so that
  // snapshot shows its effect too. Purges after it are checked against `upper` by the pages and
  // pulls that follow. So it never answers 410: a device told to resync can always start over.
  if (request.mode !== "full" || request.upper !== null) {
    const horizon = BigInt(page.horizon);
    // Entries at or below the horizon are gone: a position there may have missed some.
    const from = request.mode === "full" ? BigInt(page.upper) : BigInt(request.after[0]);
    if (horizon > 0n && from <= horizon) throw resyncRequired();
    // A position beyond every transaction this database has begun (its snapshot's xmax) was issued by
    // another history of it: a point-in-time restore, or a database replaced, with the cursor secret
    // kept. Kept, it would skip every write until the counter passed it (docs/sync.md, "Restores").
    if (from > snapshotXmax(page.snapshot)) throw resyncRequired();
  }

  if (request.mode === "incremental") {
    if (page.hasMore) return { position: { mode: "incremental", after: page.lastKey as IncrementalKey }, hasMore: true };
    // Done: everything below the page's bound was delivered. (A position never moves back: the bound only grows.)
    if (BigInt(request.after[0]) >= BigInt(page.upper)) return { position: { mode: "incremental", after: request.after }, hasMore: false };
    return { position: { mode: "incremental", after: [page.upper, 0, "", ZERO_UUID] }, hasMore: false };
  }

  const upper = page.upper;
  // Passed keys are caught up as of this snapshot once the round under way ends.
  const roundStart = request.catchUp?.next ?? page.snapshot;
  if (page.hasMore && page.lastCaughtUp) {
    // The catch-up filled the page: go on with it after its last key, under the same `since`.
    const since = request.since ?? snapshotBelow(upper);
    return { position: { mode: "full", upper, after: request.after, since, catch_up: { after: page.lastKey as FullKey, next: roundStart } }, hasMore: true };
  }
  const after = page.lastKey !== null && !page.lastCaughtUp ? page.lastKey as FullKey : request.after;
  // More keys to read, or keys caught up only as of an older snapshot (a catch-up spanned pages): another round.
  if (page.hasMore || request.catchUp) return { position: { mode: "full", upper, after, since: roundStart }, hasMore: true };
  // Done: every row this page's snapshot shows was listed; what changed since has a txid at or
  // above `upper` (below it every transaction had ended when the sync began), and the
  // incremental pulls from there deliver it. The pages list no removals: when transactions ended
  // after `upper` before this page (its snapshot's xmin is above it), one may have removed a row
  // an earlier page listed (a list the user lost between pages), so the next page, the
  // incremental one from `upper`, comes now (has_more), and has_more: false still means the
  // device is up to date as of the last page's snapshot. A one-page full sync has no such page.
  const removedSince = BigInt(upper) < snapshotXmin(page.snapshot);
  return { position: { mode: "incremental", after: [upper, 0, "", ZERO_UUID] }, hasMore: removedSince };
}
