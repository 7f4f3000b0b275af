// The snapshot a full-sync cursor carries when the page's is too long for it
// (many transactions in progress): its oldest and newest in-progress ids named,
// those between counted (functions/api/sync/cursor-snapshot.ts), and what the
// next page, under a later snapshot, rebuilds from that with Postgres' own
// pg_snapshot functions. A page catches up on what the rebuilt snapshot did not
// see: it must never see a transaction the page's snapshot did not (a row
// missed: a device drops it), it must be that snapshot exactly while the
// counted transactions stay open, and once one ended it must still see every
// transaction below the first counted one that the page's saw (else every
// round catches up again on every row since the oldest transaction held open:
// the sync pages for ever while short writers end between its pages).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CURSOR_SNAPSHOT_PATTERN, cursorSnapshot, MAX_SNAPSHOT_TEXT, OLDEST_NAMED, sinceSnapshot, sinceSnapshotSql } from "../../functions/api/sync/cursor-snapshot.ts";
import { adminSql } from "../support/harness.ts";

interface Snapshot {
  xmin: bigint;
  xmax: bigint;
  xip: bigint[];
}
const text = (s: Snapshot) => `${s.xmin}:${s.xmax}:${s.xip.join(",")}`;
const visible = (s: Snapshot, txid: bigint) => txid < s.xmax && !s.xip.includes(txid);

/**
 * A page's snapshot P with up to 60 transactions in progress (10-digit ids, as in production), and
 * a later page's S: some of P's ended, others began (none in progress at or above S's xmax is named).
 */
const snapshots = fc.record({
  base: fc.bigInt({ min: 1_000_000_000n, max: 9_000_000_000n }),
  gaps: fc.array(fc.bigInt({ min: 1n, max: 50_000n }), { minLength: 0, maxLength: 60 }),
  tail: fc.bigInt({ min: 1n, max: 1000n }),
  ended: fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }),
  endNone: fc.boolean(),
  later: fc.array(fc.bigInt({ min: 0n, max: 500n }), { maxLength: 5 }),
  laterTail: fc.bigInt({ min: 1n, max: 1000n }),
}).map(({ base, gaps, tail, ended, endNone, later, laterTail }) => {
  const xip: bigint[] = [];
  let at = base;
  for (const gap of gaps) xip.push((at += gap));
  const xmax = at + tail;
  const p: Snapshot = { xmin: xip[0] ?? xmax, xmax, xip };
  const still = xip.filter((_, i) => endNone || !ended[i]);
  const began = [...new Set(later.map((d) => xmax + d))].sort((a, b) => (a < b ? -1 : 1));
  const sXmax = (began.at(-1) ?? xmax) + laterTail;
  const sXip = [...still, ...began];
  const s: Snapshot = { xmin: sXip[0] ?? sXmax, xmax: sXmax, xip: sXip };
  return { p, s };
});

/** What the page statement makes of the cursor's form of `p`, at snapshot `s`. */
async function rebuilt(cursorForm: string, s: Snapshot): Promise<Snapshot> {
  const since = sinceSnapshot(cursorForm);
  const [row] = await adminSql.unsafe<{ xmin: string; xmax: string; xip: string[] }[]>(
    `select pg_snapshot_xmin(r)::text as xmin, pg_snapshot_xmax(r)::text as xmax, array(select x::text from pg_snapshot_xip(r) x order by x) as xip
       from (select ${sinceSnapshotSql({ snapshot: "$1", count: "$2", lo: "$5", hi: "$3", now: "$4::text::pg_snapshot" })} as r) r`,
    [since.snapshot, since.counted?.count ?? null, since.counted?.hi ?? null, text(s), since.counted?.lo ?? null],
  );
  return { xmin: BigInt(row.xmin), xmax: BigInt(row.xmax), xip: row.xip.map(BigInt) };
}

