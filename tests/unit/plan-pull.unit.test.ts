// The cursor decisions of GET /v1/sync/changes (functions/api/sync/plan-pull.ts),
// as properties: a position never moves backwards, 410 RESYNC_REQUIRED comes
// exactly when a cursor's position is at or below the purge horizon, beyond the
// database's transactions (its snapshot's xmax) or older than the retention
// window, never to a pull without a cursor, a full sync catches up on the keys it passed in rounds and hands
// over to incremental pulls at the snapshot bound `upper` it started with; and, against a model of what a page reads, the pages of a
// full sync list every row the last page's snapshot shows while rows move,
// appear and scopes are granted between pages; and how the collections a cursor was issued for
// differ from the server's (a deploy that adds or drops a synced collection); and which cursors an
// account deleted and created again with the same id refuses (issued to the earlier one).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../functions/_shared/errors.ts";
import type { CursorPayload } from "../../functions/api/sync/cursor.ts";
import {
  collectionsChange,
  issuedDuringRollout,
  ROLLOUT_SECONDS,
  type FullKey,
  issuedToEarlierAccount,
  type FullRequest,
  type IncrementalKey,
  nextPosition,
  type PageOutcome,
  type PageRequest,
  pageRequestFor,
  type Position,
  ZERO_UUID,
} from "../../functions/api/sync/plan-pull.ts";

const DAY = 86_400;

const txid = fc.bigInt({ min: 1n, max: 1n << 40n });
const uuid = fc.uuid().map((u) => u.toLowerCase());
const collection = fc.constantFrom("", "lists", "tasks");
const fullKey: fc.Arbitrary<FullKey> = fc.tuple(uuid, collection, uuid);
const incrementalKey: fc.Arbitrary<IncrementalKey> = fc.tuple(txid.map(String), fc.nat({ max: 1_000_000 }), collection, uuid);

/** Total order of positions: a full sync (by its key) comes before every incremental position. */
type Place = { mode: "full"; after: FullKey } | { mode: "incremental"; after: IncrementalKey };
function compare(a: Place, b: Place): number {
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
      // xmax: never below a txid a cursor of this database names (the xid counter only grows)
      snapshot: `${upperValue}:${upperValue > BigInt(after[0]) ? upperValue : BigInt(after[0])}:`,
      lastKey: hasMore ? laterIncremental(after, bump, upperValue) : null,
      lastCaughtUp: false,
    };
    return { request, page };
  });

const snapshot = fc.tuple(txid, fc.nat({ max: 5 })).map(([xmin, width]) => `${xmin}:${xmin + BigInt(width)}:${width > 1 ? String(xmin + 1n) : ""}`);
const LAST_UUID = "ffffffff-ffff-ffff-ffff-ffffffffffff";

/**
 * A full sync's page: the first (no upper, nothing passed), or a later one with a `since` and maybe a catch-up
 * under way; its last entry is a key ahead of `after`, a passed key after the catch-up's (caught up), or none.
 */
const fullCase = fc.record({
  after: fullKey,
  later: fullKey,
  caught: fullKey,
  hasMore: fc.boolean(),
  upper: txid,
  first: fc.boolean(),
  since: snapshot,
  catchUp: fc.option(fc.record({ after: fullKey, next: snapshot }), { nil: null }),
  last: fc.constantFrom("ahead", "caught up", "none"),
  /** How far the page snapshot's xmin is past `upper` (transactions ended since the sync began; none on its first page). */
  ended: fc.nat({ max: 3 }),
}).map(({ after, later, caught, hasMore, upper, first, since, catchUp, last, ended }) => {
  const request: FullRequest = first
    ? { mode: "full", upper: null, after: [ZERO_UUID, "", ZERO_UUID] }
    : { mode: "full", upper: String(upper), after, since, catchUp: catchUp && compare(full(catchUp.after), full(after)) < 0 ? catchUp : null };
  const ahead: FullKey = compare(full(later), full(request.after)) > 0 ? later : [request.after[0], request.after[1], LAST_UUID];
  const from = request.catchUp?.after ?? [ZERO_UUID, "", ZERO_UUID];
  const caughtUp: FullKey | null = !first && compare(full(caught), full(from)) > 0 && compare(full(caught), full(request.after)) <= 0 ? caught : null;
  const lastKey = hasMore ? (last === "caught up" && caughtUp ? caughtUp : ahead) : last === "ahead" ? ahead : last === "caught up" ? caughtUp : null;
  const page: Omit<PageOutcome, "horizon"> = {
    hasMore,
    upper: String(upper),
    snapshot: `${upper + (first ? 0n : BigInt(ended))}:${upper + 3n}:`,
    lastKey,
    lastCaughtUp: lastKey !== null && lastKey === caughtUp,
  };
  return { request, page };
});

