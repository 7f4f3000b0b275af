// The database side of GET /v1/sync/changes: one statement (one snapshot) per
// page, run as the caller (deps.db.withUser: RLS decides), that lets Postgres
// build the entries of the `changes` JSON array itself (the function only
// joins them with commas). The work is proportional to the
// caller's scopes (app_private.visible_scope_ids(): what the scope table's
// policies let them read), never to the whole database: every read walks an
// index of one visible scope at a time.
//
// Full sync: the present rows of every visible scope, by (scope, collection,
// id); a page after the first also lists again the present rows of the
// scopes already passed that a transaction the previous page's snapshot did
// not see wrote (moved there, created) or whose scope it granted the caller,
// so that the pages together list every row the last one's snapshot shows
// (docs/sync.md, "2. A full sync lists every record"). Incremental: entries
// after the cursor in (txid, seq, collection, id) order, below the xmin of the
// statement's snapshot (docs/sync.md proves why
// that bound makes the order commit-safe), from three sources:
//   changed  — change entries of visible scopes (writes, deletes, moves);
//   granted  — every row of a scope the caller was given access to (present
//              ones with their state; those that left it, as removals);
//   revoked  — every row that was in a scope the caller lost access to, as of
//              the time they lost it (nothing of what others did after).
// Each listed record is resolved to what the caller may see of it NOW: its
// row through the table's own policies, or a removal (deleted: true, data null).
// Only records of the collections this server knows are listed; the others are
// passed (a collection synced after it was generated: docs/sync.md, "A deploy
// that adds or drops a synced collection", where passedRowsOf answers for them).
import type { CollectionDefinition } from "../../_shared/collections.ts";
import { DEFAULT_LIMITS } from "../../_shared/limits.ts";
import type { Tx } from "../lib/db.ts";
import { pgArray } from "../lib/pg-array.ts";
import { COLUMN_ENUM_LABELS_SQL, COLUMN_VALUE_TYPE_SQL } from "../../_shared/column-values-sql.ts";
import type { CollectionShape } from "./cursor.ts";
import { cursorSnapshot, sinceSnapshot, sinceSnapshotSql } from "./cursor-snapshot.ts";
import { perCollectionsInStep } from "./schema-drift.ts";
import { type FullKey, type IncrementalKey, type PageOutcome, type PageRequest, ZERO_UUID } from "./plan-pull.ts";
import { quoteLiteral, RECORDS_PER_ROW, recordJsonSql, rowJsonSql } from "./row-json.ts";
import { wireTimeSql as iso } from "./wire-time.ts";

/** Before every key: a catch-up of all the passed keys. */
const FIRST_KEY: FullKey = [ZERO_UUID, "", ZERO_UUID];
const PREPARED = { prepare: true } as const;

/**
 * SQL: the entry `c`'s (collection, id) comes after (`collection`, `id`) where `atKey` holds (the
 * scope, or the grant, the key is in), and any (collection, id) does elsewhere (no collection is
 * ''). Written so, with the scan's scope equality it is an index condition the scan STARTS at;
 * as an OR (or a row comparison that includes the scope or the grant's position) Postgres can
 * only filter with it, from the scope's first row on: every page re-read the rows before the
 * key, and paging through a big list cost O(N²) (docs/performance-history.md, "Issue 12").
 */
const keyAfterSql = (atKey: string, collection: string, id: string) =>
  `(c.collection, c.id) > (case when ${atKey} then ${collection} else '' end, case when ${atKey} then ${id} else '${ZERO_UUID}'::uuid end)`;

// A row's `data` as JSON text, read through the table's own policies (null:
// hidden or gone). One scalar subquery per collection, evaluated only for the
// rows of that collection (CASE). Only the collections whose tables match the
// generated definitions (schema-drift.ts): a pull never needs another one.
const rowDataSql = (collection: CollectionDefinition) =>
  `(select ${rowJsonSql(collection, "t")} from ${collection.table} t where t.id = l.id)`;