/** The form of cursors issued before the oldest were named: the newest that fit, the older ones counted from xmin. */
function olderForm(p: Snapshot): string {
  if (text(p).length <= MAX_SNAPSHOT_TEXT) return text(p);
  const form = (kept: number) => `${p.xmin}:${p.xmax}:${p.xip.slice(p.xip.length - kept).join(",")}+${p.xip.length - kept}@${p.xip[p.xip.length - kept - 1]}`;
  let kept = 0;
  while (kept + 1 < p.xip.length && form(kept + 1).length <= MAX_SNAPSHOT_TEXT) kept++;
  return form(kept);
}

describe("a page's snapshot in a full-sync cursor", () => {
  it("fits the cursor, names the oldest and the newest in-progress transactions and counts those between", () => {
    fc.assert(fc.property(snapshots, ({ p }) => {
      const form = cursorSnapshot(text(p));
      expect(form.length).toBeLessThanOrEqual(MAX_SNAPSHOT_TEXT);
      expect(form).toMatch(CURSOR_SNAPSHOT_PATTERN);
      const { snapshot, counted } = sinceSnapshot(form);
      if (text(p).length <= MAX_SNAPSHOT_TEXT) {
        expect([form, counted]).toEqual([text(p), null]);
        return;
      }
      const named = snapshot.split(":")[2].split(",").filter(Boolean).map(BigInt);
      const oldest = named.filter((x) => x < BigInt(counted!.lo));
      expect(oldest).toEqual(p.xip.slice(0, oldest.length));
      expect(oldest.length).toBe(Math.min(OLDEST_NAMED, named.length));
      const newest = named.slice(oldest.length);
      expect(newest).toEqual(p.xip.slice(p.xip.length - newest.length));
      const between = p.xip.slice(oldest.length, p.xip.length - newest.length);
      expect(counted).toEqual({ count: between.length, lo: String(between[0]), hi: String(between.at(-1)) });
    }), { numRuns: 300 });
  });

  it("is rebuilt by the next page seeing no transaction the page did not: exactly while the counted ones stay open, else up to the first counted one", async () => {
    await fc.assert(fc.asyncProperty(snapshots, async ({ p, s }) => {
      const form = cursorSnapshot(text(p));
      const since = await rebuilt(form, s);
      // Visibility changes only at these ids: comparing on both sides of each compares every id.
      const edges = [p, s, since].flatMap((x) => [x.xmin, x.xmax, ...x.xip]).flatMap((x) => [x - 1n, x, x + 1n]);
      for (const txid of edges) if (visible(since, txid)) expect(visible(p, txid), `txid ${txid} in ${form} at ${text(s)}`).toBe(true);
      const counted = sinceSnapshot(form).counted;
      const between = counted ? p.xip.filter((x) => x >= BigInt(counted.lo) && x <= BigInt(counted.hi)) : [];
      if (between.every((x) => s.xip.includes(x))) expect(text(since)).toEqual(text(p));
      else {
        // what a page lists again: only what transactions from the first counted one on wrote
        const lo = BigInt(counted!.lo);
        expect(text(since)).toEqual(`${p.xmin}:${lo}:${p.xip.filter((x) => x < lo).join(",")}`);
        for (const txid of edges) if (txid < lo) expect(visible(since, txid), `txid ${txid} in ${form} at ${text(s)}`).toBe(visible(p, txid));
      }
    }), { numRuns: 200 });
  });

  it("still reads the form of cursors issued before (the newest named, the oldest counted from xmin)", async () => {
    await fc.assert(fc.asyncProperty(snapshots, async ({ p, s }) => {
      const form = olderForm(p);
      expect(form).toMatch(CURSOR_SNAPSHOT_PATTERN);
      const since = await rebuilt(form, s);
      const counted = sinceSnapshot(form).counted;
      expect(counted?.lo ?? String(p.xmin)).toBe(String(p.xmin));
      const between = p.xip.slice(0, counted?.count ?? 0);
      expect(text(since)).toEqual(between.every((x) => s.xip.includes(x)) ? text(p) : `${p.xmin}:${p.xmin}:`);
    }), { numRuns: 100 });
  });
});