function full(after: FullKey): Place {
  return { mode: "full", after };
}

/** A full sync's first page: the pull without a cursor. */
const isFirstPage = (request: PageRequest) => request.mode === "full" && request.upper === null;

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
      const { position } = nextPosition(request, { ...page, horizon: "0" });
      expect(compare(position, request)).toBeGreaterThanOrEqual(0);
      // More to read at a key ahead means the position advanced past what the page delivered.
      if (page.hasMore && !page.lastCaughtUp) expect(compare(position, request)).toBeGreaterThan(0);
    }), { numRuns: 2000 });
  });

  it("an incremental page: has_more is the page's", () => {
    fc.assert(fc.property(incrementalCase, ({ request, page }) => {
      expect(nextPosition(request, { ...page, horizon: "0" }).hasMore).toBe(page.hasMore);
    }), { numRuns: 500 });
  });

  it("a full sync goes on under its own `upper`; each round's first page catches up as of the previous page's snapshot", () => {
    fc.assert(fc.property(fullCase, ({ request, page }) => {
      const { position, hasMore } = nextPosition(request, { ...page, horizon: "0" });
      const roundStart = request.catchUp?.next ?? page.snapshot;
      if (page.hasMore && page.lastCaughtUp) {
        // a catch-up that filled the page goes on after its last key, under the same since
        expect(position).toEqual({ mode: "full", upper: page.upper, after: request.after, since: request.since, catch_up: { after: page.lastKey, next: roundStart } });
        expect(hasMore).toBe(true);
      } else if (page.hasMore) {
        // passed the catch-up: on after the last key, everything before it caught up as of the round's start
        expect(position).toEqual({ mode: "full", upper: page.upper, after: page.lastKey, since: roundStart });
        expect(hasMore).toBe(true);
      } else if (request.catchUp) {
        // read everything, but keys up to catch_up.after only as of an older snapshot: one more round
        expect(position).toEqual({ mode: "full", upper: page.upper, after: page.lastKey !== null && !page.lastCaughtUp ? page.lastKey : request.after, since: request.catchUp.next });
        expect(hasMore).toBe(true);
      } else {
        // a round's first page that read everything: done, incremental from exactly `upper`; and the
        // incremental page comes now (its removals) when a transaction ended after `upper` before
        // this page, never after a one-page full sync
        expect(position).toEqual({ mode: "incremental", after: [page.upper, 0, "", ZERO_UUID] });
        expect(hasMore).toBe(BigInt(page.snapshot.split(":")[0]) > BigInt(page.upper));
        if (isFirstPage(request)) expect(hasMore).toBe(false);
      }
    }), { numRuns: 3000 });
  });

  it("an incremental pull that is done moves to the reader's bound, or stays where it is when already there", () => {
    fc.assert(fc.property(incrementalCase, ({ request, page }) => {
      fc.pre(!page.hasMore && request.mode === "incremental");
      const { position } = nextPosition(request, { ...page, horizon: "0" });
      const after = (request as { after: IncrementalKey }).after;
      expect(position).toEqual(BigInt(after[0]) >= BigInt(page.upper)
        ? { mode: "incremental", after }
        : { mode: "incremental", after: [page.upper, 0, "", ZERO_UUID] });
    }), { numRuns: 1000 });
  });

  it("answers 410 RESYNC_REQUIRED for a cursor exactly when its position is at or below the purge horizon", () => {
    fc.assert(fc.property(fc.oneof(incrementalCase, fullCase), fc.bigInt({ min: -3n, max: 3n }), fc.boolean(), ({ request, page }, delta, purged) => {
      const from = request.mode === "full" ? BigInt(page.upper) : BigInt(request.after[0]);
      const horizon = purged && from + delta > 0n ? from + delta : 0n;
      const outcome = code(() => nextPosition(request, { ...page, horizon: String(horizon) }));
      expect(outcome).toBe(!isFirstPage(request) && horizon > 0n && from <= horizon ? "RESYNC_REQUIRED" : null);
    }), { numRuns: 2000 });
  });

  it("never answers 410 to a pull without a cursor, whatever the horizon (a device told to resync can start over)", () => {
    // The horizon a purge that purged above the oldest open transaction left: at or above the
    // first page's own bound, where every pull stood while that transaction was open.
    fc.assert(fc.property(fullCase, fc.bigInt({ min: 0n, max: 3n }), ({ request, page }, above) => {
      fc.pre(isFirstPage(request));
      const horizon = BigInt(page.upper) + above;
      expect(code(() => nextPosition(request, { ...page, horizon: String(horizon) }))).toBe(null);
    }), { numRuns: 500 });
  });

  it("answers 410 RESYNC_REQUIRED for a cursor beyond the page snapshot's xmax (a restored or replaced database)", () => {
    fc.assert(fc.property(fc.oneof(incrementalCase, fullCase), fc.bigInt({ min: 0n, max: 100_000n }), ({ request, page }, ahead) => {
      fc.pre(!isFirstPage(request));
      const from = request.mode === "full" ? BigInt(page.upper) : BigInt(request.after[0]);
      const xmax = from - ahead > 0n ? from - ahead : 1n;
      const outcome = code(() => nextPosition(request, { ...page, snapshot: `${xmax}:${xmax}:`, horizon: "0" }));
      expect(outcome).toBe(from > xmax ? "RESYNC_REQUIRED" : null);
    }), { numRuns: 2000 });
  });
});

