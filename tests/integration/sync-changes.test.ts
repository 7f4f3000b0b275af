// GET /v1/sync/changes through real Deno and Postgres on the app's own tables:
// full sync, incremental pulls (direct SQL writes as `authenticated` show up
// like pushes), deletes, keyset pagination, the collections filter, cursor
// integrity and binding, the purge horizon and a cursor ahead of the database
// (410) and every bound's error.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { changesResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { type CursorPayload, encodeCursor } from "../../functions/api/sync/cursor.ts";
import { cursorPayload } from "../support/cursor-payload.ts";
import { phone, startSession } from "../support/device-sessions.ts";
import { adminSql, call, createTestUser, expectEnvelope, stack, type TestUser } from "../support/harness.ts";
import { pushOk, settled, upsert } from "../support/shared-lists.ts";
import { ledger, type RowWrite, syncState, writeRows } from "../support/sync-records.ts";

interface Change {
  collection: string;
  id: string;
  version: number;
  deleted: boolean;
  data: Record<string, unknown> | null;
  updated_at: string;
}

/**
 * The collections these tests pull unless one says otherwise: they are about the protocol on lists
 * and tasks; every list also brings its memberships (list_members, pulled by default: a test passes
 * `collections: undefined` to see them; shared-lists.test.ts and list-members-sync.test.ts show them).
 */
const LISTS_AND_TASKS = "lists,tasks";

function changesUrl(params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries({ collections: LISTS_AND_TASKS, ...params })) if (value !== undefined) query.set(key, String(value));
  const text = query.toString();
  return `/v1/sync/changes${text ? "?" + text : ""}`;
}

/** One page, once every write made so far is below the pull's bound (see settled()). */
async function pull(user: TestUser, params: Record<string, string | number | undefined> = {}) {
  await settled();
  const response = await call(changesUrl(params), { token: user.token });
  expect(response.status, response.text).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  expect(response.headers.get("cache-control")).toBe("no-store");
  // The schema defaults `reset` for older servers; this server always sends it.
  expect(typeof (response.body as { reset?: unknown }).reset).toBe("boolean");
  return changesResponseSchema.parse(response.body);
}

/** Follows cursors until has_more is false; returns every change, the final cursor and the page count. */
async function pullAll(user: TestUser, params: { cursor?: string; limit?: number; collections?: string } = {}) {
  const changes: Change[] = [];
  const resets: boolean[] = [];
  let cursor = params.cursor;
  let pages = 0;
  for (;;) {
    const page = await pull(user, { ...params, cursor });
    pages++;
    changes.push(...page.changes);
    resets.push(page.reset);
    cursor = page.cursor;
    if (!page.has_more) return { changes, cursor, pages, resets };
    expect(pages).toBeLessThan(10_000);
  }
}

/** Direct writes as the user (what PostgREST does), one transaction per call. */
const write = (user: TestUser, ...writes: RowWrite[]) => writeRows(user, writes);
const task = (user: TestUser, id: string, title: string, extra: Record<string, unknown> = {}): RowWrite =>
  ({ collection: "tasks", id, data: { list_id: user.userId, title, ...extra } });
const list = (id: string, title: string): RowWrite => ({ collection: "lists", id, data: { title } });
const gone = (collection: "lists" | "tasks", id: string): RowWrite => ({ collection, id, data: null });
const key = (c: { collection: string; id: string }) => `${c.collection}/${c.id}`;

/** The payload of a cursor (base64url JSON before the MAC). */
const SECRET = stack.functionsEnv.TIDESYNC_CURSOR_SECRET;