const rowDataCaseOf = (collections: readonly CollectionDefinition[]) =>
  `case l.collection ${collections.map((c) => `when ${quoteLiteral(c.name)} then ${rowDataSql(c)}`).join(" ")} end`;
/** The collections' names as a text[] literal. */
const namesSql = (collections: readonly CollectionDefinition[]) => `${quoteLiteral(pgArray(collections.map((c) => c.name)))}::text[]`;

/** How the page statement ends the page at its byte budget: the key of its last entry, in the cursor's form. */
interface Cut {
  /** SQL (jsonb) of the key of the row `row` of `latest` (the cursor's position after it). */
  key: (row: string) => string;
  /** SQL (boolean) of whether the row `row` is a passed key a full sync caught up on (PageOutcome.lastCaughtUp). */
  caughtUp: (row: string) => string;
  /** The statement's parameter that holds the budget, in bytes (limits.max_pull_page_bytes). */
  budget: string;
}

/**
 * Resolves `latest` (collection, id, key columns, revoked) into the page's
 * entries as JSON text, in `order`, RECORDS_PER_ROW of them per row (joined
 * by commas, row-json.ts). Each entry is concatenated text (collection names
 * match ^[a-z][a-z0-9_]*$ and ids are uuids, so nothing needs escaping but
 * `data`, which Postgres builds): no JSON value per entry is built, parsed or
 * re-serialised. The keys are numbered and sorted while narrow, the nested
 * loop keeps that order, and each row is aggregated from its presorted input,
 * the way Postgres documents for an aggregate without ORDER BY (no join at
 * that level): no sort of the wide entries.
 *
 * The page ends at the entry whose bytes (each entry's and its comma) reach
 * `cut.budget` (>=), whatever `limit` says (docs/sync.md, "Limits and their
 * errors"), so the function receives at most the budget and one entry. The
 * first entry is always listed (a page always progresses). Counted per row of
 * entries (their sizes collected with them, a running sum over those rows), and
 * only the row that reaches the budget is looked into and cut: not a window over
 * every entry, which cost an ordinary page ~1 µs per entry. That row carries
 * the key of its last entry (`last_key`: the next page goes on right after it),
 * whether that key was caught up on, and its number (`fetched`), when a row
 * comes after it (else the page ends there anyway).
 */