/**
 * A model of the database a full sync pages through: rows at keys (scope, id), each with the txid
 * of its last write; scopes the caller was granted (with the txid of that grant) or not. Time is a
 * txid counter; a page's snapshot sees every txid below the counter (no transaction in progress),
 * written "t:t:" as pull-store.ts reads it. What a page reads follows pull-store.ts's FULL_SQL: the
 * present rows of visible scopes ahead of `after`, and the passed ones in (catch-up after, after]
 * that a transaction `since` did not see wrote, or whose scope such a transaction granted.
 */
class ModelDatabase {
  next = 10n;
  /** key "scope/id" → txid of the row's last write (the row is there) */
  rows = new Map<string, bigint>();
  /** scope → txid of the caller's latest access change, and whether it granted */
  access = new Map<string, { txid: bigint; granted: boolean }>();

  static key(scope: number, id: number): string {
    return `${scope.toString().padStart(3, "0")}/${id.toString().padStart(3, "0")}`;
  }

  snapshotText(): string {
    return `${this.next}:${this.next}:`;
  }

  /** The rows a snapshot taken now shows the caller (live rows of scopes they may see). */
  visibleRows(): string[] {
    return [...this.rows.keys()].filter((k) => this.access.get(k.split("/")[0])?.granted).sort();
  }

  write(key: string): void {
    this.rows.set(key, this.next++);
  }

  remove(key: string): void {
    this.rows.delete(key);
    this.next++;
  }

  setAccess(scope: string, granted: boolean): void {
    this.access.set(scope, { txid: this.next++, granted });
  }

  /** One page of a full sync, as FULL_SQL reads it. */
  page(request: FullRequest, limit: number): { outcome: PageOutcome; listed: string[] } {
    const upper = request.upper ?? String(this.next);
    const since = BigInt((request.since ?? this.snapshotText()).split(":")[0]);
    const toKey = (k: string): string => k;
    const after = request.upper === null ? "" : fromFullKey(request.after);
    const caughtAfter = request.catchUp ? fromFullKey(request.catchUp.after) : "";
    const candidates = this.visibleRows().filter((k) => {
      if (k > after) return true;
      if (k <= caughtAfter) return false;
      const scope = this.access.get(k.split("/")[0])!;
      return this.rows.get(k)! >= since || scope.txid >= since;
    }).map(toKey);
    const page = candidates.slice(0, limit);
    const lastKey = page.at(-1) ?? null;
    return {
      listed: page,
      outcome: {
        hasMore: candidates.length > limit,
        upper,
        snapshot: this.snapshotText(),
        horizon: "0",
        lastKey: lastKey === null ? null : toFullKey(lastKey),
        lastCaughtUp: lastKey !== null && lastKey <= after,
      },
    };
  }
}

