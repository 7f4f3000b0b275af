// The forms of a page's snapshot in a full-sync cursor (functions/api/sync/cursor-snapshot.ts):
// whole when it fits; else its oldest and newest in-progress ids named and those between
// counted; and the form cursors issued before carry (the newest named, the oldest counted).
// What the next page rebuilds from them: tests/integration/cursor-snapshot.test.ts.
import { describe, expect, it } from "vitest";
import { CURSOR_SNAPSHOT_PATTERN, cursorSnapshot, isValidSnapshot, MAX_SNAPSHOT_TEXT, OLDEST_NAMED, sinceSnapshot } from "../../functions/api/sync/cursor-snapshot.ts";

// Production's 10-digit ids: one transaction held open since 1000000000, ten short writers.
const held = "1000000000";
const writers = Array.from({ length: 10 }, (_, i) => String(1000500001 + i));
const long = `${held}:1000500020:${[held, ...writers].join(",")}`;

describe("a page's snapshot in a full-sync cursor", () => {
  it("is carried whole when it fits", () => {
    const text = `${held}:1000500020:${[held, ...writers.slice(0, 5)].join(",")}`;
    expect(cursorSnapshot(text)).toBe(text);
    expect(sinceSnapshot(text)).toEqual({ snapshot: text, counted: null });
    expect(cursorSnapshot("42:42:")).toBe("42:42:");
  });

  it("too long, names the transaction held open and the oldest writers, then the newest; counts those between", () => {
    expect(long.length).toBeGreaterThan(MAX_SNAPSHOT_TEXT);
    const form = cursorSnapshot(long);
    const [w1, w2, w3, w4, , , , w8, w9, w10] = writers;
    expect(OLDEST_NAMED).toBe(4);
    expect(form).toBe(`${held}:1000500020:${[held, w1, w2, w3, w9, w10].join(",")}+5@${w4}-${w8}`);
    expect(form.length).toBeLessThanOrEqual(MAX_SNAPSHOT_TEXT);
    expect(form).toMatch(CURSOR_SNAPSHOT_PATTERN);
    expect(sinceSnapshot(form)).toEqual({
      snapshot: `${held}:1000500020:${[held, w1, w2, w3, w9, w10].join(",")}`,
      counted: { count: 5, lo: w4, hi: w8 },
    });
  });

  it("reads the form of cursors issued before: the newest named, the oldest counted from xmin", () => {
    const form = `${held}:1000500020:${writers.slice(3).join(",")}+4@${writers[2]}`;
    expect(form).toMatch(CURSOR_SNAPSHOT_PATTERN);
    expect(sinceSnapshot(form)).toEqual({ snapshot: `${held}:1000500020:${writers.slice(3).join(",")}`, counted: { count: 4, lo: held, hi: writers[2] } });
  });

  it("fits with the longest ids: names the oldest first", () => {
    const ids = Array.from({ length: 40 }, (_, i) => String(18446744073709551000n + BigInt(i)));
    const form = cursorSnapshot(`${ids[0]}:18446744073709551615:${ids.join(",")}`);
    expect(form.length).toBeLessThanOrEqual(MAX_SNAPSHOT_TEXT);
    expect(form).toMatch(CURSOR_SNAPSHOT_PATTERN);
    expect(sinceSnapshot(form).snapshot).toBe(`${ids[0]}:18446744073709551615:${ids[0]}`);
    expect(sinceSnapshot(form).counted).toEqual({ count: 39, lo: ids[1], hi: ids[39] });
  });

  it("refuses in the cursor what it never issues", () => {
    for (const bad of [`${long}+1@2-3-4`, "1:2:3+1@", "1:2:3+1@-2", "1:2:3+@2", "1:2:3,+1@2", "1:2:3+1@2+1@3"]) {
      expect(bad).not.toMatch(CURSOR_SNAPSHOT_PATTERN);
    }
  });

  it("is valid only as Postgres takes it and the page statement can rebuild it", () => {
    const top = "18446744073709551615";
    for (const good of ["1:1:", "5:5:", "5:10:5,9", `${held}:1000500020:${held}+3@1000000001-1000500019`, "5:10:+1@5-9", "5:10:+2147483647@9", `1:${top}:`, cursorSnapshot(long)]) {
      expect([good, isValidSnapshot(good)]).toEqual([good, true]);
    }
    for (const [bad, why] of [
      ["0:5:", "xmin 0"],
      ["6:5:", "xmin above xmax"],
      ["5:10:4", "a named id below xmin"],
      ["5:10:10", "a named id at xmax"],
      ["5:10:7,6", "named ids descending"],
      ["5:10:6,6", "a named id twice"],
      ["5:50:+1@4-10", "lo below xmin"],
      ["5:50:+1@10-6", "lo above hi"],
      ["5:50:+1@6-50", "hi at xmax"],
      ["5:50:+1@50", "the older form: hi at xmax"],
      ["5:50:+0@6-10", "a count of none"],
      ["5:50:+2147483648@6-10", "a count no integer holds"],
      [`5:18446744073709551616:`, "an id above 2^64-1"],
      [`5:${top}:+1@6-18446744073709551616`, "hi above 2^64-1"],
    ]) {
      expect(bad).toMatch(CURSOR_SNAPSHOT_PATTERN);
      expect([why, isValidSnapshot(bad)]).toEqual([why, false]);
    }
  });
});