describe("GET /v1/sync/changes — full sync", () => {
  it("lists every live row the caller can see once, in its latest state, without deleted ones", async () => {
    const user = await createTestUser();
    const [a, b, c, doomed] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await write(user, task(user, a, "a v1"), list(b, "groceries"), task(user, doomed, "short-lived"));
    const [aV2] = await write(user, task(user, a, "a v2", { done: true }));
    await write(user, task(user, c, "c"), gone("tasks", doomed));

    const page = await pull(user);
    expect(page.has_more).toBe(false);
    expect(page.changes.map(key).sort()).toEqual([`lists/${user.userId}`, `lists/${b}`, `tasks/${a}`, `tasks/${c}`].sort());
    const latestA = page.changes.find((ch) => ch.id === a)!;
    expect(latestA).toMatchObject({ collection: "tasks", version: aV2, deleted: false, data: { title: "a v2", done: true, list_id: user.userId, notes: null } });
    expect(latestA.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(page.server_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(page.changes.every((ch) => !ch.deleted)).toBe(true);
  });

  it("lists a page's entries in key order: by scope (a list is its own), then collection, then id", async () => {
    const user = await createTestUser();
    const other = randomUUID();
    // More entries than the page statement puts in one row (50): the order holds across its rows too.
    const tasks = Array.from({ length: 120 }, (_, i) => ({ id: randomUUID(), list: i % 2 ? other : user.userId }));
    await write(user, list(other, "second"));
    await write(user, ...tasks.map((t) => ({ collection: "tasks" as const, id: t.id, data: { list_id: t.list, title: t.id } })));
    const page = await pull(user);
    const scopeOf = (ch: { collection: string; id: string; data: Record<string, unknown> | null }) => (ch.collection === "lists" ? ch.id : String(ch.data!.list_id));
    const keys = page.changes.map((ch) => [scopeOf(ch), ch.collection, ch.id].join(" "));
    expect(keys).toHaveLength(tasks.length + 2);
    expect(keys).toEqual([...keys].sort());
  });

  it("answers a user who never synced with their personal list, their membership of it and a usable cursor", async () => {
    const user = await createTestUser();
    const first = await pull(user, { collections: undefined });
    expect(first).toMatchObject({ changes: [
      expect.objectContaining({ collection: "list_members", data: expect.objectContaining({ list_id: user.userId, user_id: user.userId, role: "owner" }) }),
      expect.objectContaining({ collection: "lists", id: user.userId, data: expect.objectContaining({ title: "Personal" }) }),
    ], has_more: false });
    const id = randomUUID();
    await write(user, task(user, id, "first"));
    const next = await pull(user, { cursor: first.cursor, collections: undefined });
    expect(next.changes.map((ch) => ch.id)).toEqual([id]);
  });
});

describe("GET /v1/sync/changes — incremental", () => {
  it("after a cursor lists exactly the later changes, each record once at its latest state, in commit order; deletes as deleted", async () => {
    const user = await createTestUser();
    const [a, b, c, d] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await write(user, task(user, a, "a"), task(user, b, "b"), task(user, c, "c"));
    const full = await pull(user);
    expect(full.changes).toHaveLength(4);

    await write(user, task(user, a, "a2"));
    await write(user, task(user, d, "d"));
    await write(user, gone("tasks", b));
    const [aV3] = await write(user, task(user, a, "a3"));

    const next = await pull(user, { cursor: full.cursor });
    expect(next.has_more).toBe(false);
    expect(next.changes.map((ch) => [ch.id, ch.deleted, ch.data?.title ?? null])).toEqual([
      [d, false, "d"],
      [b, true, null],
      [a, false, "a3"],
    ]);
    expect(next.changes.find((ch) => ch.id === b)).toMatchObject({ deleted: true, data: null, version: (await syncState("tasks", b))!.version });
    expect(next.changes.find((ch) => ch.id === a)!.version).toBe(aV3);

    const idle = await pull(user, { cursor: next.cursor });
    expect(idle).toMatchObject({ changes: [], has_more: false });
    // An up-to-date cursor can be re-used: it is a position, not a session.
    expect((await pull(user, { cursor: next.cursor })).changes).toEqual([]);
  });

  it("limit=1 keyset pages walk every record exactly once, in a full sync and in incremental pulls", async () => {
    const user = await createTestUser();
    const ids = Array.from({ length: 7 }, () => randomUUID());
    const doomed = randomUUID();
    await write(user, task(user, doomed, "doomed"));
    for (const [index, id] of ids.entries()) await write(user, index % 2 ? list(id, `r${index}`) : task(user, id, `r${index}`));
    // (the pull the full sync hands over to then lists none of these again)
    await settled();
    const walk = await pullAll(user, { limit: 1 });
    const expected = [user.userId, doomed, ...ids];
    // Only the first page of a full sync says reset; later pages and incremental pulls do not.
    expect(walk.resets).toEqual([true, ...Array.from({ length: walk.pages - 1 }, () => false)]);
    expect(walk.changes.map((ch) => ch.id).sort()).toEqual([...expected].sort());
    // a page per record, and the incremental page after them when others wrote meanwhile (empty here)
    expect([expected.length, expected.length + 1]).toContain(walk.pages);

    // Changes after the walk, one transaction each, come one per page in commit order.
    const later = [ids[0], ids[2], ids[4]];
    for (const id of later) await write(user, task(user, id, `again ${id}`));
    await write(user, gone("tasks", doomed));
    const after = await pullAll(user, { cursor: walk.cursor, limit: 1 });
    expect(after.changes.map((ch) => [ch.id, ch.deleted])).toEqual([...later.map((id) => [id, false]), [doomed, true]]);
    expect(after.resets.every((reset) => reset === false)).toBe(true);
    expect(after.pages).toBe(4);
  });

  it("a full sync that spans pages misses nothing written meanwhile: earlier pages' deletes arrive before has_more: false", async () => {
    const user = await createTestUser();
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()].sort();
    await write(user, task(user, a, "a"), task(user, b, "b"), task(user, c, "c"));
    // In a full sync, rows come by (list, collection, id): the personal list, then a, b, c.
    const first = await pull(user, { limit: 2 });
    expect(first.changes.map((ch) => ch.id)).toEqual([user.userId, a]);
    expect(first.has_more).toBe(true);
    await write(user, gone("tasks", a));
    await settled();
    // before has_more: false: the full sync's last page hands over to the incremental pull at once
    const rest = await pullAll(user, { cursor: first.cursor, limit: 2 });
    const seen = rest.changes.map((ch) => [ch.id, ch.deleted]);
    expect(seen.slice(0, 2)).toEqual([[b, false], [c, false]]);
    expect(seen.slice(2)).toContainEqual([a, true]);
  });
});

describe("GET /v1/sync/changes — with POST /v1/sync/batch", () => {
  it("pulls a pushed record exactly as the push returned it, and another device's pull sees the push", async () => {
    const user = await createTestUser();
    const other = await user.newSession();
    const start = await pull(user);
    const [listId, taskId] = [randomUUID(), randomUUID()];
    const pushed = await pushOk(user, { ops: [upsert("lists", listId, { title: "Groceries" }), upsert("tasks", taskId, { title: "Milk", list_id: listId })] });
    const records = pushed.results.map((r) => r.record!);
    const next = await pull(user, { cursor: start.cursor });
    // Byte-for-byte the same records, in commit order.
    expect(next.changes).toEqual(records);
    await settled();
    const elsewhere = await call(changesUrl({}), { token: other.token });
    expect(elsewhere.body.changes).toEqual(expect.arrayContaining(records));
  });
});

describe("GET /v1/sync/changes — collections filter", () => {
  it("lists only the named collections and binds the cursor to the filter", async () => {
    const user = await createTestUser();
    const [t1, l1, t2] = [randomUUID(), randomUUID(), randomUUID()];
    await write(user, task(user, t1, "t1"), list(l1, "l1"), task(user, t2, "t2"));
    const tasksOnly = await pull(user, { collections: "tasks" });
    expect(tasksOnly.changes.map((ch) => ch.id).sort()).toEqual([t1, t2].sort());
    const listsOnly = await pull(user, { collections: "lists" });
    expect(listsOnly.changes.map((ch) => ch.id).sort()).toEqual([user.userId, l1].sort());
    const both = await pull(user, { collections: "tasks,lists" });
    expect(both.changes).toHaveLength(4);

    const l2 = randomUUID();
    await write(user, list(l2, "l2"));
    // Same filter, other order and repetition: same scope, the cursor works.
    expect((await pull(user, { cursor: both.cursor, collections: "lists,tasks,lists" })).changes.map((ch) => ch.id)).toEqual([l2]);
    expect((await pull(user, { cursor: tasksOnly.cursor, collections: "tasks" })).changes).toEqual([]);

    // Another filter (or none) with that cursor would silently skip changes: refused.
    expectEnvelope(await call(changesUrl({ cursor: tasksOnly.cursor, collections: "lists" }), { token: user.token }), 400, "INVALID_CURSOR");
    expectEnvelope(await call(changesUrl({ cursor: tasksOnly.cursor }), { token: user.token }), 400, "INVALID_CURSOR");
    expectEnvelope(await call(changesUrl({ cursor: listsOnly.cursor, collections: "tasks,lists" }), { token: user.token }), 400, "INVALID_CURSOR");
  });
});

describe("GET /v1/sync/changes — isolation and cursor integrity", () => {
  it("never lists rows of lists the caller is not a member of", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const [aliceTask, bobTask, bobList] = [randomUUID(), randomUUID(), randomUUID()];
    await write(alice, task(alice, aliceTask, "alice's"));
    await write(bob, task(bob, bobTask, "bob's"), list(bobList, "bob"));
    const a = await pullAll(alice);
    expect(a.changes.map(key).sort()).toEqual([`lists/${alice.userId}`, `tasks/${aliceTask}`].sort());
    const b = await pullAll(bob);
    expect(b.changes.map(key).sort()).toEqual([`lists/${bob.userId}`, `lists/${bobList}`, `tasks/${bobTask}`].sort());
    expect(JSON.stringify(a)).not.toContain("bob");
    expect(JSON.stringify(a)).not.toContain(bob.userId);
  });

  it("a tampered, another user's or a garbage cursor → 400 INVALID_CURSOR, all alike", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const { cursor } = await pull(alice);

    const flipped = cursor.slice(0, 5) + (cursor[5] === "A" ? "B" : "A") + cursor.slice(6);
    const tampered = expectEnvelope(await call(changesUrl({ cursor: flipped }), { token: alice.token }), 400, "INVALID_CURSOR");
    expect(tampered.retryable).toBe(false);
    const foreign = expectEnvelope(await call(changesUrl({ cursor }), { token: bob.token }), 400, "INVALID_CURSOR");
    expect(foreign.message).toBe(tampered.message);
    for (const garbage of ["", "abc", "a.b", cursor + "x"]) {
      expectEnvelope(await call(changesUrl({ cursor: garbage }), { token: alice.token }), 400, "INVALID_CURSOR");
    }
    // A cursor signed with another secret (another deployment) is refused too.
    const forged = await encodeCursor("another-deployment-secret-0123456789abcdef", alice.userId, cursorPayload(cursor));
    expectEnvelope(await call(changesUrl({ cursor: forged }), { token: alice.token }), 400, "INVALID_CURSOR");
  });

  it("a cursor longer than any the server issues → 400 INVALID_CURSOR like any other it did not issue, before the budget is spent", async () => {
    const user = await createTestUser();
    const { cursor } = await pull(user);
    const flipped = cursor.slice(0, 5) + (cursor[5] === "A" ? "B" : "A") + cursor.slice(6);
    const tampered = expectEnvelope(await call(changesUrl({ cursor: flipped }), { token: user.token }), 400, "INVALID_CURSOR");
    for (const long of ["x".repeat(5000), cursor + "x".repeat(5000)]) {
      const response = await call(changesUrl({ cursor: long }), { token: user.token });
      // A client that drops its cursor on INVALID_CURSOR (docs/sync.md) gets past it; a VALIDATION_FAILED it would send again.
      const error = expectEnvelope(response, 400, "INVALID_CURSOR");
      expect(error.message).toBe(tampered.message);
      expect(error.retryable).toBe(false);
      // Refused with the query, before the session check and the rate limit: no RateLimit-* headers.
      expect(response.headers.get("ratelimit-remaining")).toBeNull();
    }
    // Beside another refused parameter it answers as a short garbage cursor does: that parameter's 400 alone.
    for (const garbage of ["abc", "x".repeat(5000)]) {
      const error = expectEnvelope(await call(changesUrl({ cursor: garbage, limit: "0" }), { token: user.token }), 400, "VALIDATION_FAILED");
      expect(error.details, garbage.slice(0, 8)).toEqual([expect.objectContaining({ field: "/limit", code: "too_small" })]);
    }
  });

  it("a signed cursor whose snapshot Postgres would refuse (a server bug, a leaked secret) → 400 INVALID_CURSOR, not 500", async () => {
    const user = await createTestUser();
    const { cursor } = await pull(user);
    const [{ now }] = await adminSql<{ now: string }[]>`select pg_snapshot_xmin(pg_current_snapshot())::text as now`;
    const x = BigInt(now);
    const full = (fields: Partial<CursorPayload>) =>
      encodeCursor(SECRET, user.userId, { v: 2, mode: "full", upper: now, after: [user.userId, "", user.userId], scope: cursorPayload(cursor).scope, iat: Math.floor(Date.now() / 1000), ...fields } as CursorPayload);
    // The framing is right: a valid snapshot pages.
    expect((await call(changesUrl({ cursor: await full({ since: `${x}:${x + 50n}:${x + 1n}+1@${x + 5n}-${x + 10n}` }) }), { token: user.token })).status).toBe(200);
    for (const since of [
      `${x}:${x + 50n}:${x + 1n}+1@${x - 5n}-${x + 10n}`, // lo below xmin
      `${x + 10n}:${x}:`, // xmin above xmax
      `0:${x}:`, // xmin 0
      `${x}:${x + 5n}:${x + 9n}`, // a named id at or above xmax
      `${x}:${x + 10n}:${x + 3n},${x + 1n}`, // named ids not ascending
      `${x}:18446744073709551616:`, // above 2^64-1 (Postgres took it: 200)
      `${x}:${x + 50n}:+9999999999@${x + 5n}-${x + 10n}`, // a count no integer holds
    ]) {
      expectEnvelope(await call(changesUrl({ cursor: await full({ since }) }), { token: user.token }), 400, "INVALID_CURSOR");
      expectEnvelope(await call(changesUrl({ cursor: await full({ since: `${x}:${x}:`, catch_up: { after: [user.userId, "", user.userId], next: since } }) }), { token: user.token }), 400, "INVALID_CURSOR");
    }
    // Without `since`, the snapshot below `upper`: "0:0:" too.
    expectEnvelope(await call(changesUrl({ cursor: await full({ upper: "0" }) }), { token: user.token }), 400, "INVALID_CURSOR");
  });

  it("needs a signed-in user", async () => {
    expectEnvelope(await call("/v1/sync/changes"), 401, "UNAUTHENTICATED");
  });
});

