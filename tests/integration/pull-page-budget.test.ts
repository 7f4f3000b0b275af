// Where a pull page ends at its byte budget (readChangesPage's maxBytes), for every kind of
// budget: before the first entry's end (one entry a page), within a row of entries, at a
// row's edge, past the page. Walking the pages as the function does (nextPosition) lists
// every record (a full sync exactly once), each page ends after the entry that passes the
// budget and no later, and has_more is false only on the last page.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nextPosition, type PageRequest, ZERO_UUID } from "../../functions/api/sync/plan-pull.ts";
import { readChangesPage } from "../../functions/api/sync/pull-store.ts";
import { createTempDatabase, type TempDatabase } from "../../scripts/lib/temp-database.ts";
import { insertAuthUser, signIn } from "../support/auth-users.ts";
import { untilOpenTransactionsEnd } from "../support/open-transactions.ts";

let database: TempDatabase;
let admin: postgres.Sql;
const userId = randomUUID();
let claims: string;
const TASKS = 130; // more than two rows of entries (RECORDS_PER_ROW)
const LIMIT = 120;

beforeAll(async () => {
  database = await createTempDatabase("tidesync_pullbudget", { seed: false });
  admin = postgres(database.adminDbUrl, { max: 1, onnotice: () => {} });
  await insertAuthUser(admin, userId); // their personal list's id is their id
  claims = await signIn(admin, userId);
  // sizes from a few bytes to ~6 KB of notes, and multi-byte text (bytes, not characters, count)
  await admin`insert into public.tasks (list_id, title, notes)
    select ${userId}, 'Täsk ' || g, repeat('é', (g * 7919) % 3000) from generate_series(1, ${TASKS}) g`;
});

afterAll(async () => {
  await admin?.end({ timeout: 5 });
  await database?.drop();
});

const utf8 = new TextDecoder();

/** Every page from `first`, as the function walks them, at `limit` and `maxBytes`. */
async function walk(first: PageRequest, maxBytes: number, between: (page: number) => Promise<void> = async () => {}) {
  await untilOpenTransactionsEnd(admin);
  const pages: { bytes: number; sizes: number[]; ids: string[]; hasMore: boolean; catchingUp: boolean }[] = [];
  let request = first;
  for (let n = 0; n < 1000; n++) {
    const page = await admin.begin(async (tx) => {
      await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${claims}, true)`;
      return await readChangesPage(tx, request, null, LIMIT, maxBytes);
    });
    const text = page.entries.map((e) => utf8.decode(e)).join(",");
    const entries = JSON.parse(`[${text}]`) as { collection: string; id: string }[];
    const sizes = entries.map((e) => Buffer.byteLength(JSON.stringify(e)) + 1);
    const next = nextPosition(request, page);
    const { position } = next;
    // A full sync ends at its last page, whose position is incremental (has_more when others wrote
    // meanwhile: the pull it hands over to, not walked here).
    const hasMore = next.hasMore && position.mode === request.mode;
    pages.push({ bytes: Buffer.byteLength(text) + 1, sizes, ids: entries.filter((e) => e.collection === "tasks").map((e) => e.id), hasMore,
      // the page ended within a catch-up of passed keys: the next one goes on with it
      catchingUp: position.mode === "full" && position.catch_up !== undefined });
    if (!hasMore) return pages;
    await between(n);
    request = position.mode === "full"
      ? { mode: "full", upper: position.upper, after: position.after, since: position.since, catchUp: position.catch_up ?? null }
      : position;
  }
  throw new Error("the pages never ended");
}

describe("a pull page's byte budget", () => {
  let tasks: string[];
  beforeAll(async () => {
    tasks = (await admin<{ id: string }[]>`select id::text from public.tasks`).map((t) => t.id).sort();
  });

  for (const maxBytes of [1, 700, 5_000, 40_000, 100_000, 10_000_000]) {
    for (const mode of ["full", "incremental"] as const) {
      it(`${mode}, ${maxBytes} bytes: every task once, each page ends at the entry that passes the budget`, async () => {
        const first: PageRequest = mode === "full"
          ? { mode: "full", upper: null, after: [ZERO_UUID, "", ZERO_UUID] }
          : { mode: "incremental", after: ["0", 0, "", ZERO_UUID] };
        const pages = await walk(first, maxBytes);
        const listed = pages.flatMap((p) => p.ids);
        expect([...new Set(listed)].sort()).toEqual(tasks);
        // once in a full sync; from the start of the history, at most twice: the task's change and the
        // personal list's grant (which lists the rows of the scope again), wherever the pages end
        if (mode === "full") expect(listed).toHaveLength(TASKS);
        else expect(listed.length).toBeLessThanOrEqual(2 * TASKS);
        pages.forEach((page, i) => {
          const last = i === pages.length - 1;
          expect(page.hasMore).toBe(!last);
          if (page.sizes.length === 0) return;
          // every entry but the last starts and ends within the budget
          const beforeLast = page.sizes.slice(0, -1).reduce((a, b) => a + b, 0);
          expect(beforeLast).toBeLessThan(maxBytes);
          // a full sync's page that is not full ends only at the budget (or at the end; an incremental
          // page lists a record it reads twice once, so it may be short of `limit` anyway)
          if (mode === "full" && !last && page.sizes.length < LIMIT) expect(page.bytes).toBeGreaterThanOrEqual(maxBytes);
        });
        if (maxBytes === 1) expect(pages.every((p) => p.sizes.length <= 1)).toBe(true);
      });
    }
  }
});

describe("a full sync's catch-up at a byte budget", () => {
  it("tasks created behind the pages while they ran, caught up over pages that end at the budget: every task listed", async () => {
    const created: string[] = [];
    const pages = await walk({ mode: "full", upper: null, after: [ZERO_UUID, "", ZERO_UUID] }, 3_000, async (page) => {
      if (page !== 80 && page !== 81) return;
      // (about a task a page) 30 tasks with random ids: most sort before where the pages are by now,
      // and the next pages catch up on them, more than fit on one
      const rows = await admin<{ id: string }[]>`insert into public.tasks (list_id, title, notes)
        select ${userId}, 'Behind ' || g, repeat('x', 500) from generate_series(1, 30) g returning id::text`;
      created.push(...rows.map((r) => r.id));
      // A page reads below the cluster's oldest open transaction: one another test file holds open
      // would hold the catch-up back past the full sync's last page (into the incremental pull this
      // walk does not follow). The next pages then see the insert as ended, and catch up on it.
      await untilOpenTransactionsEnd(admin);
    });
    try {
      const all = (await admin<{ id: string }[]>`select id::text from public.tasks`).map((t) => t.id).sort();
      expect(all).toHaveLength(TASKS + created.length);
      expect(pages.some((p) => p.catchingUp)).toBe(true);
      expect([...new Set(pages.flatMap((p) => p.ids))].sort()).toEqual(all);
      pages.forEach((page) => expect(page.sizes.slice(0, -1).reduce((a, b) => a + b, 0)).toBeLessThan(3_000));
    } finally {
      await admin`delete from public.tasks where id = any (${created}::uuid[])`;
    }
  });
});
