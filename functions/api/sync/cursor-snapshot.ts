// A page's snapshot as a full-sync cursor carries it (`since`, `catch_up.next`):
// the pg_snapshot text "xmin:xmax:xip,…" when it fits, else "xmin:xmax:named+count@lo-hi":
// it names its oldest and newest in-progress ids and COUNTS those between, the `count`
// ids in progress in [lo, hi] (none named there). Cursors issued before name only the newest,
// "xmin:xmax:named+count@hi": the counted ones are the oldest, lo is xmin.
//
// Why a count is enough (docs/sync.md, "A snapshot too long for the cursor"):
// a transaction in progress now with an id below the snapshot's xmax was in
// progress when the snapshot was taken, so the ids a later page's snapshot has
// in progress in [lo, hi] are among the counted ones; if there are as many,
// they are the same ones, and the later page rebuilds the snapshot exactly
// (sinceSnapshotSql). If fewer (one of them ended since), it cuts the snapshot
// at the first counted id, "xmin:lo:<named ids below lo>": that sees only what
// the snapshot saw (a page then lists more again, never less), and lists again
// what was written since `lo` began.
//
// Which to name: transactions held open (a dump, a report, a session idle in
// transaction) are the oldest, short writers the newest. A cut at `lo` costs a
// round that lists again every row written since `lo` began: when `lo` is a
// short writer, the last moments' rows; when it is a transaction held open,
// every row since then, round after round while writers keep ending (that made
// a full sync page for ever when only the newest were named). So the oldest
// come first, up to OLDEST_NAMED of them: more rarely stay open at once. The
// rest of the room goes to the newest, whose end then costs no round at all
// (what matters when more than OLDEST_NAMED are held open and a few short
// writers run). With production's 10-digit ids the cursor names 6: 4 + 2.

/** Longest snapshot text a cursor carries (two per cursor: cursor.ts's MAX_CURSOR_LENGTH counts them). */
export const MAX_SNAPSHOT_TEXT = 120;

/** How many of a long snapshot's oldest in-progress ids its cursor form names (when they fit), before the newest. */
export const OLDEST_NAMED = 4;

/** The cursor form: pg_snapshot text, optionally "+count@lo-hi" (or "+count@hi", lo being xmin: the in-progress ids there, counted). */
export const CURSOR_SNAPSHOT_PATTERN = /^[0-9]{1,20}:[0-9]{1,20}:([0-9]{1,20}(,[0-9]{1,20})*)?(\+[0-9]{1,10}@([0-9]{1,20}-)?[0-9]{1,20})?$/;

/** What a page statement takes for its `since`: a pg_snapshot text, and the in-progress ids it counted. */
export interface SinceSnapshot {
  /** "xmin:xmax:named": the snapshot without the counted ids. */
  snapshot: string;
  /** How many in-progress ids in [lo, hi] it does not name (null: it names them all). */
  counted: { count: number; lo: string; hi: string } | null;
}

/** The snapshot that sees exactly the transactions below `txid`: what an older full cursor's `upper` stands for. */
export const snapshotBelow = (txid: string) => `${txid}:${txid}:`;

const MAX_XID8 = 2n ** 64n - 1n;
/** Largest count the page statement takes (it casts it to integer). */
const MAX_COUNT = 2 ** 31 - 1;

/** Whether `text` (all digits) is an xid8 value. */
export const isXid8 = (text: string) => BigInt(text) <= MAX_XID8;

/**
 * Whether a cursor's snapshot (of CURSOR_SNAPSHOT_PATTERN) is one the page statement can use:
 * pg_snapshot text Postgres takes (1 <= xmin <= the named ids, ascending, < xmax), and a count
 * it can rebuild or cut at (xmin <= lo <= hi < xmax). The server only issues such; a signed one
 * that is not (a server bug, a leaked secret) would otherwise reach Postgres and fail there (500).
 */
