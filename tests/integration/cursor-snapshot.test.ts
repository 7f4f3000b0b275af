// The snapshot a full-sync cursor carries when the page's is too long for it
// (many transactions in progress): its older in-progress ids counted, not named
// (functions/api/sync/cursor-snapshot.ts), and what the next page, under a later
// snapshot, rebuilds from that with Postgres' own pg_snapshot functions. A page
// catches up on what the rebuilt snapshot did not see: it must never see a
// transaction the page's snapshot did not (a row missed: a device drops it), and
// it must be that snapshot exactly while the counted transactions stay open
// (else every round catches up again on the same rows: the sync pages for ever).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CURSOR_SNAPSHOT_PATTERN, cursorSnapshot, MAX_SNAPSHOT_TEXT, sinceSnapshot, sinceSnapshotSql } from "../../functions/api/sync/cursor-snapshot.ts";
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
       from (select ${sinceSnapshotSql({ snapshot: "$1", count: "$2", hi: "$3", now: "$4::text::pg_snapshot" })} as r) r`,
    [since.snapshot, since.counted?.count ?? null, since.counted?.hi ?? null, text(s)],
  );
  return { xmin: BigInt(row.xmin), xmax: BigInt(row.xmax), xip: row.xip.map(BigInt) };
}

describe("a page's snapshot in a full-sync cursor", () => {
  it("fits the cursor, names the newest in-progress transactions and counts the older ones", () => {
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
      expect(named).toEqual(p.xip.slice(p.xip.length - named.length));
      expect(counted).toEqual({ count: p.xip.length - named.length, hi: String(p.xip[p.xip.length - named.length - 1]) });
    }), { numRuns: 300 });
  });

  it("is rebuilt by the next page seeing no transaction the page did not, and exactly while the counted ones stay open", async () => {
    await fc.assert(fc.asyncProperty(snapshots, async ({ p, s }) => {
      const form = cursorSnapshot(text(p));
      const since = await rebuilt(form, s);
      // Visibility changes only at these ids: comparing on both sides of each compares every id.
      const edges = [p, s, since].flatMap((x) => [x.xmin, x.xmax, ...x.xip]).flatMap((x) => [x - 1n, x, x + 1n]);
      for (const txid of edges) if (visible(since, txid)) expect(visible(p, txid), `txid ${txid} in ${form} at ${text(s)}`).toBe(true);
      const count = sinceSnapshot(form).counted?.count ?? 0;
      if (p.xip.slice(0, count).every((x) => s.xip.includes(x))) expect(text(since)).toEqual(text(p));
      else expect(text(since)).toEqual(`${p.xmin}:${p.xmin}:`);
    }), { numRuns: 200 });
  });
});