/** Model keys "sss/iii" as full keys (scope uuid, collection, id uuid) that sort the same way. */
function toFullKey(key: string): FullKey {
  const [scope, id] = key.split("/");
  return [`00000000-0000-0000-0000-000000000${scope}`, "tasks", `00000000-0000-0000-0000-000000000${id}`];
}
function fromFullKey(key: FullKey): string {
  return `${key[0].slice(-3)}/${key[2].slice(-3)}`;
}

const SCOPES = 6;
const IDS = 8;
const change = fc.oneof(
  fc.record({ type: fc.constant("move" as const), id: fc.nat({ max: IDS - 1 }), from: fc.nat({ max: SCOPES - 1 }), to: fc.nat({ max: SCOPES - 1 }) }),
  fc.record({ type: fc.constant("create" as const), id: fc.nat({ max: IDS - 1 }), to: fc.nat({ max: SCOPES - 1 }) }),
  fc.record({ type: fc.constant("edit" as const), id: fc.nat({ max: IDS - 1 }), to: fc.nat({ max: SCOPES - 1 }) }),
  fc.record({ type: fc.constant("delete" as const), id: fc.nat({ max: IDS - 1 }), to: fc.nat({ max: SCOPES - 1 }) }),
  fc.record({ type: fc.constant("grant" as const), to: fc.nat({ max: SCOPES - 1 }) }),
  fc.record({ type: fc.constant("revoke" as const), to: fc.nat({ max: SCOPES - 1 }) }),
);

describe("a full sync's pages, against a model of what a page reads", () => {
  it("list every row the last page's snapshot shows, whatever moves, appears or is granted between pages", () => {
    fc.assert(fc.property(
      fc.array(fc.tuple(fc.nat({ max: SCOPES - 1 }), fc.nat({ max: IDS - 1 })), { maxLength: 30 }),
      fc.array(fc.boolean(), { minLength: SCOPES, maxLength: SCOPES }),
      fc.integer({ min: 1, max: 4 }),
      fc.array(fc.array(change, { maxLength: 6 }), { maxLength: 40 }),
      (initial, granted, limit, between) => {
        const db = new ModelDatabase();
        for (let scope = 0; scope < SCOPES; scope++) if (granted[scope]) db.setAccess(String(scope).padStart(3, "0"), true);
        for (const [scope, id] of initial) db.write(ModelDatabase.key(scope, id));
        const listed = new Set<string>();
        let request: PageRequest = pageRequestFor(null, 0, 30);
        const began = db.next;
        let pages = 0;
        for (;;) {
          const { outcome, listed: keys } = db.page(request as FullRequest, limit);
          for (const k of keys) listed.add(k);
          const { position, hasMore } = nextPosition(request, outcome);
          if (position.mode === "incremental") {
            expect(position).toEqual({ mode: "incremental", after: [outcome.upper, 0, "", ZERO_UUID] });
            // every row the last page's snapshot shows was listed by some page
            expect(db.visibleRows().filter((k) => !listed.has(k))).toEqual([]);
            // what the pages listed and was removed since comes on the incremental page, now: it
            // follows when anything was written after the sync began (never after a one-page sync)
            expect(hasMore).toBe(db.next > began);
            if (pages === 0) expect(hasMore).toBe(false);
            return;
          }
          expect(hasMore).toBe(true);
          request = pageRequestFor({ v: 2, scope: "*", iat: 0, ...position } as CursorPayload, 0, 30);
          // other transactions commit between this page and the next
          for (const c of between[pages] ?? []) {
            const to = String(c.to).padStart(3, "0");
            if (c.type === "grant" || c.type === "revoke") db.setAccess(to, c.type === "grant");
            else if (c.type === "move") {
              const from = ModelDatabase.key(c.from, c.id);
              if (db.rows.has(from)) {
                db.remove(from);
                db.write(ModelDatabase.key(c.to, c.id));
              }
            } else if (c.type === "delete") db.remove(ModelDatabase.key(c.to, c.id));
            else db.write(ModelDatabase.key(c.to, c.id));
          }
          pages++;
          // writes stop after `between`; then the sync must end
          expect(pages).toBeLessThan(between.length + 4 * (SCOPES * IDS) + 10);
        }
      },
    ), { numRuns: 3000 });
  });

  it("the catch-up is what lists a row moved behind the sync: the same page without it does not", () => {
    const db = new ModelDatabase();
    db.setAccess("000", true);
    db.setAccess("005", true);
    db.write(ModelDatabase.key(0, 2));
    db.write(ModelDatabase.key(5, 1));
    const first = pageRequestFor(null, 0, 30) as FullRequest;
    const page1 = db.page(first, 1);
    expect(page1.listed).toEqual(["000/002"]);
    const { position } = nextPosition(first, page1.outcome);
    // R moves from 005 into 000, behind the sync
    db.remove(ModelDatabase.key(5, 1));
    db.write(ModelDatabase.key(0, 1));
    const second = pageRequestFor({ v: 2, scope: "*", iat: 0, ...position } as CursorPayload, 0, 30) as FullRequest;
    expect(db.page(second, 5).listed).toEqual(["000/001"]);
    // with every passed key taken as caught up already, nothing lists it
    expect(db.page({ ...second, catchUp: { after: second.after, next: second.since! } }, 5).listed).toEqual([]);
  });
});