function entriesSql(order: string, mode: "full" | "incremental", collections: readonly CollectionDefinition[], cut: Cut): string {
  const rowDataCase = rowDataCaseOf(collections);
  // A present entry's seq and changed_at ARE the row's version and updated_at
  // (the sync triggers write both in the same statement, from the same seq
  // and now()): no lookup of sync_records. A full sync lists present entries
  // only. An incremental page lists them too (entry_is_row: a present entry
  // at its own position), and also entries listed at a grant's position and
  // removals (an entry no longer present, or of a scope the caller lost),
  // which are looked up, removals with the tombstone's version.
  const present = `select l.seq as version, l.changed_at as updated_at, r.data, r.data is not null as live
            from (select ${rowDataCase} as data offset 0) r`;
  const state = mode === "full" ? present : `${present}
           where l.entry_is_row
          union all
          select s.version, s.updated_at, r.data, (s.deleted is false and r.data is not null) as live
            from (select 1) one
            left join app_private.sync_records s on s.collection = l.collection and s.id = l.id
            -- offset 0: \`data\` is built once per entry, not once per use
            cross join lateral (select case when s.deleted is false then ${rowDataCase} end as data offset 0) r
           where not l.entry_is_row`;
  const chunk = RECORDS_PER_ROW;
  return `
    with numbered as not materialized (
      -- not materialized: the page's end reads it again, only when it ends the page
      select latest.*, row_number() over (order by ${order}) as rn
        from latest ${mode === "incremental" ? `where latest.collection = any (${namesSql(collections)})` : ""}
    )
    select case when k.rn is null then c.entries
                -- the chunk's entries up to the one that reached the budget (bytes: each entry's and its comma)
                else convert_from(substring(convert_to(c.entries, getdatabaseencoding()) from 1 for k.bytes::integer - 1), getdatabaseencoding())
           end as entries,
           k.last_key, k.last_caught_up, k.rn::integer as fetched
      from (
        -- the bytes of the chunks before (a window over a row per chunk, not per entry)
        select c.*, coalesce(sum(octet_length(c.entries) + 1) over (order by c.chunk rows between unbounded preceding and 1 preceding), 0) as before
          from (
            select x.chunk, string_agg(x.entry, ',') as entries, array_agg(octet_length(x.entry) + 1) as sizes
              from (
                select l.chunk, case
                    when e.live then
                      ${recordJsonSql({ collection: "l.collection", id: "l.id", version: "e.version", deleted: "'false'", data: "e.data", updatedAt: "e.updated_at" })}
                    else
                      ${mode === "full" ? "null" : recordJsonSql({
    collection: "l.collection",
    id: "l.id",
    version: "coalesce(e.version, l.seq)",
    deleted: "'true'",
    data: "'null'",
    updatedAt: "coalesce(e.updated_at, l.changed_at)",
    reason: `case when l.revoked then ',"reason":"access_revoked"' else '' end`,
  })}
                  end as entry
                  -- Entries of a collection this server does not know (one synced after it was generated:
                  -- docs/versioning.md) are passed, never listed: not even as removals (numbered). The cursor
                  -- says which collections it went past (cursor.ts \`synced\`). (A full sync lists live rows
                  -- only, and such an entry has no data: no filter, whose cost a page would pay per entry.)
                  -- A row a full sync does not list has a null entry: no bytes, no text (string_agg skips it)
                  -- and still its place in the chunk's sizes (the ${chunk} rows of chunk c are rn ${chunk}c + 1..).
                  from (select n.*, (n.rn - 1) / ${chunk} as chunk from numbered n order by chunk, n.rn) l
                  cross join lateral (
                    ${state}
                  ) e
                 order by l.chunk, l.rn
              ) x
             group by x.chunk
          ) c
      ) c
      -- the chunk whose entries reach the budget: its entry that does (k.rn), if a row comes after it
      left join lateral (
        select k.rn, k.bytes, ${cut.key("n")} as last_key, ${cut.caughtUp("n")} as last_caught_up
          from (
            select ${chunk} * c.chunk + u.o as rn, u.bytes
              -- (the sizes of that chunk only: none of the others)
              from (select u.o, sum(u.size) over (order by u.o) as bytes
                      from unnest(case when c.before + octet_length(c.entries) + 1 >= ${cut.budget}::bigint then c.sizes end)
                           with ordinality u(size, o)) u
             where c.before + u.bytes >= ${cut.budget}::bigint
             order by u.o
             limit 1
          ) k
          join numbered n on n.rn = k.rn
         where k.rn < (select count(*) from numbered)
      ) k on true
     where c.before < ${cut.budget}::bigint and c.entries is not null
     order by c.chunk`;
}

/**
 * The page's rows: first one row of what the page is (the snapshot's upper
 * bound, the purge horizon, the time, how many candidates were read, the count
 * of disable_syncs, the account's creation time, the last listed key; `entries`
 * null), then the entries, in order (the row that ends the page at its byte
 * budget says so: entriesSql). UNION ALL runs its
 * branches in order, and the plan is never parallel (PAGE_SETTINGS_SQL).
 */
const pageRowsSql = (page: { lastKey: string; snapshot: string; lastCaughtUp: string }, entries: string) => `
  select
    (select upper::text from bounds) as upper,
    (${page.snapshot}) as snapshot,
    (select horizon::text from bounds) as horizon,
    (select now from bounds) as server_time,
    (select count(*) from candidates)::integer as fetched,
    (select h.resyncs::text from app_private.sync_horizon h) as resyncs,
    -- the caller's account's creation time (epoch microseconds), which the cursor names
    (select trunc(extract(epoch from a.created_at) * 1000000)::text
       from (select app_private.account_created_at() as created_at) a where isfinite(a.created_at)) as born,
    (${page.lastKey}) as last_key,
    (${page.lastCaughtUp}) as last_caught_up,
    null::text as entries
  union all
  (select null, null, null, null, entries.fetched, null, null, entries.last_key, entries.last_caught_up, entries.entries from (${entries}) entries)`;

