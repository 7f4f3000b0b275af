// The cursor decisions of GET /v1/sync/changes (functions/api/sync/plan-pull.ts),
// as properties: a position never moves backwards, 410 RESYNC_REQUIRED comes
// exactly when the position is at or below the purge horizon or the cursor is
// older than the retention window, and a full sync hands over to incremental
// pulls at the snapshot bound `upper` it started with.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../functions/_shared/errors.ts";
import type { CursorPayload } from "../../functions/api/sync/cursor.ts";
import {
  type FullKey,
  type IncrementalKey,
  nextPosition,
  type PageOutcome,
  type PageRequest,
  pageRequestFor,
  ZERO_UUID,
} from "../../functions/api/sync/plan-pull.ts";

const DAY = 86_400;

const txid = fc.bigInt({ min: 1n, max: 1n << 40n });
const uuid = fc.uuid().map((u) => u.toLowerCase());
const collection = fc.constantFrom("", "lists", "tasks");
const fullKey: fc.Arbitrary<FullKey> = fc.tuple(uuid, collection, uuid);
const incrementalKey: fc.Arbitrary<IncrementalKey> = fc.tuple(txid.map(String), fc.nat({ max: 1_000_000 }), collection, uuid);

/** Total order of positions: a full sync (by its key) comes before every incremental position. */
type Position = { mode: "full"; after: FullKey } | { mode: "incremental"; after: IncrementalKey };
function compare(a: Position, b: Position): number {
  if (a.mode !== b.mode) return a.mode === "full" ? -1 : 1;
  if (a.mode === "full") {
    const [x, y] = [a.after.join("\u0000"), (b.after as FullKey).join("\u0000")];
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const other = b.after as IncrementalKey;
  const t = BigInt(a.after[0]) - BigInt(other[0]);
  if (t !== 0n) return t < 0n ? -1 : 1;
  if (a.after[1] !== other[1]) return a.after[1] - other[1];
  const [x, y] = [a.after.slice(2).join("\u0000"), other.slice(2).join("\u0000")];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A key strictly after `after` (what a page that read something reports as its last key). */
function laterIncremental(after: IncrementalKey, bump: number, upper: bigint): IncrementalKey {
  const t = BigInt(after[0]) + BigInt(bump % 3);
  return t === BigInt(after[0]) ? [after[0], after[1] + 1 + bump, after[2], after[3]] : [String(t < upper ? t : BigInt(after[0])), after[1] + 1, after[2], after[3]];
}

const incrementalCase = fc.record({ after: incrementalKey, hasMore: fc.boolean(), bump: fc.nat({ max: 50 }), upperDelta: fc.bigInt({ min: -5n, max: 1000n }) })
  .map(({ after, hasMore, bump, upperDelta }) => {
    const upperValue = BigInt(after[0]) + upperDelta > 0n ? BigInt(after[0]) + upperDelta : 1n;
    const request: PageRequest = { mode: "incremental", after };
    const page: Omit<PageOutcome, "horizon"> = {
      hasMore,
      upper: String(upperValue),
      lastKey: hasMore ? laterIncremental(after, bump, upperValue) : null,
    };
    return { request, page };
  });

const fullCase = fc.record({ after: fullKey, later: fullKey, hasMore: fc.boolean(), upper: txid, first: fc.boolean() })
  .map(({ after, later, hasMore, upper, first }) => {
    const request: PageRequest = { mode: "full", upper: first ? null : String(upper), after: first ? [ZERO_UUID, "", ZERO_UUID] : after };
    const last: FullKey = compare({ mode: "full", after: later }, { mode: "full", after: request.after }) > 0 ? later : [request.after[0], request.after[1], "ffffffff-ffff-ffff-ffff-ffffffffffff"];
    const page: Omit<PageOutcome, "horizon"> = { hasMore, upper: String(upper), lastKey: hasMore ? last : null };
    return { request, page };
  });

function code(run: () => unknown): string | null {
  try {
    run();
    return null;
  } catch (error) {
    return error instanceof ApiError ? error.code : String(error);
  }
}

describe("nextPosition", () => {
  it("never moves a position backwards (no purge)", () => {
    fc.assert(fc.property(fc.oneof(incrementalCase, fullCase), ({ request, page }) => {
      const next = nextPosition(request, { ...page, horizon: "0" });
      expect(compare(next, request)).toBeGreaterThanOrEqual(0);
      // More to read means the position advanced past what the page delivered.
      if (page.hasMore) expect(compare(next, request)).toBeGreaterThan(0);
    }), { numRuns: 2000 });
  });

  it("a full sync continues under its own `upper` while it has more, then switches to incremental at exactly that bound", () => {
    fc.assert(fc.property(fullCase, ({ request, page }) => {
      const next = nextPosition(request, { ...page, horizon: "0" });
      if (page.hasMore) expect(next).toEqual({ mode: "full", upper: page.upper, after: page.lastKey });
      else expect(next).toEqual({ mode: "incremental", after: [page.upper, 0, "", ZERO_UUID] });
    }), { numRuns: 1000 });
  });

  it("an incremental pull that is done moves to the reader's bound, or stays where it is when already there", () => {
    fc.assert(fc.property(incrementalCase, ({ request, page }) => {
      fc.pre(!page.hasMore && request.mode === "incremental");
      const next = nextPosition(request, { ...page, horizon: "0" });
      const after = (request as { after: IncrementalKey }).after;
      expect(next).toEqual(BigInt(after[0]) >= BigInt(page.upper)
        ? { mode: "incremental", after }
        : { mode: "incremental", after: [page.upper, 0, "", ZERO_UUID] });
    }), { numRuns: 1000 });
  });

  it("answers 410 RESYNC_REQUIRED exactly when the position is at or below the purge horizon", () => {
    fc.assert(fc.property(fc.oneof(incrementalCase, fullCase), fc.bigInt({ min: -3n, max: 3n }), fc.boolean(), ({ request, page }, delta, purged) => {
      const from = request.mode === "full" ? BigInt(page.upper) : BigInt(request.after[0]);
      const horizon = purged && from + delta > 0n ? from + delta : 0n;
      const outcome = code(() => nextPosition(request, { ...page, horizon: String(horizon) }));
      expect(outcome).toBe(horizon > 0n && from <= horizon ? "RESYNC_REQUIRED" : null);
    }), { numRuns: 2000 });
  });
});

describe("pageRequestFor", () => {
  const cursorArb: fc.Arbitrary<CursorPayload> = fc.oneof(
    fc.record({ v: fc.constant(2 as const), mode: fc.constant("full" as const), upper: txid.map(String), after: fullKey, scope: fc.constant("*"), iat: fc.nat({ max: 2_000_000_000 }) }),
    fc.record({ v: fc.constant(2 as const), mode: fc.constant("incremental" as const), after: incrementalKey, scope: fc.constant("*"), iat: fc.nat({ max: 2_000_000_000 }) }),
  );

  it("without a cursor starts a full sync at the first key, bound by the first page's own snapshot", () => {
    expect(pageRequestFor(null, 0, 30)).toEqual({ mode: "full", upper: null, after: [ZERO_UUID, "", ZERO_UUID] });
  });

  it("continues exactly where the cursor stands, or answers 410 exactly when the cursor is older than the retention window", () => {
    fc.assert(fc.property(cursorArb, fc.integer({ min: -2 * DAY, max: 40 * DAY }), fc.integer({ min: 1, max: 35 }), (cursor, age, days) => {
      const now = cursor.iat + age;
      const outcome = code(() => pageRequestFor(cursor, now, days));
      if (age > days * DAY) {
        expect(outcome).toBe("RESYNC_REQUIRED");
        return;
      }
      expect(outcome).toBeNull();
      const request = pageRequestFor(cursor, now, days);
      expect(request).toEqual(cursor.mode === "full"
        ? { mode: "full", upper: cursor.upper, after: cursor.after }
        : { mode: "incremental", after: cursor.after });
    }), { numRuns: 2000 });
  });
});
