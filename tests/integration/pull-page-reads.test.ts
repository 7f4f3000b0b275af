// What an incremental pull page reads to resolve its entries. A change entry
// that is present in a scope the caller sees carries the row's version and
// time (the sync triggers write both from the same seq and now()), so only
// the other entries (removals, rows listed at a grant's position) look up
// app_private.sync_records. What a user would notice otherwise: every
// incremental page paying a second primary-key lookup per entry, which grows
// with the size of the whole database (the scope-cost bench). Counted by what
// Postgres counts, never by time; the entries themselves are asserted too.
// And a page is never JIT-compiled (what auto_explain reports of its plan).
// And a page of a list shared with (or taken from) the caller reads about a
// page of its entries wherever it is in the list: a user would notice a big
// list arriving page by page slower and slower (every page re-read the list
// from its first row: O(N²) over the pages).
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type IncrementalKey, ZERO_UUID } from "../../functions/api/sync/plan-pull.ts";
import { readChangesPage } from "../../functions/api/sync/pull-store.ts";
import { createTempDatabase, type TempDatabase } from "../../scripts/lib/temp-database.ts";
import { insertAuthUser, insertAuthUsers, signIn } from "../support/auth-users.ts";
import { allNodes, inRolledBackTransaction, planRecorder } from "../support/explained.ts";
import { untilOpenTransactionsEnd } from "../support/open-transactions.ts";

let database: TempDatabase;
let admin: postgres.Sql;
const userId = randomUUID();
let claims: string;

beforeAll(async () => {
  database = await createTempDatabase("tidesync_pullreads", { seed: false });
  admin = postgres(database.adminDbUrl, { max: 1, onnotice: () => {} });
  // Rows are counted as fetched: once autovacuum marked the pages all-visible, an index-only
  // lookup would fetch none and the count below would say nothing.
  await admin`alter table app_private.sync_records set (autovacuum_enabled = false)`;
  await insertAuthUser(admin, userId); // their personal list's id is their id
  claims = await signIn(admin, userId);
  await admin`insert into public.tasks (list_id, title) select ${userId}, 'Task ' || g from generate_series(1, 300) g`;
  await admin`update public.tasks set done = true where title in ('Task 1', 'Task 2', 'Task 3')`;
  await admin`delete from public.tasks where title in ('Task 4', 'Task 5')`;
  await admin`analyze`;
});

afterAll(async () => {
  await admin?.end({ timeout: 5 });
  await database?.drop();
});

describe("an incremental pull page", () => {
  it("looks up the sync bookkeeping only for its removals, and lists every entry as it stands", async () => {
    // a page lists entries below every transaction open in the cluster: another test file's
    // would hide the removals (0 lookups, fewer entries)
    await untilOpenTransactionsEnd(admin);
    await admin.begin(async (tx) => {
      const bookkeepingRowsRead = async () => (await tx<{ reads: number }[]>`
        select coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0)::integer as reads
          from pg_stat_xact_user_tables where schemaname = 'app_private' and relname = 'sync_records'`)[0].reads;
      const before = await bookkeepingRowsRead();
      await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${claims}, true)`;
      const from: IncrementalKey = ["0", 0, "", ZERO_UUID];
      const page = await readChangesPage(tx, { mode: "incremental", after: from }, null, 1000);
      await tx`reset role`;
      // 2 removals looked up; not the 298 live tasks, the list and its membership too (302 before)
      expect(await bookkeepingRowsRead() - before).toBe(2);

      const entries = JSON.parse(`[${page.entries.map((chunk) => new TextDecoder().decode(chunk)).join(",")}]`) as
        { collection: string; id: string; version: number; deleted: boolean; data: { title: string; done: boolean } | null; updated_at: string }[];
      expect(entries).toHaveLength(302); // 300 tasks (2 of them deleted), their list and its owner's membership
      const stored = await tx<{ collection: string; id: string; version: string; deleted: boolean; updated_at: string }[]>`
        select collection, id::text as id, version::text as version, deleted,
               to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as updated_at
          from app_private.sync_records`;
      const byKey = new Map(stored.map((s) => [`${s.collection}/${s.id}`, s]));
      for (const entry of entries) {
        const s = byKey.get(`${entry.collection}/${entry.id}`)!;
        // version and time as the bookkeeping has them, for live rows and removals alike
        expect([entry.version, entry.deleted, entry.updated_at]).toEqual([Number(s.version), s.deleted, s.updated_at]);
      }
      expect(entries.filter((e) => e.deleted).map((e) => e.data)).toEqual([null, null]);
      expect(entries.filter((e) => e.collection === "tasks" && e.data?.done).length).toBe(3);
    });
  });

  it("(like a full sync's) is never JIT-compiled, however costly the planner thinks it (compiling took ~80 ms of CPU for a page that runs in ~10)", async (ctx) => {
    const [{ available }] = await admin<{ available: boolean }[]>`select pg_jit_available() as available`;
    if (!available) {
      console.log("skipped: this Postgres has no JIT provider (pg_jit_available() is false), so nothing could be compiled");
      ctx.skip();
    }
    const recorder = planRecorder();
    const sql = postgres(database.adminDbUrl, { max: 1, onnotice: recorder.onnotice });
    try {
      await inRolledBackTransaction(sql, async (tx) => {
        await tx`set local jit_above_cost = 0`; // every statement the planner would compile
        const plans = await recorder.explainEach(tx, false, async () => {
          await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${claims}, true)`;
          await readChangesPage(tx, { mode: "full", upper: null, after: [ZERO_UUID, "", ZERO_UUID] }, null, 1000);
          await tx`select 1`; // the page's plan is reported once its portal closes: after this statement's start
        });
        const page = plans.filter((p) => p["Query Text"].includes("with bounds as materialized"));
        expect(page).toHaveLength(1);
        expect(page[0].JIT).toBeUndefined();
      });
    } finally {
      await sql.end({ timeout: 5 });
    }
  });
});