// $1 upper or null (first page), $2..$4 after (scope, collection, id), $5 limit, $6 collections filter or null,
// $7 since: the previous page's snapshot (null: the first page) without its counted in-progress ids, $11 how
// many it counted (null: none) in [$13, $12] (cursor-snapshot.ts), $8..$10 the key the catch-up of passed
// keys goes on after (ZERO_UUID, '', ZERO_UUID: all of them), $14 the page's byte budget
const fullSql = (collections: readonly CollectionDefinition[]) => `
  with bounds as materialized (
    select coalesce($1::text::xid8, pg_snapshot_xmin(pg_current_snapshot())) as upper,
           s.since,
           -- its own column: a bound the index scans start at (pg_snapshot_xmin of a subquery is only a filter)
           pg_snapshot_xmin(s.since) as since_xmin,
           (select h.purged_txid from app_private.sync_horizon h) as horizon,
           ${iso("now()")} as now
      from (select coalesce(${sinceSnapshotSql({ snapshot: "$7", count: "$11", lo: "$13", hi: "$12", now: "pg_current_snapshot()" })},
                            pg_current_snapshot()) as since) s
  ), visible as materialized (
    select distinct v.scope_id from unnest(app_private.visible_scope_ids()) as v(scope_id)
  ), ahead as (
    -- the keys after $2..$4: every present row
    select s.scope_id, c.collection, c.id, c.seq, c.changed_at
      from visible s
     cross join lateral (
       select c.collection, c.id, c.seq, c.changed_at
         from app_private.sync_changes c
        where c.scope_id = s.scope_id and c.present
          -- after the key in the key's scope, every row in a later scope
          and ${keyAfterSql("s.scope_id = $2::uuid", "$3::text", "$4::uuid")}
          and ($6::text[] is null or c.collection = any ($6::text[]))
        order by c.collection, c.id
        limit $5::integer + 1
     ) c
     where s.scope_id >= $2::uuid
     order by s.scope_id, c.collection, c.id
     limit $5::integer + 1
  ), granted as materialized (
    -- passed scopes that a transaction the previous page did not see granted the caller: all their rows again
    select a.scope_id
      from app_private.sync_access a
     where a.user_id = (select auth.uid())
       and a.txid >= (select since_xmin from bounds)
       and not pg_visible_in_snapshot(a.txid, (select since from bounds))
       and a.granted
       and a.scope_id between $8::uuid and $2::uuid
       and a.scope_id in (select scope_id from visible)
  ), regranted as (
    select g.scope_id, c.collection, c.id, c.seq, c.changed_at
      from granted g
     cross join lateral (
       select c.collection, c.id, c.seq, c.changed_at
         from app_private.sync_changes c
        where c.scope_id = g.scope_id and c.present
          and ${keyAfterSql("g.scope_id = $8::uuid", "$9::text", "$10::uuid")}
          and ($6::text[] is null or c.collection = any ($6::text[]))
        order by c.collection, c.id
        limit $5::integer + 1
     ) c
     -- at most the key: the rows after it are those ahead (the scan above stops at limit + 1 rows)
     where (g.scope_id, c.collection, c.id) <= ($2::uuid, $3::text, $4::uuid)
     order by g.scope_id, c.collection, c.id
     limit $5::integer + 1
  ), recent as (
    -- the other passed scopes: rows a transaction the previous page did not see wrote (created, moved
    -- in), by the scope's position index from the oldest such transaction (few: the page's interval)
    select s.scope_id, c.collection, c.id, c.seq, c.changed_at
      from visible s
     cross join lateral (
       select c.collection, c.id, c.seq, c.changed_at
         from app_private.sync_changes c
        where c.scope_id = s.scope_id
          and c.txid >= (select since_xmin from bounds)
          and not pg_visible_in_snapshot(c.txid, (select since from bounds))
          and c.present
          and ($6::text[] is null or c.collection = any ($6::text[]))
        offset 0
     ) c
     where s.scope_id between $8::uuid and $2::uuid
       and s.scope_id not in (select scope_id from granted)
       and (s.scope_id, c.collection, c.id) > ($8::uuid, $9::text, $10::uuid)
       and (s.scope_id, c.collection, c.id) <= ($2::uuid, $3::text, $4::uuid)
     order by s.scope_id, c.collection, c.id
     limit $5::integer + 1
  ), candidates as (
    -- passed keys caught up on first (they sort before the key), then the keys ahead
    select x.*
      from (select * from recent union all select * from regranted union all select * from ahead) x
     order by x.scope_id, x.collection, x.id
     limit $5::integer + 1
  ), page as (
    select * from candidates order by scope_id, collection, id limit $5::integer
  ), last_listed as materialized (
    select p.scope_id, p.collection, p.id from page p order by p.scope_id desc, p.collection desc, p.id desc limit 1
  ), latest as (
    select p.scope_id, p.collection, p.id, p.seq, p.changed_at, false as revoked from page p
  )
  ${pageRowsSql({
  lastKey: "select jsonb_build_array(l.scope_id, l.collection, l.id) from last_listed l",
  snapshot: "select pg_current_snapshot()::text",
  // a passed key (caught up), not one ahead
  lastCaughtUp: "select (l.scope_id, l.collection, l.id) <= ($2::uuid, $3::text, $4::uuid) from last_listed l",
},
  entriesSql("scope_id, collection, id", "full", collections, {
    key: (r) => `jsonb_build_array(${r}.scope_id, ${r}.collection, ${r}.id)`,
    caughtUp: (r) => `(${r}.scope_id, ${r}.collection, ${r}.id) <= ($2::uuid, $3::text, $4::uuid)`,
    budget: "$14",
  }),
)}`;