describe("GET /v1/sync/changes — retention", () => {
  /** The retention job as its operator runs it (service_role); a time budget of "0" is one batch per table. */
  async function purge(batch = 5000, timeBudget?: string) {
    return await adminSql.begin(async (tx) => {
      await tx`set local role service_role`;
      const budget = timeBudget === undefined ? tx`` : tx`, p_time_budget => ${timeBudget}::interval`;
      const [run] = await tx<{ ops_purged: number; tombstones_purged: number; changes_purged: number }[]>`
        select * from app_private.purge_sync_retention(p_now => now(), p_batch => ${batch}${budget})`;
      return run;
    });
  }

  it("a cursor at or below the purge horizon → 410 RESYNC_REQUIRED; a later one and a full sync still work", async () => {
    const user = await createTestUser();
    const [keep, old] = [randomUUID(), randomUUID()];
    await write(user, task(user, keep, "keep"), task(user, old, "old"));
    await write(user, gone("tasks", old));
    const synced = await pullAll(user);
    expect(synced.changes.map((ch) => ch.id).sort()).toEqual([user.userId, keep].sort());

    // The horizon is global: backdate this test's delete (and its position, below every
    // cursor other test files hold, to older than the stack's first write) so that only
    // it is purged and no other file's cursor is sent to resync.
    const [{ oldest }] = await adminSql<{ oldest: string }[]>`select min(txid)::text as oldest from app_private.sync_changes`;
    const position = (BigInt(oldest) - 1n).toString();
    await adminSql`update app_private.sync_changes set changed_at = now() - interval '40 days', txid = ${position}::xid8 where id = ${old}`;
    await adminSql`update app_private.sync_records set deleted_at = now() - interval '40 days' where id = ${old}`;
    const run = await purge();
    expect(run.changes_purged).toBeGreaterThanOrEqual(1);
    expect(run.tombstones_purged).toBeGreaterThanOrEqual(1);
    const [{ horizon }] = await adminSql<{ horizon: string }[]>`select purged_txid::text as horizon from app_private.sync_horizon`;
    expect(BigInt(horizon)).toBeGreaterThanOrEqual(BigInt(position));
    expect(await syncState("tasks", old)).toBeUndefined();

    // A cursor whose position is at the horizon may have missed the purged delete.
    const base = cursorPayload(synced.cursor);
    const now = Math.floor(Date.now() / 1000);
    const at = (txid: string): CursorPayload => ({ v: 2, mode: "incremental", after: [txid, 0, "", "00000000-0000-0000-0000-000000000000"], scope: base.scope, iat: now });
    const stale = await encodeCursor(SECRET, user.userId, at(horizon));
    const error = expectEnvelope(await call(changesUrl({ cursor: stale }), { token: user.token }), 410, "RESYNC_REQUIRED");
    expect(error.retryable).toBe(false);
    const staleFull = await encodeCursor(SECRET, user.userId, { v: 2, mode: "full", upper: horizon, after: [user.userId, "", user.userId], scope: base.scope, iat: now });
    expectEnvelope(await call(changesUrl({ cursor: staleFull }), { token: user.token }), 410, "RESYNC_REQUIRED");
    // Just above it, and the cursor the device holds, still work.
    const justAbove = await encodeCursor(SECRET, user.userId, at((BigInt(horizon) + 1n).toString()));
    expect((await call(changesUrl({ cursor: justAbove, limit: 1 }), { token: user.token })).status).toBe(200);
    const later = randomUUID();
    await write(user, task(user, later, "later"));
    expect((await pull(user, { cursor: synced.cursor })).changes.map((ch) => ch.id)).toEqual([later]);
    // The resync, page by page, is not sent back to resync again.
    const resync = await pullAll(user, { limit: 1 });
    expect(resync.changes.map((ch) => ch.id).sort()).toEqual([user.userId, keep, later].sort());
    expect((await pull(user, { cursor: resync.cursor })).changes).toEqual([]);
  });

  it("an older transaction still open: the purge keeps what was written after it; no cursor, and no cursor held, is sent to resync", async () => {
    const user = await createTestUser();
    const [kept, doomed] = [randomUUID(), randomUUID()];
    await write(user, task(user, kept, "kept"), task(user, doomed, "doomed"));
    const held = (await pullAll(user)).cursor;

    // A write transaction of some other client open all along (a pull never reads past it), then a
    // delete whose change entry is older than the window: retention_days = 1 and that transaction open
    // for a day. Before, the purge took the entry and raised the horizon above the open transaction,
    // where every pull stands while it is open: each one, even without a cursor, answered 410.
    const older = await adminSql.reserve();
    try {
      await older`begin`;
      await older`select pg_current_xact_id()`;
      await write(user, gone("tasks", doomed));
      await adminSql`update app_private.sync_changes set changed_at = now() - interval '40 days' where id = ${doomed}`;
      await purge();

      // Not pull(): it waits for every open transaction to end.
      const fresh = await call(changesUrl({}), { token: user.token });
      expect(fresh.status, fresh.text).toBe(200);
      const full = changesResponseSchema.parse(fresh.body);
      expect(full.reset).toBe(true);
      expect(full.changes.map((ch) => ch.id).sort()).toEqual([user.userId, kept].sort());
      const next = await call(changesUrl({ cursor: full.cursor }), { token: user.token });
      expect(next.status, next.text).toBe(200);
      const incremental = await call(changesUrl({ cursor: held }), { token: user.token });
      expect(incremental.status, incremental.text).toBe(200);
      const [{ entries }] = await adminSql<{ entries: number }[]>`select count(*)::int as entries from app_private.sync_changes where id = ${doomed}`;
      expect(entries, "the delete's entry waits for a later run").toBe(1);
    } finally {
      // Back inside the window before the transaction ends: another file's purge must not take
      // it then (the horizon is global: their cursors would be sent to resync).
      await adminSql`update app_private.sync_changes set changed_at = now() where id = ${doomed}`;
      await older`rollback`;
      older.release();
    }
    // The device that synced before the delete still gets the removal.
    const after = await pull(user, { cursor: held });
    expect(after.changes.map((ch) => [ch.id, ch.deleted])).toEqual([[doomed, true]]);
  });

  it("op results older than the window are purged in batches, repeated within a run; exactly-once holds within the window", async () => {
    const user = await createTestUser();
    await startSession(user.token, phone());
    const batch = { ops: [randomUUID(), randomUUID(), randomUUID()].map((id) => upsert("tasks", id, { list_id: user.userId, title: "t" })) };
    const statuses = async () => (await pushOk(user, batch)).results.map((r) => r.status);
    expect(await statuses()).toEqual(["applied", "applied", "applied"]);
    expect(await statuses()).toEqual(["duplicate", "duplicate", "duplicate"]);

    // 40 days later (only this test's op results are that old).
    await adminSql`update app_private.sync_ops set created_at = now() - interval '40 days' where user_id = ${user.userId}`;
    // Every old op result is this test's (the ledger holds no other as old), so the counts are exact:
    // a spent budget stops after one batch; otherwise a run repeats its batches until none is left.
    expect((await purge(1, "0")).ops_purged).toBe(1);
    expect((await purge(1)).ops_purged).toBe(2);
    expect(await ledger(user.userId)).toEqual([]);
    // Past the window an op_id is no longer remembered: a retry that late is a new op
    // (docs/sync.md); from the same device it merges with its own writes.
    expect(await statuses()).toEqual(["applied", "applied", "applied"]);
  });

  it("a cursor issued longer ago than the retention window → 410 RESYNC_REQUIRED", async () => {
    const user = await createTestUser();
    const { cursor } = await pull(user);
    const now = Math.floor(Date.now() / 1000);
    const stale = await encodeCursor(SECRET, user.userId, { ...cursorPayload(cursor), iat: now - 31 * 86_400 });
    expectEnvelope(await call(changesUrl({ cursor: stale }), { token: user.token }), 410, "RESYNC_REQUIRED");
    const fresh = await encodeCursor(SECRET, user.userId, { ...cursorPayload(cursor), iat: now - 29 * 86_400 });
    expect((await call(changesUrl({ cursor: fresh }), { token: user.token })).status).toBe(200);
  });

  it("a cursor beyond the database's transactions (issued before a point-in-time restore) → 410 RESYNC_REQUIRED", async () => {
    const user = await createTestUser();
    await write(user, task(user, randomUUID(), "before the restore"));
    const synced = await pullAll(user);
    // What the device holds after the database was restored to a point 100,000 transactions back
    // (the cursor secret kept): its position names txids this database has not begun yet.
    const held = cursorPayload(synced.cursor);
    const aheadOf = (txid: string) => (BigInt(txid) + 100_000n).toString();
    const [position, ...key] = held.after as [string, number, string, string];
    const ahead = await encodeCursor(SECRET, user.userId, { ...held, after: [aheadOf(position), ...key] } as CursorPayload);
    await write(user, task(user, randomUUID(), "written after the restore"));
    await settled();
    expectEnvelope(await call(changesUrl({ cursor: ahead }), { token: user.token }), 410, "RESYNC_REQUIRED");
    const aheadFull = await encodeCursor(SECRET, user.userId, { v: 2, mode: "full", upper: aheadOf(position), after: [user.userId, "", user.userId], scope: held.scope, iat: held.iat });
    expectEnvelope(await call(changesUrl({ cursor: aheadFull }), { token: user.token }), 410, "RESYNC_REQUIRED");
    // The cursor the device holds from this database still works.
    expect((await pull(user, { cursor: synced.cursor })).changes.map((ch) => ch.data?.title)).toEqual(["written after the restore"]);
  });
});