describe("pageRequestFor", () => {
  const cursorArb: fc.Arbitrary<CursorPayload> = fc.oneof(
    fc.record({ v: fc.constant(2 as const), mode: fc.constant("full" as const), upper: txid.map(String), after: fullKey, scope: fc.constant("*"), iat: fc.nat({ max: 2_000_000_000 }) }),
    fc.record({
      v: fc.constant(2 as const),
      mode: fc.constant("full" as const),
      upper: txid.map(String),
      after: fullKey,
      since: snapshot,
      catch_up: fc.option(fc.record({ after: fullKey, next: snapshot }), { nil: undefined }),
      scope: fc.constant("*"),
      iat: fc.nat({ max: 2_000_000_000 }),
    }, { requiredKeys: ["v", "mode", "upper", "after", "since", "scope", "iat"] }),
    fc.record({ v: fc.constant(2 as const), mode: fc.constant("incremental" as const), after: incrementalKey, scope: fc.constant("*"), iat: fc.nat({ max: 2_000_000_000 }) }),
  );

  it("without a cursor starts a full sync at the first key, bound by the first page's own snapshot", () => {
    expect(pageRequestFor(null, 0, 30)).toEqual({ mode: "full", upper: null, after: [ZERO_UUID, "", ZERO_UUID] });
  });

  it("a full cursor from before the catch-up (no since) catches up from the sync's start", () => {
    const cursor: CursorPayload = { v: 2, mode: "full", upper: "42", after: [ZERO_UUID, "tasks", ZERO_UUID], scope: "*", iat: 0 };
    expect(pageRequestFor(cursor, 0, 30)).toEqual({ mode: "full", upper: "42", after: cursor.after, since: "42:42:", catchUp: null });
  });

  it("continues exactly where the cursor stands, or answers 410 exactly when the cursor is older than the retention window", () => {
    // any age, and often the window's very edge (exactly `days` old: still good; a second more: 410)
    const daysAndAge = fc.integer({ min: 1, max: 35 }).chain((days) =>
      fc.tuple(fc.constant(days), fc.oneof(fc.integer({ min: -2 * DAY, max: 40 * DAY }), fc.constantFrom(days * DAY - 1, days * DAY, days * DAY + 1)))
    );
    fc.assert(fc.property(cursorArb, daysAndAge, (cursor, [days, age]) => {
      const now = cursor.iat + age;
      const outcome = code(() => pageRequestFor(cursor, now, days));
      if (age > days * DAY) {
        expect(outcome).toBe("RESYNC_REQUIRED");
        return;
      }
      expect(outcome).toBeNull();
      const request = pageRequestFor(cursor, now, days);
      expect(request).toEqual(cursor.mode === "full"
        ? { mode: "full", upper: cursor.upper, after: cursor.after, since: cursor.since ?? `${cursor.upper}:${cursor.upper}:`, catchUp: cursor.catch_up ?? null }
        : { mode: "incremental", after: cursor.after });
    }), { numRuns: 2000 });
  });
});