// $1..$4 after (txid, seq, collection, id), $5 limit, $6 collections filter or null, $7 the page's byte budget
const incrementalSql = (collections: readonly CollectionDefinition[]) => `
  with bounds as materialized (
    select pg_snapshot_xmin(pg_current_snapshot()) as upper,
           (select h.purged_txid from app_private.sync_horizon h) as horizon,
           ${iso("now()")} as now
  ), scopes as materialized (
    select distinct v.scope_id from unnest(app_private.visible_scope_ids()) as v(scope_id)
  ), access as materialized (
    select a.scope_id, a.granted, a.txid, a.seq, a.changed_at
      from app_private.sync_access a
     where a.user_id = (select auth.uid())
       and (a.txid, a.seq) >= ($1::text::xid8, $2::bigint)
       and a.txid < (select upper from bounds)
  ), changed as (
    select c.txid, c.seq, c.collection, c.id, c.changed_at, c.present as entry_is_row, false as revoked
      from scopes s
     cross join lateral (
       select c.txid, c.seq, c.collection, c.id, c.changed_at, c.present
         from app_private.sync_changes c
        where c.scope_id = s.scope_id
          and (c.txid, c.seq) >= ($1::text::xid8, $2::bigint)
          -- strictly after the cursor here, not only in candidates: the entry AT the cursor
          -- would take one of the limit + 1 rows and hide that there is more (has_more)
          and (c.txid, c.seq, c.collection, c.id) > ($1::text::xid8, $2::bigint, $3::text, $4::uuid)
          and c.txid < (select upper from bounds)
          and ($6::text[] is null or c.collection = any ($6::text[]))
        order by c.txid, c.seq
        limit $5::integer + 1
     ) c
  ), granted as (
    -- Every entry of the scope, not only its present rows: a device may still hold a row that
    -- was deleted or moved away while the caller was out of the scope and its cursor passed
    -- that entry unseen (removed, then re-added before the device read the removal).
    -- at the grant's position (a.txid, a.seq), not the entry's own: not entry_is_row
    select a.txid, a.seq, c.collection, c.id, c.changed_at, false as entry_is_row, false as revoked
      from access a
     cross join lateral (
       select c.collection, c.id, c.changed_at
         from app_private.sync_changes c
        where c.scope_id = a.scope_id
          -- after the cursor's key in the grant the cursor is at, all of a later one
          and ${keyAfterSql("(a.txid, a.seq) = ($1::text::xid8, $2::bigint)", "$3::text", "$4::uuid")}
          and ($6::text[] is null or c.collection = any ($6::text[]))
        order by c.collection, c.id
        limit $5::integer + 1
     ) c
     where a.granted and a.scope_id in (select scope_id from scopes)
  ), revoked as (
    -- at the time access was lost (a removal the caller can no longer look up says when), never the
    -- entry's own: that is the row's latest change, possibly made by others after they left
    select a.txid, a.seq, c.collection, c.id, a.changed_at, false as entry_is_row, true as revoked
      from access a
     cross join lateral (
       select c.collection, c.id
         from app_private.sync_changes c
        where c.scope_id = a.scope_id and c.since_seq <= a.seq
          and ${keyAfterSql("(a.txid, a.seq) = ($1::text::xid8, $2::bigint)", "$3::text", "$4::uuid")}
          and ($6::text[] is null or c.collection = any ($6::text[]))
        order by c.collection, c.id
        limit $5::integer + 1
     ) c
     where not a.granted and a.scope_id not in (select scope_id from scopes)
  ), candidates as (
    select x.*
      from (select * from changed union all select * from granted union all select * from revoked) x
     where (x.txid, x.seq, x.collection, x.id) > ($1::text::xid8, $2::bigint, $3::text, $4::uuid)
     order by x.txid, x.seq, x.collection, x.id
     limit $5::integer + 1
  ), page as (
    select * from candidates order by txid, seq, collection, id limit $5::integer
  ), latest as (
    -- a record listed twice on a page (moved between two visible scopes) once, at its last position
    select distinct on (p.collection, p.id) p.* from page p order by p.collection, p.id, p.txid desc, p.seq desc
  )
  ${pageRowsSql({
  lastKey: "select jsonb_build_array(p.txid::text, p.seq, p.collection, p.id) from page p order by p.txid desc, p.seq desc, p.collection desc, p.id desc limit 1",
  snapshot: "select pg_current_snapshot()::text",
  lastCaughtUp: "select false",
},
  entriesSql("txid, seq, collection, id", "incremental", collections, {
    key: (r) => `jsonb_build_array(${r}.txid::text, ${r}.seq, ${r}.collection, ${r}.id)`,
    caughtUp: () => "false",
    budget: "$7",
  }),
)}`;

