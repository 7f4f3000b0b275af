// A page's snapshot as a full-sync cursor carries it (`since`, `catch_up.next`):
// the pg_snapshot text "xmin:xmax:xip,…" when it fits, else its newest
// in-progress ids and the COUNT of the older ones, "xmin:xmax:kept+count@hi"
// (the `count` ids in progress at or below `hi` are not listed).
//
// Why a count is enough (docs/sync.md, "A snapshot too long for the cursor"):
// a transaction in progress now with an id below the snapshot's xmax was in
// progress when the snapshot was taken, so the ids the snapshot had in
// progress in [xmin, hi] include those a later page's snapshot has there; if
// there are as many, they are the same ones, and the later page rebuilds the
// snapshot exactly (sinceSnapshotSql). If fewer (one of them ended since), it
// falls back to "xmin:xmin:", which sees less (a page then lists more again,
// never less). Transactions held open thus never make the catch-up repeat:
// only one that ENDS between pages costs a round; shortening the list itself
// (as "xmin:xmin:" always did) made a full sync page for ever while ~10-25
// writers were in progress. The kept ids are the newest: long-open
// transactions (the ones that stay) are the oldest, and short writers, which
// end between pages, stay listed exactly.

/** Longest snapshot text a cursor carries (two per cursor: cursor.ts's MAX_CURSOR_LENGTH counts them). */
export const MAX_SNAPSHOT_TEXT = 120;

/** The cursor form: pg_snapshot text, optionally "+count@hi" (the older in-progress ids, counted). */
export const CURSOR_SNAPSHOT_PATTERN = /^[0-9]{1,20}:[0-9]{1,20}:([0-9]{1,20}(,[0-9]{1,20})*)?(\+[0-9]{1,10}@[0-9]{1,20})?$/;

/** What a page statement takes for its `since`: a pg_snapshot text, and the older in-progress ids counted. */
export interface SinceSnapshot {
  /** "xmin:xmax:kept": the snapshot without the counted ids. */
  snapshot: string;
  /** How many in-progress ids at or below `hi` it does not list (null: it lists them all). */
  counted: { count: number; hi: string } | null;
}

/** The cursor form of pg_snapshot text (as Postgres prints it: xip ascending), at most MAX_SNAPSHOT_TEXT long. */
export function cursorSnapshot(text: string): string {
  if (text.length <= MAX_SNAPSHOT_TEXT) return text;
  const [xmin, xmax, list] = text.split(":");
  const xip = list.split(",").sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  const form = (kept: number) => {
    const counted = xip.length - kept;
    return `${xmin}:${xmax}:${xip.slice(counted).join(",")}+${counted}@${xip[counted - 1]}`;
  };
  // as many of the newest ids as fit (if none does: all counted, at most 68 characters)
  let kept = 0;
  while (kept + 1 < xip.length && form(kept + 1).length <= MAX_SNAPSHOT_TEXT) kept++;
  return form(kept);
}

/** Splits a cursor's snapshot into what the page statement takes. */
export function sinceSnapshot(text: string): SinceSnapshot {
  const [snapshot, counted] = text.split("+");
  if (counted === undefined) return { snapshot, counted: null };
  const [count, hi] = counted.split("@");
  return { snapshot, counted: { count: Number(count), hi } };
}

/**
 * SQL: the pg_snapshot a page catches up since, from the SinceSnapshot in the parameters
 * `snapshot` (text), `count` (integer or null), `hi` (text or null), and `now`, the statement's
 * own snapshot: the counted ids rebuilt from those `now` has in progress in [xmin, hi] when
 * there are as many, else "xmin:xmin:".
 */
export function sinceSnapshotSql(p: { snapshot: string; count: string; hi: string; now: string }): string {
  const since = `${p.snapshot}::text::pg_snapshot`;
  const xmin = `pg_snapshot_xmin(${since})`;
  const counted = `select x from pg_snapshot_xip(${p.now}) x where x between ${xmin} and ${p.hi}::text::xid8`;
  return `case
    when ${p.count}::integer is null then ${since}
    when (select count(*) from (${counted}) c) = ${p.count}::integer then
      (select (${xmin}::text || ':' || pg_snapshot_xmax(${since})::text || ':' || coalesce(string_agg(ids.x::text, ',' order by ids.x), ''))::pg_snapshot
         from (select x from pg_snapshot_xip(${since}) x union all ${counted}) ids)
    else (${xmin}::text || ':' || ${xmin}::text || ':')::pg_snapshot
  end`;
}
