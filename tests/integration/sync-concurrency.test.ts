// Commit order vs allocation order (docs/sync.md, "Following cursors never
// misses a change"). Users of ONE shared list write at the same time: the
// owner and an editor through POST /v1/sync/batch, two more editors straight
// in SQL as `authenticated` with their claims (what PostgREST does), in
// transactions that write, sleep, then commit while others commit after them.
// A member (viewer) follows cursors with a small page size. After the writers
// are done and the reader caught up, its view must equal what the database
// lets it see, field for field.
//
// A deliberately NAIVE reader follows the same writes, paging on `seq` over
// app_private.sync_changes without the snapshot bound, and must miss changes:
// proof that the bound is needed and that this test can fail.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { jsonEqual } from "../../client/rebase.ts";
import { changesResponseSchema, syncBatchResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { adminSql, call, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { visibleTo } from "../support/rls-view.ts";
import { isLockVictim, pushOk, settled, share, upsert } from "../support/shared-lists.ts";

const ROUNDS = 4;

/** Own pool: writers hold transactions open, the shared admin pool is small. */
const writerSql = postgres(stack.adminDbUrl, { max: 10, onnotice: () => {}, connection: { TimeZone: "UTC" } });
afterAll(async () => {
  await writerSql.end({ timeout: 5 });
});

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const randomInt = (max: number) => Math.floor(Math.random() * max);

interface Row {
  version: number;
  data: Record<string, unknown>;
}
/** collection/id → live row. */
type View = Map<string, Row>;

interface Reader {
  readonly view: View;
  /** Reads one page after its cursor, applies it and moves the cursor; true while there is more. */
  next(): Promise<boolean>;
  /** Versions delivered that were not newer than what the reader already held. */
  readonly stale: string[];
}

function applyChange(reader: { view: View; stale: string[] }, change: { collection: string; id: string; version: number; deleted: boolean; data: Record<string, unknown> | null }) {
  const key = `${change.collection}/${change.id}`;
  const held = reader.view.get(key);
  if (held && !change.deleted && held.version >= change.version) reader.stale.push(`${key}@${change.version} after @${held.version}`);
  if (change.deleted) reader.view.delete(key);
  else reader.view.set(key, { version: change.version, data: change.data! });
}

/** GET /v1/sync/changes with a small page: a full sync first, then incremental pages. */
async function apiReader(user: TestUser, limit: number): Promise<Reader> {
  let cursor: string | undefined;
  const reader: Reader = {
    view: new Map(),
    stale: [],
    async next() {
      const query = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}) });
      const response = await call(`/v1/sync/changes?${query}`, { token: user.token });
      if (response.status !== 200) throw new Error(`pull failed: ${response.status} ${response.text}`);
      const page = changesResponseSchema.parse(response.body);
      for (const change of page.changes) applyChange(reader, change);
      cursor = page.cursor;
      return page.has_more;
    },
  };
  while (await reader.next());
  return reader;
}

/**
 * The bug the bound exists for: page on the change entries' `seq` and move
 * past the highest one seen. A transaction that took seq N and commits after
 * N+1 was read is skipped for good. Reads the list's entries directly in SQL
 * and resolves each to the row's state at read time, like the real pull.
 */
async function naiveReader(listId: string, limit: number, start: View): Promise<Reader> {
  const [{ max }] = await adminSql<{ max: string }[]>`select coalesce(max(seq), 0)::text as max from app_private.sync_changes where scope_id = ${listId}`;
  let cursor = Number(max);
  const reader: Reader = {
    view: new Map(start),
    stale: [],
    async next() {
      const rows = await writerSql<{ collection: string; id: string; seq: string; version: string | null; data: Record<string, unknown> | null }[]>`
        select c.collection, c.id, c.seq::text, s.version::text,
               case when c.present and not s.deleted then coalesce(to_jsonb(t) - 'id', to_jsonb(l) - 'id') end as data
          from app_private.sync_changes c
          join app_private.sync_records s on s.collection = c.collection and s.id = c.id
          left join public.tasks t on c.collection = 'tasks' and t.id = c.id
          left join public.lists l on c.collection = 'lists' and l.id = c.id
         where c.scope_id = ${listId} and c.seq > ${cursor}
         order by c.seq
         limit ${limit + 1}`;
      const page = rows.slice(0, limit);
      for (const row of page) {
        cursor = Math.max(cursor, Number(row.seq));
        applyChange(reader, { collection: row.collection, id: row.id, version: Number(row.version), deleted: row.data === null, data: row.data });
      }
      return rows.length > limit;
    },
  };
  return reader;
}