describe("an incremental page of a big list shared with the caller, or taken from them", () => {
  const LIMIT = 100;
  const TASKS = 2000;
  const owner = randomUUID();
  const member = randomUUID();
  const claims = new Map<string, string>();
  const as = (tx: postgres.TransactionSql, user: string) =>
    tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${claims.get(user)!}, true)`;

  beforeAll(async () => {
    await insertAuthUser(admin, owner); // the owner's personal list (its id is theirs), shared below
    await insertAuthUser(admin, member);
    for (const user of [owner, member]) claims.set(user, await signIn(admin, user));
    await admin`insert into public.tasks (list_id, title) select ${owner}, 'Task ' || g from generate_series(1, ${TASKS}) g`;
    await admin.begin(async (tx) => {
      await as(tx, owner);
      const [{ code }] = await tx<{ code: string }[]>`select public.create_list_invite(${owner}, 'viewer') as code`;
      await as(tx, member);
      await tx`select public.accept_list_invite(${code})`;
    });
    await admin`analyze`;
  });

  /** The page after the 1,800th task of the list at the access entry's position, as `member` pulls it: each scan of the change entries. */
  async function scansOfPageNearTheEnd(granted: boolean) {
    await untilOpenTransactionsEnd(admin); // a pull lists entries below every transaction open in the cluster
    const [access] = await admin<{ txid: string; seq: string }[]>`
      select txid::text, seq::text from app_private.sync_access where user_id = ${member} and scope_id = ${owner} and granted = ${granted}`;
    const [{ id }] = await admin<{ id: string }[]>`
      select id::text from app_private.sync_changes where scope_id = ${owner} and collection = 'tasks' order by id offset 1799 limit 1`;
    const recorder = planRecorder();
    const sql = postgres(database.adminDbUrl, { max: 1, onnotice: recorder.onnotice });
    try {
      let listed = 0;
      let statement: ReturnType<typeof allNodes> = [];
      await inRolledBackTransaction(sql, async (tx) => {
        const plans = await recorder.explainEach(tx, true, async () => {
          await as(tx, member);
          listed = (await readChangesPage(tx, { mode: "incremental", after: [access.txid, Number(access.seq), "tasks", id] }, null, LIMIT)).count;
          await tx`select 1`; // the page's plan is reported once its portal closes
        }, true);
        statement = allNodes(plans.find((p) => p["Query Text"].includes("with bounds as materialized"))!.Plan);
      });
      return { listed, scans: statement.filter((n) => n["Relation Name"] === "sync_changes" && (n["Actual Loops"] ?? 0) > 0) };
    } finally {
      await sql.end({ timeout: 5 });
    }
  }

  /** Every scan of the change entries read at most a page of them per loop (its rows and those it filtered out), in about as many buffers. */
  function expectAboutAPageRead(scans: Awaited<ReturnType<typeof scansOfPageNearTheEnd>>["scans"]) {
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) {
      const label = `${scan["Node Type"]} ${scan["Index Name"]} (${scan["Index Cond"]})`;
      expect((scan["Actual Rows"] ?? 0) + (scan["Rows Removed by Filter"] ?? 0), `${label}: rows read per loop`).toBeLessThanOrEqual(LIMIT + 1);
      const buffers = (scan["Shared Hit Blocks"] ?? 0) + (scan["Shared Read Blocks"] ?? 0);
      expect(buffers, `${label}: buffers`).toBeLessThanOrEqual(3 * (LIMIT + 1) * (scan["Actual Loops"] ?? 1));
    }
  }

  it("reads about one page of the list's entries, not the 1,800 before the cursor's key", async () => {
    const { listed, scans } = await scansOfPageNearTheEnd(true);
    expect(listed).toBe(LIMIT);
    expectAboutAPageRead(scans);
  });

  it("and so does a page of its removals once the caller has left it (after the test above)", async () => {
    await admin.begin(async (tx) => {
      await as(tx, member);
      await tx`delete from public.list_members where list_id = ${owner} and user_id = ${member}`;
    });
    const { listed, scans } = await scansOfPageNearTheEnd(false);
    expect(listed).toBe(LIMIT);
    expectAboutAPageRead(scans);
  });
});

describe("a pull page among many other users' lists", () => {
  const OTHER_USERS = 2000;
  const caller = randomUUID();
  let callerClaims: string;

  beforeAll(async () => {
    await insertAuthUser(admin, caller);
    callerClaims = await signIn(admin, caller);
    await admin`insert into public.tasks (list_id, title) select ${caller}, 'Task ' || g from generate_series(1, 20) g`;
    await insertAuthUsers(admin, OTHER_USERS, "pull-page-reads-other"); // each with their personal list
    await admin`analyze`;
  });

  /** Rows of public.lists read (scanned or fetched by an index) while the caller reads one page. */
  async function listsRowsReadByAPage(request: Parameters<typeof readChangesPage>[1]): Promise<{ read: number; listed: number }> {
    await untilOpenTransactionsEnd(admin); // a pull lists entries below every transaction open in the cluster
    return await admin.begin(async (tx) => {
      const listsRowsRead = async () => (await tx<{ reads: number }[]>`
        select coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0)::integer as reads
          from pg_stat_xact_user_tables where schemaname = 'public' and relname = 'lists'`)[0].reads;
      const before = await listsRowsRead();
      await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${callerClaims}, true)`;
      const page = await readChangesPage(tx, request, null, 1000);
      await tx`reset role`;
      return { read: (await listsRowsRead()) - before, listed: page.count };
    });
  }

  // The caller's visible scopes are what public.lists' policies let them read. Those policies
  // are an OR (a member's lists, or a new list of its creator's), which Postgres can answer from
  // two indexes only with a BitmapOr: under the page's own settings (no bitmap scans) it read
  // every list in the database, twice a page (~0.1 ms per 1,000 lists: 5× the page's time with
  // 100,000 users). What a user would notice: every pull slowing as the app gains users.
  const pages: { page: string; request: Parameters<typeof readChangesPage>[1] }[] = [
    { page: "a full sync's first page", request: { mode: "full", upper: null, after: [ZERO_UUID, "", ZERO_UUID] } },
    { page: "an incremental page", request: { mode: "incremental", after: ["0", 0, "", ZERO_UUID] } },
  ];
  it.each(pages)(`$page reads the caller's list, not the ${OTHER_USERS} other users' lists`, async ({ request }) => {
    const { read, listed } = await listsRowsReadByAPage(request);
    expect(listed).toBeGreaterThanOrEqual(22); // the 20 tasks, their list and its owner's membership
    expect(read).toBeLessThan(50);
  });
});