describe("collectionsChange", () => {
  const names = fc.uniqueArray(fc.constantFrom<string>("lists", "list_members", "tasks", "notes", "events"), { maxLength: 5 });
  // A collection's tag as a server generated with `columns` of it has it (two versions of its columns: 1 and 2).
  const tagOf = (name: string, columns = 1) => `${name.slice(0, 6)}_${columns}`.padEnd(8, "_");
  const synced = (of: string[], columns = 1) => new Map(of.map((name) => [name, tagOf(name, columns)]));

  it("names what only the cursor's server synced (unknown, by tag) and what only this one syncs (missing)", () => {
    fc.assert(fc.property(names, names, (issuedFor, mine) => {
      const change = collectionsChange(issuedFor.map((n) => tagOf(n)), synced(mine));
      expect(change.unknown.sort()).toEqual(issuedFor.filter((n) => !mine.includes(n)).map((n) => tagOf(n)).sort());
      expect(change.missing.sort()).toEqual(mine.filter((n) => !issuedFor.includes(n)).sort());
    }));
  });

  it("a collection synced by both with other columns is missing here, and its tag there unknown", () => {
    fc.assert(fc.property(names, names, (issuedFor, reshaped) => {
      const mine = new Map(issuedFor.map((name) => [name, tagOf(name, reshaped.includes(name) ? 2 : 1)]));
      const change = collectionsChange(issuedFor.map((n) => tagOf(n)), mine);
      const changed = issuedFor.filter((n) => reshaped.includes(n));
      expect(change.missing.sort()).toEqual([...changed].sort());
      expect(change.unknown.sort()).toEqual(changed.map((n) => tagOf(n)).sort());
    }));
  });

  it("a cursor from before collections were bound (no tags) may have passed any of them: all missing", () => {
    fc.assert(fc.property(names, (mine) => {
      expect(collectionsChange(undefined, synced(mine))).toEqual({ unknown: [], missing: mine });
    }));
  });
});

describe("issuedDuringRollout", () => {
  it("holds for ROLLOUT_SECONDS after the cursor was issued, then no more (a rolled-back function never keeps a device waiting longer)", () => {
    const cursor = (iat: number) => ({ v: 2, mode: "incremental", after: ["1", 0, "tasks", "00000000-0000-4000-8000-000000000000"], scope: "*", iat }) as CursorPayload;
    expect(issuedDuringRollout(cursor(1000), 1000)).toBe(true);
    expect(issuedDuringRollout(cursor(1000), 1000 + ROLLOUT_SECONDS - 1)).toBe(true);
    expect(issuedDuringRollout(cursor(1000), 1000 + ROLLOUT_SECONDS)).toBe(false);
  });
});

describe("issuedToEarlierAccount", () => {
  const MICROS = 1_000_000;
  const base = { v: 2 as const, mode: "incremental" as const, after: ["42", 0, "", ZERO_UUID] as IncrementalKey, scope: "*" };
  const born = fc.integer({ min: 1, max: 2_000_000_000 * MICROS });

  it("refuses a cursor naming another creation time than the account's, whenever it was issued", () => {
    fc.assert(fc.property(born, born, fc.nat({ max: 2_000_000_000 }), (account, named, iat) => {
      expect(issuedToEarlierAccount({ ...base, iat, born: String(named) }, String(account))).toBe(named !== account);
    }));
  });

  it("judges a cursor from before (no creation time) by when it was issued: before the second the account was created", () => {
    fc.assert(fc.property(born, fc.integer({ min: -3, max: 3 }), (account, seconds) => {
      const iat = Math.max(0, Math.floor(account / MICROS) + seconds);
      expect(issuedToEarlierAccount({ ...base, iat }, String(account))).toBe(iat < Math.floor(account / MICROS));
    }));
  });

  it("refuses nothing when the account's creation time is unknown", () => {
    expect(issuedToEarlierAccount({ ...base, iat: 0, born: "5" }, null)).toBe(false);
    expect(issuedToEarlierAccount({ ...base, iat: 0 }, null)).toBe(false);
  });
});
