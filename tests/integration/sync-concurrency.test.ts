// Commit order vs sequence order (docs/sync.md, "Why no change is missed").
// Several writers commit in parallel, holding their transactions open for a
// random while between taking a sequence number and committing, while a
// reader follows cursors. At the end the reader's view must equal the
// database: nothing missed, nothing delivered twice.
//
// The same harness runs against a deliberately NAIVE design (a plain global
// sequence, a reader that advances past the highest seq it saw) and must
// catch it missing changes: proof that the test can fail.
import { randomBytes, randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesResponseSchema, syncBatchResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { adminSql, call, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { allocateSeqs, databaseView, writeRecord } from "../support/sync-records.ts";

const ROUNDS = 5;

/** Own pool: writers hold transactions open, the shared admin pool is small. */
const writerSql = postgres(stack.adminDbUrl, { max: 12, onnotice: () => {} });
afterAll(async () => {
  await writerSql.end({ timeout: 5 });
});

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const randomInt = (max: number) => Math.floor(Math.random() * max);

interface Delivery {
  key: string;
  version: number;
  deleted: boolean;
  data: unknown;
}

interface Reader {
  /** Reads one page after its cursor and moves the cursor. */
  next(): Promise<{ changes: Delivery[]; hasMore: boolean }>;
}

interface Outcome {
  /** Database records the reader's final view lacks or holds in an older state. */
  missed: string[];
  /** (key, version) pairs delivered more than once. */
  duplicates: string[];
  /** Keys the reader holds that the database does not (e.g. another user's). */
  foreign: string[];
  writes: number;
  pages: number;
}

/**
 * Runs the writers in parallel while the reader follows its cursor, then
 * drains the reader and compares its view with `truth()`.
 */
async function race(reader: Reader, writers: (() => Promise<number>)[], truth: () => Promise<Map<string, Omit<Delivery, "key">>>): Promise<Outcome> {
  const view = new Map<string, Delivery>();
  const delivered = new Set<string>();
  const duplicates: string[] = [];
  let pages = 0;
  const take = async () => {
    const page = await reader.next();
    pages++;
    for (const change of page.changes) {
      const pair = `${change.key}@${change.version}`;
      if (delivered.has(pair)) duplicates.push(pair);
      delivered.add(pair);
      const held = view.get(change.key);
      if (held && held.version >= change.version) duplicates.push(`${pair} after @${held.version}`);
      view.set(change.key, change);
    }
    return page.hasMore;
  };

  let writing = true;
  const done = Promise.all(writers.map((w) => w())).finally(() => (writing = false));
  while (writing) {
    if (!(await take())) await delay(randomInt(3));
  }
  const writes = (await done).reduce((a, b) => a + b, 0);
  // Every write has committed: following the cursor to the end must catch up.
  while (await take());

  const db = await truth();
  const missed: string[] = [];
  for (const [key, state] of db) {
    const seen = view.get(key);
    if (!seen || seen.version !== state.version || seen.deleted !== state.deleted || JSON.stringify(seen.data) !== JSON.stringify(state.data)) {
      missed.push(`${key}: database @${state.version}${state.deleted ? " (deleted)" : ""}, reader ${seen ? "@" + seen.version : "nothing"}`);
    }
  }
  const foreign = [...view.keys()].filter((key) => !db.has(key));
  return { missed, duplicates, foreign, writes, pages };
}

// ------------------------------------------------------------- the real thing

/**
 * Follows GET /v1/sync/changes, a few changes per page, after a first full
 * sync of the (still empty) user, so every later change (tombstones too) is due.
 */
async function apiReader(user: TestUser, limit: number): Promise<Reader> {
  let cursor: string | undefined;
  const reader: Reader = {
    async next() {
      const query = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}) });
      const response = await call(`/v1/sync/changes?${query}`, { token: user.token });
      if (response.status !== 200) throw new Error(`pull failed: ${response.status} ${response.text}`);
      const page = changesResponseSchema.parse(response.body);
      cursor = page.cursor;
      return {
        hasMore: page.has_more,
        changes: page.changes.map((c) => ({ key: `${c.collection}/${c.id}`, version: c.version, deleted: c.deleted, data: c.data })),
      };
    },
  };
  expect((await reader.next()).changes).toEqual([]);
  return reader;
}

/**
 * A writer that follows the head-lock protocol in SQL (as the push does) and
 * holds its transaction open a random while after taking its seqs.
 */
function sqlWriter(userId: string, transactions: number, pool: string[]): () => Promise<number> {
  return async () => {
    let writes = 0;
    for (let t = 0; t < transactions; t++) {
      await delay(randomInt(4));
      const count = 1 + randomInt(3);
      await writerSql.begin(async (tx) => {
        const first = await allocateSeqs(tx, userId, count);
        await delay(randomInt(8));
        for (let i = 0; i < count; i++) {
          // Mostly new records (each a final state the reader must get), some updates and deletes.
          const id = Math.random() < 0.6 || pool.length === 0 ? randomUUID() : pool[randomInt(pool.length)];
          if (!pool.includes(id)) pool.push(id);
          const data = Math.random() < 0.15 ? null : { title: `w${first + i}`, done: Math.random() < 0.5 };
          await writeRecord(tx, userId, first + i, { collection: "tasks", id, data });
        }
      });
      writes += count;
    }
    return writes;
  };
}