const statements = perCollectionsInStep((collections) => ({ full: fullSql(collections), incremental: incrementalSql(collections) }));

// Every read walks one scope's index in key order and stops at the page.
// The planner estimates a scope's rows by the AVERAGE scope, so once other
// users' small lists fill the table it prefers a bitmap scan + sort, which
// reads every entry of the caller's (big) scope after the key on every page
// (3.6× slower with 1,000,000 other rows, docs/performance-history.md): bitmap scans
// off. And no parallel plan, so the page's rows come in the order pageRowsSql
// writes them. And no JIT: the statement's estimated cost grows with the
// tables until it passes jit_above_cost (100,000 tasks did), and then every
// page compiled ~230 functions first, ~80 ms of CPU for a page that runs in
// ~10. For this transaction only, pipelined with the page (no extra round trip).
const PAGE_SETTINGS_SQL = `select set_config('enable_bitmapscan', 'off', true), set_config('max_parallel_workers_per_gather', '0', true),
                                  set_config('jit', 'off', true)`;

export interface Page extends PageOutcome {
  /** The page's entries, in page order: runs of JSON objects joined by commas, as the UTF-8 bytes Postgres sent. */
  entries: Uint8Array[];
  /** Entries read for the page (removals included; a full sync skips rows the policies hide). */
  count: number;
  serverTime: string;
  /** How many times disable_sync has run (app_private.sync_horizon.resyncs), as the page's snapshot saw it. */
  resyncs: number;
  /** The caller's account's auth.users.created_at, epoch microseconds (null: none, infinite, or the account is gone). */
  born: string | null;
}