export function isValidSnapshot(text: string): boolean {
  const { snapshot, counted } = sinceSnapshot(text);
  const [xminText, xmaxText, list] = snapshot.split(":");
  const texts = [xminText, xmaxText, ...(list ? list.split(",") : []), ...(counted ? [counted.lo, counted.hi] : [])];
  if (!texts.every(isXid8)) return false;
  const [xmin, xmax] = [BigInt(xminText), BigInt(xmaxText)];
  if (xmin < 1n || xmin > xmax) return false;
  let previous = xmin - 1n;
  for (const id of list ? list.split(",").map(BigInt) : []) {
    if (id <= previous || id >= xmax) return false;
    previous = id;
  }
  if (counted === null) return true;
  const [lo, hi] = [BigInt(counted.lo), BigInt(counted.hi)];
  return counted.count >= 1 && counted.count <= MAX_COUNT && xmin <= lo && lo <= hi && hi < xmax;
}

const ascending = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);

/** The cursor form of pg_snapshot text (as Postgres prints it: xip ascending), at most MAX_SNAPSHOT_TEXT long. */
export function cursorSnapshot(text: string): string {
  if (text.length <= MAX_SNAPSHOT_TEXT) return text;
  const [xmin, xmax, list] = text.split(":");
  const xip = list.split(",").sort(ascending);
  // names the `oldest` oldest and the `newest` newest, counts at least one between
  const form = (oldest: number, newest: number) => {
    const counted = xip.slice(oldest, xip.length - newest);
    const named = [...xip.slice(0, oldest), ...xip.slice(xip.length - newest)];
    return `${xmin}:${xmax}:${named.join(",")}+${counted.length}@${counted[0]}-${counted.at(-1)}`;
  };
  const fits = (oldest: number, newest: number) => oldest + newest < xip.length && form(oldest, newest).length <= MAX_SNAPSHOT_TEXT;
  // (if none fits: all counted, at most 95 characters)
  let oldest = 0;
  while (oldest < OLDEST_NAMED && fits(oldest + 1, 0)) oldest++;
  let newest = 0;
  while (fits(oldest, newest + 1)) newest++;
  return form(oldest, newest);
}

/** Splits a cursor's snapshot into what the page statement takes. */
export function sinceSnapshot(text: string): SinceSnapshot {
  const [snapshot, counted] = text.split("+");
  if (counted === undefined) return { snapshot, counted: null };
  const [count, range] = counted.split("@");
  // the older form counts the oldest: from xmin
  const [lo, hi] = range.includes("-") ? range.split("-") : [snapshot.split(":")[0], range];
  return { snapshot, counted: { count: Number(count), lo, hi } };
}

/**
 * SQL: the pg_snapshot a page catches up since, from the SinceSnapshot in the parameters
 * `snapshot` (text), `count` (integer or null), `lo` and `hi` (text or null), and `now`, the
 * statement's own snapshot: the counted ids rebuilt from those `now` has in progress in [lo, hi]
 * when there are as many, else the snapshot cut at `lo`, "xmin:lo:<named ids below lo>".
 * Without a count, the snapshot as it is (the first branch: a page's usual case costs nothing more).
 */
export function sinceSnapshotSql(p: { snapshot: string; count: string; lo: string; hi: string; now: string }): string {
  const since = `${p.snapshot}::text::pg_snapshot`;
  const xmin = `pg_snapshot_xmin(${since})::text`;
  const counted = `select x from pg_snapshot_xip(${p.now}) x where x between ${p.lo}::text::xid8 and ${p.hi}::text::xid8`;
  const ids = (from: string) => `coalesce((select string_agg(ids.x::text, ',' order by ids.x) from (${from}) ids), '')`;
  return `case
    when ${p.count}::integer is null then ${since}
    when (select count(*) from (${counted}) c) = ${p.count}::integer then
      (${xmin} || ':' || pg_snapshot_xmax(${since})::text || ':' || ${ids(`select x from pg_snapshot_xip(${since}) x union all ${counted}`)})::pg_snapshot
    else (${xmin} || ':' || ${p.lo}::text || ':' || ${ids(`select x from pg_snapshot_xip(${since}) x where x < ${p.lo}::text::xid8`)})::pg_snapshot
  end`;
}