/** A device pushing through POST /v1/sync/batch (its own records: its ops chain without conflicts). */
function apiWriter(user: TestUser, batches: number): () => Promise<number> {
  const deviceId = randomUUID();
  const mine: string[] = [];
  return async () => {
    let writes = 0;
    for (let b = 0; b < batches; b++) {
      await delay(randomInt(4));
      const ops = Array.from({ length: 1 + randomInt(3) }, () => {
        const id = Math.random() < 0.6 || mine.length === 0 ? randomUUID() : mine[randomInt(mine.length)];
        if (!mine.includes(id)) mine.push(id);
        return Math.random() < 0.15
          ? { op_id: randomUUID(), collection: "lists", record_id: id, type: "delete", base_version: null }
          : { op_id: randomUUID(), collection: "lists", record_id: id, type: "upsert", base_version: null, data: { title: `d${b}`, position: Math.random() } };
      });
      const response = await call("/v1/sync/batch", { method: "POST", token: user.token, body: { device_id: deviceId, ops } });
      if (response.status !== 200) throw new Error(`push failed: ${response.status} ${response.text}`);
      const { results } = syncBatchResponseSchema.parse(response.body);
      writes += results.filter((r) => r.status === "applied").length;
    }
    return writes;
  };
}

async function truthOf(userId: string) {
  return await databaseView(userId);
}

describe("pull under concurrent writers (head-lock protocol, real API)", () => {
  it(`a reader following cursors ends equal to the database over ${ROUNDS} rounds`, async () => {
    let totalWrites = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const user = await createTestUser();
      const bystander = await createTestUser();
      const pool: string[] = [];
      const reader = await apiReader(user, 1 + randomInt(4));
      const outcome = await race(reader, [
        sqlWriter(user.userId, 12, pool),
        sqlWriter(user.userId, 12, pool),
        sqlWriter(user.userId, 12, pool),
        sqlWriter(user.userId, 12, pool),
        apiWriter(user, 6),
        apiWriter(user, 6),
        // Another user writing at the same time never shows up in this reader's view.
        sqlWriter(bystander.userId, 8, []),
      ], () => truthOf(user.userId));
      expect({ round, missed: outcome.missed, duplicates: outcome.duplicates, foreign: outcome.foreign }).toEqual({ round, missed: [], duplicates: [], foreign: [] });
      expect(outcome.pages).toBeGreaterThan(1);
      totalWrites += outcome.writes;
    }
    expect(totalWrites).toBeGreaterThan(ROUNDS * 50);
  }, 180_000);

  it("a writer that took an earlier seq blocks later writers until it commits, so the reader cannot skip it", async () => {
    const user = await createTestUser();
    const reader = await apiReader(user, 10);
    const [early, late] = [randomUUID(), randomUUID()];

    let releaseEarly!: () => void;
    const earlyMayCommit = new Promise<void>((resolve) => (releaseEarly = resolve));
    let earlyHasSeq!: () => void;
    const earlyTookSeq = new Promise<void>((resolve) => (earlyHasSeq = resolve));
    let latePid = 0;

    const earlyWriter = writerSql.begin(async (tx) => {
      const seq = await allocateSeqs(tx, user.userId, 1);
      await writeRecord(tx, user.userId, seq, { collection: "tasks", id: early, data: { title: "early" } });
      earlyHasSeq();
      await earlyMayCommit;
      return seq;
    });
    await earlyTookSeq;
    const lateWriter = writerSql.begin(async (tx) => {
      [{ pid: latePid }] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
      const seq = await allocateSeqs(tx, user.userId, 1);
      await writeRecord(tx, user.userId, seq, { collection: "tasks", id: late, data: { title: "late" } });
      return seq;
    });
    // Wait until the late writer is blocked on the head lock (not a timing guess: Postgres says so).
    for (;;) {
      const [row] = await adminSql<{ waiting: boolean }[]>`
        select coalesce(bool_or(wait_event_type = 'Lock'), false) as waiting from pg_stat_activity where pid = ${latePid}`;
      if (latePid !== 0 && row.waiting) break;
      await delay(5);
    }
    // Neither is visible: the late writer has no seq yet, the early one has not committed.
    expect((await reader.next()).changes).toEqual([]);
    releaseEarly();
    const [earlySeq, lateSeq] = await Promise.all([earlyWriter, lateWriter]);
    expect(lateSeq).toBeGreaterThan(earlySeq);
    expect((await reader.next()).changes.map((c) => c.key)).toEqual([`tasks/${early}`, `tasks/${late}`]);
  });
});

// ------------------------------------------------------------ the naive design