const META_COLUMNS = ["upper", "snapshot", "horizon", "server_time", "fetched", "resyncs", "born", "last_key", "last_caught_up"] as const;
/** The page statement's columns, in order (bench/time-breakdown.ts fakes an empty page with them). */
export const COLUMNS = [...META_COLUMNS, "entries"] as const;
type RawRow = readonly (Uint8Array | null)[];
const utf8 = new TextDecoder();
const text = (bytes: Uint8Array | null): string => (bytes === null ? "" : utf8.decode(bytes));

type Columns = Record<(typeof META_COLUMNS)[number], Uint8Array | null>;
const columnsOf = (row: RawRow) => Object.fromEntries(META_COLUMNS.map((name, i) => [name, row[i]])) as Columns;

/**
 * The page's rows as the bytes Postgres sent (postgres.js `.raw()`): the
 * entries go to the response as they came, never decoded into strings and
 * encoded again. The row without entries is the page's own; an entries row
 * with a `last_key` is where the page ended at its byte budget (entriesSql).
 */
function pageRows(result: { columns: readonly { name: string }[] } & readonly RawRow[]): { meta: Columns; cut: Columns | null; entries: Uint8Array[] } {
  const names = result.columns.map((column) => column.name);
  if (names.join() !== COLUMNS.join()) throw new Error(`the page statement returned columns ${names.join()}`);
  const entry = COLUMNS.indexOf("entries");
  const lastKey = COLUMNS.indexOf("last_key");
  let metaRow: RawRow | undefined;
  let cutRow: RawRow | undefined;
  const entries: Uint8Array[] = [];
  for (const row of result) {
    const bytes = row[entry];
    if (bytes === null) metaRow = row;
    else {
      entries.push(bytes);
      if (row[lastKey] !== null) cutRow = row;
    }
  }
  if (!metaRow) throw new Error("the page statement returned no page row");
  return { meta: columnsOf(metaRow), cut: cutRow ? columnsOf(cutRow) : null, entries };
}

/**
 * One page of at most `limit` entries, ended early after the entry that takes its bytes past
 * `maxBytes` (limits.max_pull_page_bytes): then has_more, and the page's last key is that entry's.
 */
export async function readChangesPage(
  tx: Tx,
  request: PageRequest,
  collections: string[] | null,
  limit: number,
  maxBytes: number = DEFAULT_LIMITS.max_pull_page_bytes,
): Promise<Page> {
  const filter = collections === null ? null : `{${collections.join(",")}}`;
  const settings = tx.unsafe(PAGE_SETTINGS_SQL, [], PREPARED);
  const { full, incremental } = statements();
  const since = request.mode === "full" && request.since ? sinceSnapshot(request.since) : null;
  const page = request.mode === "full"
    ? tx.unsafe(full, [
      request.upper, ...request.after, limit, filter, since?.snapshot ?? null, ...(request.catchUp?.after ?? FIRST_KEY),
      since?.counted?.count ?? null, since?.counted?.hi ?? null, since?.counted?.lo ?? null, maxBytes,
    ], PREPARED).raw()
    : tx.unsafe(incremental, [...request.after, limit, filter, maxBytes], PREPARED).raw();
  const [, result] = await Promise.all([settings, page]);
  const { meta, cut, entries } = pageRows(result);
  // ended at the budget: the page is its entries up to the one that passed it (`fetched`: its number)
  const ends = cut ?? meta;
  const fetched = Number(text(ends.fetched));
  const key = ends.last_key === null ? null : JSON.parse(text(ends.last_key)) as unknown[];
  const lastKey = key === null ? null : request.mode === "incremental"
    ? [String(key[0]), Number(key[1]), String(key[2]), String(key[3])] as IncrementalKey
    : key as FullKey;
  return {
    entries,
    count: cut ? fetched : Math.min(fetched, limit),
    hasMore: cut !== null || fetched > limit,
    upper: text(meta.upper),
    snapshot: cursorSnapshot(text(meta.snapshot)),
    horizon: text(meta.horizon),
    lastKey,
    // postgres.js raw(): a boolean as Postgres' text, "t" or "f"
    lastCaughtUp: text(ends.last_caught_up) === "t",
    serverTime: text(meta.server_time),
    resyncs: Number(text(meta.resyncs)),
    born: meta.born === null ? null : text(meta.born),
  };
}

