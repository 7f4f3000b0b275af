// The database side of GET /v1/sync/changes: one statement (so one snapshot)
// reads the caller's sync head and the next keyset page of their records in
// change_seq order, and lets Postgres build the `changes` JSON array itself.
// Runs inside deps.db.withUser: as role `authenticated`, RLS decides; the
// explicit user_id predicates only steer the (user_id, change_seq) index.
import type { Tx } from "../lib/db.ts";
import { WIRE_TIME_FORMAT } from "./wire-time.ts";

export interface PageRequest {
  userId: string;
  /** Exclusive lower bound: the cursor's seq (0 without a cursor). */
  afterSeq: number;
  /**
   * Tombstones at or below this seq cannot concern the caller: they are left
   * out, and their purge does not invalidate the cursor. Null on the first
   * page of a full sync: no tombstones at all (the client has nothing yet).
   */
  tombstoneFloor: number | null;
  /** Sorted distinct names, or null for every collection. */
  collections: string[] | null;
  limit: number;
}

export interface Page {
  /** The `changes` array as JSON text, built by Postgres. */
  changesJson: string;
  count: number;
  /** More matching changes exist after this page. */
  hasMore: boolean;
  /** change_seq of the page's last change (null for an empty page). */
  lastPageSeq: number | null;
  /** The user's sync_heads.last_seq in the same snapshot (0 before their first write). */
  headSeq: number;
  /** Tombstones at or below this seq were purged (0 when none). */
  purgedThroughSeq: number;
}

interface PageRow {
  head_seq: string | null;
  purged_through_seq: string | null;
  fetched: number;
  last_page_seq: string | null;
  changes: string;
}

export async function readChangesPage(tx: Tx, request: PageRequest): Promise<Page> {
  // Timestamps are formatted here, not by the session's TimeZone, so every
  // page prints them the same way (UTC, microseconds, as the push answers them).
  const [row] = await tx<PageRow[]>`
    with head as (
      select h.last_seq, h.purged_through_seq
      from app_private.sync_heads h
      where h.user_id = ${request.userId}::uuid
    ), fetched as (
      select r.collection, r.id, r.version, r.deleted, r.data, r.updated_at, r.change_seq
      from app_private.records r
      where r.user_id = ${request.userId}::uuid
        and r.change_seq > ${request.afterSeq}::bigint
        and (not r.deleted or r.change_seq > ${request.tombstoneFloor}::bigint)
        and (${request.collections}::text[] is null or r.collection = any (${request.collections}::text[]))
        -- a cursor whose floor is below the purge horizon gets 410: skip the scan
        and (${request.tombstoneFloor}::bigint is null
             or ${request.tombstoneFloor}::bigint >= coalesce((select head.purged_through_seq from head), 0))
      order by r.change_seq
      limit ${request.limit + 1}
    ), page as (
      select * from fetched order by fetched.change_seq limit ${request.limit}
    )
    select
      (select head.last_seq from head) as head_seq,
      (select head.purged_through_seq from head) as purged_through_seq,
      (select count(*) from fetched)::integer as fetched,
      (select max(page.change_seq) from page) as last_page_seq,
      coalesce(
        (select json_agg(
           json_build_object(
             'collection', page.collection,
             'id', page.id,
             'version', page.version,
             'deleted', page.deleted,
             'data', case when page.deleted then null else page.data end,
             'updated_at', to_char(page.updated_at at time zone 'UTC', ${WIRE_TIME_FORMAT}::text)
           ) order by page.change_seq)
         from page),
        '[]'::json
      )::text as changes`;
  const fetched = row.fetched;
  return {
    changesJson: row.changes,
    count: Math.min(fetched, request.limit),
    hasMore: fetched > request.limit,
    lastPageSeq: row.last_page_seq === null ? null : Number(row.last_page_seq),
    headSeq: row.head_seq === null ? 0 : Number(row.head_seq),
    purgedThroughSeq: row.purged_through_seq === null ? 0 : Number(row.purged_through_seq),
  };
}