/**
 * The bug this suite exists to catch: seqs from one plain sequence, taken
 * without any lock, and a reader that moves its cursor past the highest seq it
 * has seen. A transaction holding seq N that commits after seq N+1 was read is
 * skipped for good. Built in a scratch schema of the test database.
 */
describe("pull under concurrent writers (NAIVE global sequence: must be caught)", () => {
  const schema = `naive_sync_${randomBytes(4).toString("hex")}`;
  const table = `"${schema}".changes`;
  const sequence = `"${schema}".change_seq`;

  beforeAll(async () => {
    await adminSql.unsafe(`
      create schema "${schema}";
      create sequence ${sequence};
      create table ${table} (stream text not null, key text not null, seq bigint not null, deleted boolean not null, data jsonb, primary key (stream, key))`);
  });
  afterAll(async () => {
    await adminSql.unsafe(`drop schema if exists "${schema}" cascade`);
  });

  function naiveReader(stream: string, limit: number): Reader {
    let cursor = 0;
    return {
      async next() {
        const rows = await adminSql.unsafe<{ key: string; seq: string; deleted: boolean; data: unknown }[]>(
          `select key, seq, deleted, data from ${table} where stream = $1 and seq > $2 order by seq limit $3`, [stream, cursor, limit + 1]);
        const page = rows.slice(0, limit);
        for (const row of page) cursor = Math.max(cursor, Number(row.seq));
        return { hasMore: rows.length > limit, changes: page.map((r) => ({ key: r.key, version: Number(r.seq), deleted: r.deleted, data: r.data })) };
      },
    };
  }

  function naiveWriter(stream: string, transactions: number, pool: string[]): () => Promise<number> {
    return async () => {
      let writes = 0;
      for (let t = 0; t < transactions; t++) {
        await delay(randomInt(4));
        await writerSql.begin(async (tx) => {
          const [{ seq }] = await tx.unsafe<{ seq: string }[]>(`select nextval('${sequence}') as seq`);
          await delay(randomInt(8));
          const key = Math.random() < 0.6 || pool.length === 0 ? randomUUID() : pool[randomInt(pool.length)];
          if (!pool.includes(key)) pool.push(key);
          const data = Math.random() < 0.15 ? null : { title: `n${seq}` };
          await tx.unsafe(
            `insert into ${table} (stream, key, seq, deleted, data) values ($1, $2, $3, $4, $5)
             on conflict (stream, key) do update set seq = excluded.seq, deleted = excluded.deleted, data = excluded.data`,
            [stream, key, seq, data === null, data === null ? null : JSON.stringify(data)]);
        });
        writes++;
      }
      return writes;
    };
  }

  async function naiveTruth(stream: string) {
    const rows = await adminSql.unsafe<{ key: string; seq: string; deleted: boolean; data: unknown }[]>(
      `select key, seq, deleted, data from ${table} where stream = $1`, [stream]);
    return new Map(rows.map((r) => [r.key, { version: Number(r.seq), deleted: r.deleted, data: r.data }]));
  }

  it(`the same race catches the naive reader missing changes within ${ROUNDS} rounds`, async () => {
    const missedPerRound: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const stream = randomUUID();
      const pool: string[] = [];
      const outcome = await race(
        naiveReader(stream, 1 + randomInt(4)),
        Array.from({ length: 6 }, () => naiveWriter(stream, 15, pool)),
        () => naiveTruth(stream),
      );
      missedPerRound.push(outcome.missed.length);
    }
    expect(missedPerRound.reduce((a, b) => a + b, 0), `missed per round: ${missedPerRound.join(", ")}`).toBeGreaterThan(0);
  }, 180_000);

  it("deterministically: seq N commits after seq N+1 was read, and the naive reader never sees it", async () => {
    const stream = randomUUID();
    const reader = naiveReader(stream, 10);
    let releaseEarly!: () => void;
    const earlyMayCommit = new Promise<void>((resolve) => (releaseEarly = resolve));
    let earlyHasSeq!: () => void;
    const earlyTookSeq = new Promise<void>((resolve) => (earlyHasSeq = resolve));
    const write = (tx: postgres.TransactionSql, key: string, seq: string) =>
      tx.unsafe(`insert into ${table} (stream, key, seq, deleted, data) values ($1, $2, $3, false, '{}')`, [stream, key, seq]);

    const early = writerSql.begin(async (tx) => {
      const [{ seq }] = await tx.unsafe<{ seq: string }[]>(`select nextval('${sequence}') as seq`);
      earlyHasSeq();
      await earlyMayCommit;
      await write(tx, "early", seq);
    });
    await earlyTookSeq;
    await writerSql.begin(async (tx) => {
      const [{ seq }] = await tx.unsafe<{ seq: string }[]>(`select nextval('${sequence}') as seq`);
      await write(tx, "late", seq);
    });
    expect((await reader.next()).changes.map((c) => c.key)).toEqual(["late"]);
    releaseEarly();
    await early;
    expect((await reader.next()).changes).toEqual([]);
    expect([...(await naiveTruth(stream)).keys()].sort()).toEqual(["early", "late"]);
  });
});