// $1 collections; the cursor's position: $2..$5 (txid, seq, collection, id) or $2..$4 (scope, collection, id)
const passedEntrySql = (passed: string) => `
  select exists (
    select 1
      from (select distinct v.scope_id from unnest(app_private.visible_scope_ids()) as v(scope_id)) s
     cross join lateral (
       select 1 from app_private.sync_changes c
        where c.scope_id = s.scope_id and c.collection = any ($1::text[]) and c.present and ${passed}
        limit 1
     ) c
  ) as passed`;
const PASSED_ENTRY = {
  incremental: passedEntrySql("(c.txid, c.seq, c.collection, c.id) <= ($2::text::xid8, $3::bigint, $4::text, $5::uuid)"),
  full: passedEntrySql("(s.scope_id, c.collection, c.id) <= ($2::uuid, $3::text, $4::uuid)"),
};

/**
 * Whether the request's position is past a row of `collections` the caller sees: its entry (the
 * row's latest change) at or before the position, a row a server that did not sync them moved
 * the cursor past without listing it. A row whose entry comes after the position is listed by
 * the pulls from there, as any change; one deleted before it was never on the device.
 */
export async function passedRowsOf(tx: Tx, request: PageRequest, collections: readonly string[]): Promise<boolean> {
  const sql = request.mode === "full" ? PASSED_ENTRY.full : PASSED_ENTRY.incremental;
  const [row] = await tx.unsafe<{ passed: boolean }[]>(sql, [pgArray(collections), ...request.after], PREPARED);
  return row.passed;
}

// Each synced table's columns as `npm run generate` reads them (scripts/generate/sync-collections.ts:
// attnum > 0, not dropped, the id left out, the type by format_type, an enum's labels through
// domains and arrays: column-values-sql.ts). format_type names a type outside the search path with
// its schema: the statement runs with the generator's, `public` (databaseShapes).
const DATABASE_SHAPES_SQL = `
  select t.collection as name,
         coalesce((select json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod), 'enum_values', en.labels))
                     from pg_catalog.pg_attribute a
                     ${COLUMN_VALUE_TYPE_SQL}
                     ${COLUMN_ENUM_LABELS_SQL}
                    where a.attrelid = t.relation and a.attnum > 0 and not a.attisdropped and a.attname <> 'id'), '[]')::text as columns
    from app_private.sync_tables t`;

/** The collections the database syncs now (app_private.sync_tables), with their tables' columns as they are now. */
export async function databaseShapes(tx: Tx): Promise<CollectionShape[]> {
  // The function's role may search more schemas (a hosted project's `postgres` searches
  // `extensions` too): format_type would then print `citext` where the generator printed
  // `extensions.citext`. The transaction's search path for this statement alone.
  const [{ saved }] = await tx.unsafe<{ saved: string }[]>("select current_setting('search_path') as saved", [], PREPARED);
  await tx.unsafe("select set_config('search_path', 'public', true)", [], PREPARED);
  const rows = await tx.unsafe<{ name: string; columns: string }[]>(DATABASE_SHAPES_SQL, [], PREPARED);
  await tx.unsafe("select set_config('search_path', $1, true)", [saved], PREPARED);
  return rows.map((row) => ({ name: row.name, columns: JSON.parse(row.columns) }));
}