/** Keys whose state in `view` differs from `truth` (missing, stale, or held but gone). */
function differences(view: View, truth: View): string[] {
  const out: string[] = [];
  for (const [key, row] of truth) {
    const seen = view.get(key);
    if (!seen || seen.version !== row.version || !jsonEqual(seen.data, row.data)) {
      out.push(`${key}: database @${row.version}, reader ${seen ? "@" + seen.version : "nothing"}`);
    }
  }
  for (const key of view.keys()) if (!truth.has(key)) out.push(`${key}: reader holds it, the database has no such visible row`);
  return out;
}

/** An app writing straight through the Data API: one transaction as `authenticated` (with claims), held open by `hold` before it commits. */
async function asUserHeld(user: TestUser, work: (tx: postgres.TransactionSql) => Promise<unknown>, hold: () => Promise<unknown>) {
  await writerSql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: user.userId, role: "authenticated", session_id: user.sessionId })}, true),
                    set_config('role', 'authenticated', true)`;
    await work(tx);
    await hold();
  });
}

/** Editor writing in SQL: inserts, updates and deletes of the list's tasks, each transaction held open a random while after its writes. */
function sqlWriter(user: TestUser, listId: string, transactions: number, pool: string[]): () => Promise<number> {
  return async () => {
    let committed = 0;
    for (let t = 0; t < transactions; t++) {
      await delay(randomInt(4));
      try {
        await asUserHeld(user, async (tx) => {
          // New tasks, plus at most one existing one (one row lock: SQL writers never deadlock each other).
          for (let i = randomInt(3); i >= 0; i--) {
            const id = randomUUID();
            pool.push(id);
            await tx`insert into public.tasks (id, list_id, title, position) values (${id}, ${listId}, ${`sql ${t}.${i}`}, ${Math.random()})`;
          }
          if (pool.length > 0 && Math.random() < 0.7) {
            const id = pool[randomInt(pool.length)];
            const roll = Math.random();
            if (roll < 0.15) await tx`delete from public.tasks where id = ${id}`;
            else if (roll < 0.55) await tx`update public.tasks set title = ${`edited by ${user.email} ${t}`} where id = ${id}`;
            else await tx`update public.tasks set done = not done, notes = ${`n${t}`} where id = ${id}`;
          }
        }, () => delay(randomInt(12)));
        committed++;
      } catch (error) {
        // A deadlock with a concurrent push rolls this transaction back: nothing of it is due.
        if (!isLockVictim(error)) throw error;
      }
    }
    return committed;
  };
}

/** A device pushing through POST /v1/sync/batch: creates and field edits of the list's tasks (conflicts allowed). */
function apiWriter(user: TestUser, listId: string, batches: number, pool: string[]): () => Promise<number> {
  const versions = new Map<string, number>();
  return async () => {
    let applied = 0;
    for (let b = 0; b < batches; b++) {
      await delay(randomInt(4));
      const ops = Array.from({ length: 1 + randomInt(3) }, (_, i) => {
        if (pool.length === 0 || Math.random() < 0.5) {
          const id = randomUUID();
          pool.push(id);
          return upsert("tasks", id, { list_id: listId, title: `api ${b}.${i}`, position: Math.random() });
        }
        const id = pool[randomInt(pool.length)];
        return upsert("tasks", id, Math.random() < 0.5 ? { title: `api edit ${b}.${i}` } : { position: Math.random() }, versions.get(id) ?? null);
      });
      const body = { ops };
      for (;;) {
        const response = await call("/v1/sync/batch", { method: "POST", token: user.token, body });
        // A deadlock with a SQL writer is a retryable 503: retry the same batch, as a client does.
        if (response.status === 503) continue;
        if (response.status !== 200) throw new Error(`push failed: ${response.status} ${response.text}`);
        for (const result of syncBatchResponseSchema.parse(response.body).results) {
          if (result.record) versions.set(result.record.id, result.record.version);
          if (result.status === "applied") applied++;
        }
        break;
      }
    }
    return applied;
  };
}

interface SharedList {
  owner: TestUser;
  editors: TestUser[];
  reader: TestUser;
  listId: string;
}

async function sharedList(): Promise<SharedList> {
  const [owner, apiEditor, sqlEditorA, sqlEditorB, reader] = await Promise.all(Array.from({ length: 5 }, () => createTestUser()));
  const listId = randomUUID();
  await pushOk(owner, { ops: [upsert("lists", listId, { title: "Shared" }), upsert("tasks", randomUUID(), { list_id: listId, title: "first" })] });
  for (const editor of [apiEditor, sqlEditorA, sqlEditorB]) await share(owner, listId, editor, "editor");
  await share(owner, listId, reader, "viewer");
  return { owner, editors: [apiEditor, sqlEditorA, sqlEditorB], reader, listId };
}

describe("pull under concurrent writers of several users on one shared list", () => {
  it(`a member following cursors ends equal to what RLS lets them see over ${ROUNDS} rounds; the naive reader misses`, async () => {
    const naiveMissed: number[] = [];
    let totalWrites = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const { owner, editors: [apiEditor, sqlEditorA, sqlEditorB], reader: member, listId } = await sharedList();
      const bystander = await createTestUser();
      const pool: string[] = [];
      await settled();
      const real = await apiReader(member, 1 + randomInt(4));
      const naive = await naiveReader(listId, 1 + randomInt(4), real.view);
      expect(differences(real.view, await visibleTo(member))).toEqual([]);

      let writing = true;
      const writers = Promise.all([
        sqlWriter(sqlEditorA, listId, 14, pool)(),
        sqlWriter(sqlEditorB, listId, 14, pool)(),
        sqlWriter(owner, listId, 10, pool)(),
        apiWriter(owner, listId, 6, pool)(),
        apiWriter(apiEditor, listId, 6, pool)(),
        // Someone else's list at the same time: never shows up in the member's view.
        sqlWriter(bystander, bystander.userId, 8, [])(),
      ]).finally(() => (writing = false));
      const follow = async (r: Reader) => {
        while (writing) if (!(await r.next())) await delay(randomInt(3));
      };
      await Promise.all([follow(real), follow(naive)]);
      totalWrites += (await writers).reduce((a, b) => a + b, 0);

      // Every writer is done: following the cursors to the end must catch up.
      await settled();
      while (await real.next());
      while (await naive.next());
      const truth = await visibleTo(member);
      expect({ round, missed: differences(real.view, truth), stale: real.stale }).toEqual({ round, missed: [], stale: [] });
      expect(truth.size).toBeGreaterThan(10);
      naiveMissed.push(differences(naive.view, truth).length);
    }
    expect(totalWrites).toBeGreaterThan(ROUNDS * 50);
    expect(naiveMissed.reduce((a, b) => a + b, 0), `the naive reader missed per round: ${naiveMissed.join(", ")}`).toBeGreaterThan(0);
  }, 120_000);

  it("deterministically: an editor's write that commits after a later one is delivered by the cursor, and skipped by the naive reader", async () => {
    const { editors: [, early, late], reader: member, listId } = await sharedList();
    await settled();
    const real = await apiReader(member, 10);
    const naive = await naiveReader(listId, 10, real.view);
    const [earlyId, lateId] = [randomUUID(), randomUUID()];

    let releaseEarly!: () => void;
    const earlyMayCommit = new Promise<void>((resolve) => (releaseEarly = resolve));
    let earlyWrote!: () => void;
    const earlyHasWritten = new Promise<void>((resolve) => (earlyWrote = resolve));
    const earlyTx = asUserHeld(early, (tx) => tx`insert into public.tasks (id, list_id, title) values (${earlyId}, ${listId}, 'early')`, async () => {
      earlyWrote();
      await earlyMayCommit;
    });
    await earlyHasWritten;
    await asUserHeld(late, (tx) => tx`insert into public.tasks (id, list_id, title) values (${lateId}, ${listId}, 'late')`, async () => {});

    // The late write has committed, the early one (lower seq) has not.
    expect(await real.next()).toBe(false);
    expect(real.view.has(`tasks/${lateId}`)).toBe(false); // held back by the bound until the early one ends
    expect(await naive.next()).toBe(false);
    expect(naive.view.has(`tasks/${lateId}`)).toBe(true); // the naive cursor moved past the early write's seq

    releaseEarly();
    await earlyTx;
    await settled();
    while (await real.next());
    while (await naive.next());
    const truth = await visibleTo(member);
    expect(differences(real.view, truth)).toEqual([]);
    expect(real.view.get(`tasks/${earlyId}`)?.data).toMatchObject({ title: "early" });
    expect(differences(naive.view, truth)).toEqual([expect.stringContaining(`tasks/${earlyId}: database @`)]);
  });
});
