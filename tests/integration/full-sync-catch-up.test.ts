// A full sync (GET /v1/sync/changes without a cursor, paged) lists every record
// its user may see, through the real function, while others write between its
// pages: its first page says `reset`, and a device drops every local record the
// pages do not list (docs/sync.md). Pages walk the scopes in key order, each
// at its own snapshot; a record moved into a scope the pages had passed, or a
// scope granted whose id sorts before the page, used to fall between pages, so
// the device dropped a record its user saw all along, with its queued edits.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { changesResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { MAX_SNAPSHOT_TEXT, OLDEST_NAMED, sinceSnapshot } from "../../functions/api/sync/cursor-snapshot.ts";
import { cursorPayload } from "../support/cursor-payload.ts";
import { adminSql, call, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { holdTransaction } from "../support/held-transactions.ts";
import { holdOpenTransactions, type OpenTransactions } from "../support/open-transactions.ts";
import { visibleTo } from "../support/rls-view.ts";
import { asUser, settled, share } from "../support/shared-lists.ts";
import { type RowWrite, writeRows } from "../support/sync-records.ts";

type Page = ReturnType<typeof changesResponseSchema.parse>;

/** A list id that sorts before (after) every random one: the full sync reaches its scope first (last). */
const earlyId = () => `00000000-0000-4000-8000-${randomUUID().slice(-12)}`;
const lateId = () => `ffffffff-ffff-4fff-bfff-${randomUUID().slice(-12)}`;
const list = (id: string, title: string): RowWrite => ({ collection: "lists", id, data: { title } });
const task = (id: string, listId: string, title: string): RowWrite => ({ collection: "tasks", id, data: { list_id: listId, title } });
const key = (c: { collection: string; id: string }) => `${c.collection}/${c.id}`;

/**
 * A full sync of `user` with pages of `limit`, calling `between` after each page that has more
 * (another transaction commits before the next page is read). Returns its pages, up to the one
 * whose cursor is incremental. First waits
 * for the transactions open now to end, unless `openTransactions` (the test holds some open).
 */
async function fullSync(
  user: TestUser,
  limit: number,
  between: (page: Page, index: number) => Promise<void>,
  options: { collections?: string; maxPages?: number; openTransactions?: boolean } = {},
): Promise<Page[]> {
  if (!options.openTransactions) await settled();
  const pages: Page[] = [];
  let cursor: string | undefined;
  for (;;) {
    const query = new URLSearchParams({ limit: String(limit), ...(options.collections ? { collections: options.collections } : {}), ...(cursor ? { cursor } : {}) });
    const response = await call(`/v1/sync/changes?${query}`, { token: user.token });
    expect(response.status, response.text).toBe(200);
    const page = changesResponseSchema.parse(response.body);
    expect(page.changes.length).toBeLessThanOrEqual(limit);
    pages.push(page);
    // Its last page hands over to incremental pulls: those after it (has_more while others wrote
    // meanwhile: their removals) are not the full sync's, and could list what its pages missed.
    if (!page.has_more || cursorPayload(page.cursor).mode === "incremental") return pages;
    await between(page, pages.length - 1);
    cursor = page.cursor;
    expect(pages.length, "pages of a full sync that has not ended").toBeLessThan(options.maxPages ?? 200);
  }
}

/** What a device that applies the pages in order holds at the end (a full sync lists no removals). */
function held(pages: Page[]) {
  const records = new Map<string, Page["changes"][number]>();
  for (const change of pages.flatMap((p) => p.changes)) {
    expect(change.deleted).toBe(false);
    const current = records.get(key(change));
    if (!current || change.version > current.version) records.set(key(change), change);
  }
  return records;
}

/** The pages list every record `user` can see now (of `collections`), each in its current version; reset on the first page only. */
async function expectEveryVisibleRecordListed(user: TestUser, pages: Page[], collections?: string[]) {
  expect(pages.map((p) => p.reset)).toEqual(pages.map((_, i) => i === 0));
  const records = held(pages);
  const visible = await visibleTo(user, collections);
  const unlisted = [...visible.keys()].filter((k) => !records.has(k));
  expect(unlisted, "records the user can see that no page listed (a device would drop them)").toEqual([]);
  for (const [k, row] of visible) expect([k, records.get(k)!.version, records.get(k)!.data]).toEqual([k, row.version, row.data]);
  return records;
}

/** The page's changes include a row of a scope after `scope`: the pages have passed `scope` whole. */
const passed = (page: Page, scope: string) =>
  page.changes.some((c) => (c.collection === "lists" ? c.id : String(c.data?.list_id)) > scope);

describe("a full sync while others write between its pages", () => {
  it("lists a task moved from a list it has not reached into one it has passed", async () => {
    const alice = await createTestUser();
    const [early, late, r] = [earlyId(), lateId(), randomUUID()];
    await writeRows(alice, [list(early, "early"), list(late, "late"), task(r, late, "R")]);
    let moved = false;
    const pages = await fullSync(alice, 1, async (page) => {
      if (moved || !passed(page, early)) return;
      // another device of Alice (or a co-editor) moves R from 'late' into 'early' meanwhile
      await asUser(alice, (tx) => tx`update public.tasks set list_id = ${early} where id = ${r}`);
      moved = true;
    });
    expect(moved).toBe(true);
    const records = await expectEveryVisibleRecordListed(alice, pages);
    expect(records.get(`tasks/${r}`)?.data).toMatchObject({ list_id: early, title: "R" });
  });

  it("lists the rows of a list shared with the user whose id sorts before the page", async () => {
    const [alice, bob] = [await createTestUser(), await createTestUser()];
    const early = earlyId();
    const tasks = [randomUUID(), randomUUID()];
    await writeRows(bob, [list(early, "Bob's early list"), ...tasks.map((id, i) => task(id, early, `t${i}`))]);
    await writeRows(alice, [list(lateId(), "late")]);
    let shared = false;
    const pages = await fullSync(alice, 1, async () => {
      if (shared) return;
      // Every row of Alice's sorts after `early`: the first page has passed it.
      await share(bob, early, alice, "viewer");
      shared = true;
    });
    const records = await expectEveryVisibleRecordListed(alice, pages);
    expect([...records.keys()]).toEqual(expect.arrayContaining([`lists/${early}`, ...tasks.map((id) => `tasks/${id}`)]));
  });

  it("a catch-up larger than a page spans pages, and rows written into what it already caught up still come", async () => {
    const [alice, bob] = [await createTestUser(), await createTestUser()];
    // Bob's list sorts right after 'early': the catch-up walks early's rows, then Bob's.
    const [early, late] = [earlyId(), lateId()];
    const bobs = `00000000-0001-4000-8000-${randomUUID().slice(-12)}`;
    const moving = Array.from({ length: 5 }, () => randomUUID());
    const bobsTasks = Array.from({ length: 4 }, () => randomUUID());
    await writeRows(alice, [list(early, "early"), list(late, "late"), ...moving.map((id, i) => task(id, late, `m${i}`))]);
    await writeRows(bob, [list(bobs, "Bob's"), ...bobsTasks.map((id, i) => task(id, bobs, `b${i}`))]);
    const afterMove = randomUUID();
    const steps: string[] = [];
    const pages = await fullSync(alice, 2, async (page) => {
      if (steps.length === 0 && passed(page, early) && passed(page, bobs)) {
        // one transaction moves five tasks behind the sync, another shares a list of five rows there
        await asUser(alice, (tx) => tx`update public.tasks set list_id = ${early} where id = any (${moving}::uuid[])`);
        await share(bob, bobs, alice, "editor");
        steps.push("moved and shared");
      } else if (steps.length === 1 && (cursorPayload(page.cursor) as { catch_up?: { after: string[] } }).catch_up?.after[0] === bobs) {
        // while the catch-up goes on over pages, in Bob's list: a task created in 'early', which it has caught up
        await writeRows(alice, [task(afterMove, early, "during the catch-up")]);
        steps.push("written during the catch-up");
      }
    });
    expect(steps).toEqual(["moved and shared", "written during the catch-up"]);
    const records = await expectEveryVisibleRecordListed(alice, pages);
    expect([...records.keys()]).toEqual(expect.arrayContaining([...moving, ...bobsTasks, afterMove].map((id) => `tasks/${id}`)));
    // The sync ended and hands over to incremental pulls at the bound it started with.
    const { upper } = cursorPayload(pages[0].cursor) as { upper: string };
    expect(cursorPayload(pages.at(-1)!.cursor)).toMatchObject({ mode: "incremental", after: [upper, 0, "", "00000000-0000-0000-0000-000000000000"] });
  });
});

describe("a full sync while many transactions are in progress", () => {
  /**
   * Holds 25 transactions open (each with a transaction id, as writers in progress), then writes
   * 600 tasks into 'early' and 4 into 'late' (txids above theirs: more rows than a page behind
   * the open ones), runs `work`, and ends the transactions. `midway` runs once `OLDEST_NAMED` of
   * them are open: a transaction it begins is the first one a cursor counts, not names.
   */
  async function withManyInProgress(alice: TestUser, early: string, late: string, work: () => Promise<void>, midway?: () => Promise<void>) {
    const open = [await holdOpenTransactions(stack.adminDbUrl, midway ? OLDEST_NAMED : 25)];
    try {
      if (midway) {
        await midway();
        open.push(await holdOpenTransactions(stack.adminDbUrl, 25 - OLDEST_NAMED));
      }
      await asUser(alice, (tx) => tx`insert into public.tasks (list_id, title) select ${early}, 'early ' || g from generate_series(1, 600) g`);
      await asUser(alice, (tx) => tx`insert into public.tasks (list_id, title) select ${late}, 'late ' || g from generate_series(1, 4) g`);
      // The premise: a snapshot now names more transactions in progress than a cursor carries (a
      // snapshot names those below the latest one completed: these writes, after them).
      const [{ snapshot }] = await adminSql<{ snapshot: string }[]>`select pg_current_snapshot()::text as snapshot`;
      expect(snapshot.length).toBeGreaterThan(MAX_SNAPSHOT_TEXT);
      await work();
    } finally {
      for (const transactions of open) await transactions.end();
    }
  }

  /**
   * Every task `alice` sees was listed, each at most three times (once more for each round that had to
   * catch up again: a transaction of another test file, running in parallel, that ends between two
   * pages costs one; seen twice under CI's load); the sync ended.
   */
  async function expectEveryTaskListed(alice: TestUser, pages: Page[]) {
    // ended: its last page hands over to incremental pulls
    expect(cursorPayload(pages.at(-1)!.cursor).mode).toBe("incremental");
    const listed = pages.flatMap((p) => p.changes.map(key));
    const visible = [...(await visibleTo(alice, ["tasks"])).keys()];
    expect([...new Set(listed)].sort()).toEqual(visible.sort());
    expect(listed.length).toBeLessThanOrEqual(3 * visible.length);
  }

  it("ends, listing each row once, while more writers are in progress than the cursor can name (it used to page for ever)", async () => {
    const alice = await createTestUser();
    const [early, late] = [earlyId(), lateId()];
    await writeRows(alice, [list(early, "early"), list(late, "late")]);
    await settled();
    await withManyInProgress(alice, early, late, async () => {
      // Nothing commits between the pages: 2 pages (500 + 104). A transaction of another test file
      // that ends meanwhile may cost a round more; 8 pages is far from for ever.
      const pages = await fullSync(alice, 500, async () => {}, { collections: "tasks", maxPages: 8, openTransactions: true });
      await expectEveryTaskListed(alice, pages);
      expect(pages.flatMap((p) => p.changes)).toHaveLength(604);
    });
  });

  for (const who of ["the oldest of them (one the cursor names)", "one the cursor counts, not names"]) {
    it(`lists a row that ${who} wrote behind its pages and committed between them`, async () => {
      const [alice, bob] = [await createTestUser(), await createTestUser()];
      const [early, late] = [earlyId(), lateId()];
      await writeRows(alice, [list(early, "early"), list(late, "late")]);
      await share(alice, early, bob, "editor");
      await settled();
      // Bob's (his usage row, which it locks, is not the one Alice's writes take): the first key of
      // 'early', which the first page passes (it cannot list it: not committed yet)
      const first = `00000000-0000-4000-8000-${randomUUID().slice(-12)}`;
      let writer!: ReturnType<typeof holdTransaction>;
      let txid = "";
      const begin = async () => {
        writer = holdTransaction(async (tx) => {
          [{ txid }] = await tx<{ txid: string }[]>`
            insert into public.tasks (id, list_id, title) values (${first}, ${early}, ${`from ${who}`}) returning pg_current_xact_id()::text as txid`;
        }, { as: bob });
        await writer.ran;
      };
      const counted = who.includes("counts");
      if (!counted) await begin();
      // (committed however the test ends: a transaction left open holds back every later test's pulls)
      await withManyInProgress(alice, early, late, async () => {
        const pages = await fullSync(alice, 500, async (page, index) => {
          if (index !== 0) return;
          // The premise: the first page's cursor names the writer, or counts it.
          const since = sinceSnapshot((cursorPayload(page.cursor) as { since: string }).since);
          expect(since.snapshot.split(":")[2].split(",").includes(txid)).toBe(!counted);
          if (counted) expect(BigInt(since.counted!.lo) <= BigInt(txid) && BigInt(txid) <= BigInt(since.counted!.hi)).toBe(true);
          writer.commit();
          await writer.done;
        }, { collections: "tasks", maxPages: 8, openTransactions: true });
        expect(pages[0].changes.map(key)).not.toContain(`tasks/${first}`);
        expect(pages.flatMap((p) => p.changes.map(key))).toContain(`tasks/${first}`);
        await expectEveryTaskListed(alice, pages);
      }, counted ? begin : undefined).finally(() => writer?.commit());
    });
  }
});

describe("a full sync while a transaction stays open and short writers commit between its pages", () => {
  it("ends, and lists every row as the database holds it (it used to catch up again on every row since the open one began, page after page)", async () => {
    const alice = await createTestUser();
    const [early, late] = [earlyId(), lateId()];
    await writeRows(alice, [list(early, "early"), list(late, "late")]);
    await settled();
    const [limit, rows] = [100, 304];
    // An analytics query, a pg_dump, a session idle in transaction: open while the sync runs.
    const longOpen = await holdOpenTransactions(stack.adminDbUrl, 1);
    let writers: OpenTransactions | null = null;
    try {
      // Rows written after it began, more than a page of them in the scope the first page passes.
      await asUser(alice, (tx) => tx`insert into public.tasks (list_id, title) select ${early}, 'early ' || g from generate_series(1, ${rows - 4}) g`);
      await asUser(alice, (tx) => tx`insert into public.tasks (list_id, title) select ${late}, 'late ' || g from generate_series(1, 4) g`);
      const ids = (await adminSql<{ id: string }[]>`select id::text from public.tasks where list_id = ${early} order by id`).map((r) => r.id);
      // As many short writers in progress as make a page's snapshot too long for the cursor (with
      // production's 10-digit ids, 11; here ids are shorter, so more): each edits a task of Alice's
      // and commits before the next page, when the next ones begin.
      const [{ digits }] = await adminSql<{ digits: number }[]>`select length(pg_snapshot_xmax(pg_current_snapshot())::text) as digits`;
      const count = Math.ceil(MAX_SNAPSHOT_TEXT / (digits + 1));
      let edits = 0;
      const shortWriters = () =>
        holdOpenTransactions(stack.adminDbUrl, count, async (tx) => {
          await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: alice.userId, role: "authenticated", session_id: alice.sessionId })}, true),
                          set_config('role', 'authenticated', true)`;
          await tx`update public.tasks set title = ${`edit ${edits}`} where id = ${ids[edits++ % ids.length]}`;
        });
      writers = await shortWriters();
      const cursors: string[] = [];
      const pages = await fullSync(alice, limit, async (page) => {
        cursors.push(page.cursor);
        await writers!.end({ commit: true });
        writers = await shortWriters();
      }, { collections: "tasks", maxPages: Math.ceil(rows / limit) + 10, openTransactions: true });
      // The premise: the cursors counted in-progress ids (the snapshots were too long to name them all).
      expect(cursors.some((c) => (cursorPayload(c) as { since?: string }).since?.includes("+"))).toBe(true);
      // Checked while the last writers are still in progress: the database as the last page saw it.
      await expectEveryVisibleRecordListed(alice, pages, ["tasks"]);
      expect(held(pages).size).toBe(rows);
      // Listed again: at most the rows the writers of each interval edited (a run: 4 pages, 376 entries;
      // before, 14 pages and counting, each round listing again every row since the open one began)
      expect(pages.flatMap((p) => p.changes).length).toBeLessThanOrEqual(rows + (pages.length - 1) * count);
    } finally {
      await writers?.end();
      await longOpen.end();
    }
  });
});