describe("GET /v1/sync/changes — bounds", () => {
  async function detailsFor(params: Record<string, string>) {
    const user = await createTestUser();
    const error = expectEnvelope(await call(changesUrl(params), { token: user.token }), 400, "VALIDATION_FAILED");
    return error.details ?? [];
  }

  it("limit outside 1..max_pull_limit or not a number → 400 with a /limit detail", async () => {
    expect(await detailsFor({ limit: "0" })).toEqual([expect.objectContaining({ field: "/limit", code: "too_small" })]);
    expect(await detailsFor({ limit: "1001" })).toEqual([expect.objectContaining({ field: "/limit", code: "too_large", message: "at most 1000" })]);
    expect(await detailsFor({ limit: "ten" })).toEqual([expect.objectContaining({ field: "/limit" })]);
    expect(await detailsFor({ limit: "-1" })).toEqual([expect.objectContaining({ field: "/limit" })]);
    const user = await createTestUser();
    expect((await pull(user, { limit: 1000 })).has_more).toBe(false);
  });

  it("unknown, empty or too many collections → 400 with a /collections detail", async () => {
    const unknown = await detailsFor({ collections: "tasks,secrets" });
    expect(unknown).toEqual([expect.objectContaining({ field: "/collections", code: "unknown_collection" })]);
    expect(unknown[0].message).toContain('"secrets"');
    expect(await detailsFor({ collections: "tasks,,lists" })).toEqual([expect.objectContaining({ field: "/collections", code: "invalid_format" })]);
    const many = Array.from({ length: 21 }, (_, i) => `c${i}`).join(",");
    expect(await detailsFor({ collections: many })).toEqual([expect.objectContaining({ field: "/collections", code: "too_long", message: "at most 20 collections" })]);
  });

  it("an unexpected query parameter → 400 with its detail", async () => {
    expect(await detailsFor({ since: "0" })).toEqual([expect.objectContaining({ field: "/since", code: "unexpected_field" })]);
  });

  it("the default page size is default_pull_limit", async () => {
    const user = await createTestUser();
    await writeRows(user, Array.from({ length: 500 }, (_, i) => task(user, randomUUID(), `t${i}`)));
    const first = await pull(user);
    expect(first.changes).toHaveLength(500);
    expect(first.has_more).toBe(true);
    const second = await pull(user, { cursor: first.cursor });
    expect(second.changes).toHaveLength(1);
    // the full sync's last page (has_more when others wrote meanwhile: the incremental pull follows)
    expect(cursorPayload(second.cursor).mode).toBe("incremental");
  });
});