describe("a pull page's byte budget, at its edges", () => {
  const owner = randomUUID();
  let ownerClaims: string;
  const TASKS = 120; // the entries come in rows of RECORDS_PER_ROW (50): the budget falls in the first, second and last

  beforeAll(async () => {
    await insertAuthUser(admin, owner);
    ownerClaims = await signIn(admin, owner);
    // titles of different lengths: every entry its own size
    await admin`insert into public.tasks (list_id, title) select ${owner}, repeat('t', g) from generate_series(1, ${TASKS}) g`;
  });

  async function page(maxBytes: number): Promise<{ entries: string[]; hasMore: boolean }> {
    let result = { entries: [] as string[], hasMore: false };
    await inRolledBackTransaction(admin, async (tx) => {
      await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${ownerClaims}, true)`;
      const read = await readChangesPage(tx, { mode: "incremental", after: ["0", 0, "", ZERO_UUID] }, null, 1000, maxBytes);
      const text = read.entries.map((chunk) => new TextDecoder().decode(chunk)).join(",");
      result = { entries: (JSON.parse(`[${text}]`) as unknown[]).map((e) => JSON.stringify(e)), hasMore: read.hasMore };
    });
    return result;
  }

  it("ends at the entry whose bytes (each entry's and its comma) reach the budget, and says there is more only when an entry follows", async () => {
    await untilOpenTransactionsEnd(admin); // a pull lists entries below every transaction open in the cluster
    const all = await page(1 << 30);
    expect(all.hasMore).toBe(false);
    const n = all.entries.length;
    expect(n).toBe(TASKS + 2); // the tasks, the list and its owner's membership
    // bytes up to and including entry k (1-based), each entry with its comma, as the database counts them
    const reach = [0];
    for (const entry of all.entries) reach.push(reach.at(-1)! + Buffer.byteLength(entry) + 1);
    const budgets = [1, 49, 50, 51, 99, 100, 101, n - 1, n].flatMap((k) => [reach[k] - 1, reach[k], reach[k] + 1]);
    for (const budget of budgets) {
      const k = reach.findIndex((bytes, i) => i > 0 && bytes >= budget);
      const listed = k === -1 ? n : k;
      const got = await page(budget);
      expect([got.entries.length, got.hasMore], `budget ${budget}`).toEqual([listed, listed < n]);
      expect(got.entries, `budget ${budget}`).toEqual(all.entries.slice(0, listed));
    }
  });
});
