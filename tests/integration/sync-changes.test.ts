// GET /v1/sync/changes through real Deno and Postgres: full sync, incremental
// pulls, tombstones, keyset pagination, the collections filter, cursor
// integrity and binding, the purge horizon (410) and every bound's error.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { changesResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { collectionsScope, encodeCursor } from "../../functions/api/sync/cursor.ts";
import { adminSql, call, createTestUser, expectEnvelope, stack, type TestUser } from "../support/harness.ts";
import { writeRecords } from "../support/sync-records.ts";

interface Change {
  collection: string;
  id: string;
  version: number;
  deleted: boolean;
  data: Record<string, unknown> | null;
  updated_at: string;
}

function changesUrl(params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, String(value));
  const text = query.toString();
  return `/v1/sync/changes${text ? "?" + text : ""}`;
}

async function pull(user: TestUser, params: Record<string, string | number | undefined> = {}) {
  const response = await call(changesUrl(params), { token: user.token });
  expect(response.status, response.text).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  expect(response.headers.get("cache-control")).toBe("no-store");
  return changesResponseSchema.parse(response.body);
}

/** Follows cursors until has_more is false; returns every change and the final cursor. */
async function pullAll(user: TestUser, params: { cursor?: string; limit?: number; collections?: string } = {}) {
  const changes: Change[] = [];
  let cursor = params.cursor;
  let pages = 0;
  for (;;) {
    const page = await pull(user, { ...params, cursor });
    pages++;
    changes.push(...page.changes);
    cursor = page.cursor;
    if (!page.has_more) return { changes, cursor, pages };
    expect(pages).toBeLessThan(10_000);
  }
}

const task = (title: string, extra: Record<string, unknown> = {}) => ({ title, done: false, ...extra });

describe("GET /v1/sync/changes — full sync", () => {
  it("lists every live record once, in its latest state, without tombstones", async () => {
    const user = await createTestUser();
    const [a, b, c, gone] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await writeRecords(user.userId, [
      { collection: "tasks", id: a, data: task("a v1") },
      { collection: "lists", id: b, data: { title: "groceries" } },
      { collection: "tasks", id: gone, data: task("short-lived") },
    ]);
    const [aV2] = await writeRecords(user.userId, [{ collection: "tasks", id: a, data: task("a v2", { done: true }) }]);
    await writeRecords(user.userId, [{ collection: "tasks", id: c, data: task("c") }, { collection: "tasks", id: gone, data: null }]);

    const page = await pull(user);
    expect(page.has_more).toBe(false);
    expect(page.changes.map((ch) => `${ch.collection}/${ch.id}`).sort()).toEqual([`lists/${b}`, `tasks/${a}`, `tasks/${c}`].sort());
    const latestA = page.changes.find((ch) => ch.id === a)!;
    expect(latestA).toMatchObject({ collection: "tasks", version: aV2, deleted: false, data: { title: "a v2", done: true } });
    expect(latestA.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // Commit order: versions ascend through the page.
    const versions = page.changes.map((ch) => ch.version);
    expect([...versions].sort((x, y) => x - y)).toEqual(versions);
    expect(Math.abs(Date.parse(page.server_time) - Date.now())).toBeLessThan(60_000);
  });

  it("answers a user who never synced with an empty page and a usable cursor", async () => {
    const user = await createTestUser();
    const first = await pull(user);
    expect(first).toMatchObject({ changes: [], has_more: false });
    const id = randomUUID();
    await writeRecords(user.userId, [{ collection: "tasks", id, data: task("first") }]);
    const next = await pull(user, { cursor: first.cursor });
    expect(next.changes.map((ch) => ch.id)).toEqual([id]);
  });
});

describe("GET /v1/sync/changes — incremental", () => {
  it("after a cursor lists exactly the later changes: updates, creations and deletes as tombstones", async () => {
    const user = await createTestUser();
    const [a, b, c, d] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await writeRecords(user.userId, [
      { collection: "tasks", id: a, data: task("a") },
      { collection: "tasks", id: b, data: task("b") },
      { collection: "tasks", id: c, data: task("c") },
    ]);
    const full = await pull(user);
    expect(full.changes).toHaveLength(3);

    await writeRecords(user.userId, [{ collection: "tasks", id: a, data: task("a2") }]);
    await writeRecords(user.userId, [{ collection: "tasks", id: d, data: task("d") }]);
    await writeRecords(user.userId, [{ collection: "tasks", id: b, data: null }]);
    await writeRecords(user.userId, [{ collection: "tasks", id: a, data: task("a3") }]);

    const next = await pull(user, { cursor: full.cursor });
    expect(next.has_more).toBe(false);
    // Each record once, latest state, in commit order of that latest state.
    expect(next.changes.map((ch) => [ch.id, ch.deleted, ch.data?.title ?? null])).toEqual([
      [d, false, "d"],
      [b, true, null],
      [a, false, "a3"],
    ]);
    const tombstone = next.changes.find((ch) => ch.id === b)!;
    expect(tombstone).toMatchObject({ deleted: true, data: null });

    const idle = await pull(user, { cursor: next.cursor });
    expect(idle).toMatchObject({ changes: [], has_more: false });
    // An up-to-date cursor can be re-used: it is a position, not a session.
    expect((await pull(user, { cursor: next.cursor })).changes).toEqual([]);
  });

  it("limit=1 pagination walks every record exactly once, with tombstones after the first page", async () => {
    const user = await createTestUser();
    const ids = Array.from({ length: 7 }, () => randomUUID());
    const doomed = randomUUID();
    await writeRecords(user.userId, [{ collection: "tasks", id: doomed, data: task("doomed") }]);
    for (const [index, id] of ids.entries()) {
      await writeRecords(user.userId, [{ collection: index % 2 ? "lists" : "tasks", id, data: { title: `r${index}` } }]);
    }
    const walk = await pullAll(user, { limit: 1 });
    // Every record exactly once, in commit order, one per page.
    expect(walk.changes.map((ch) => ch.id)).toEqual([doomed, ...ids]);
    expect(walk.pages).toBe(8);

    // The delete of a record the walker already has arrives on a later page.
    await writeRecords(user.userId, [{ collection: "tasks", id: doomed, data: null }]);
    const after = await pullAll(user, { cursor: walk.cursor, limit: 1 });
    expect(after.changes).toEqual([expect.objectContaining({ id: doomed, deleted: true, data: null })]);
  });

  it("a full sync that spans pages still delivers deletes of records from its earlier pages", async () => {
    const user = await createTestUser();
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await writeRecords(user.userId, [{ collection: "tasks", id: a, data: task("a") }]);
    await writeRecords(user.userId, [{ collection: "tasks", id: b, data: task("b") }]);
    await writeRecords(user.userId, [{ collection: "tasks", id: c, data: task("c") }]);
    const first = await pull(user, { limit: 1 });
    expect(first.changes.map((ch) => ch.id)).toEqual([a]);
    expect(first.has_more).toBe(true);
    await writeRecords(user.userId, [{ collection: "tasks", id: a, data: null }]);
    const rest = await pullAll(user, { cursor: first.cursor, limit: 1 });
    expect(rest.changes.map((ch) => [ch.id, ch.deleted])).toEqual([[b, false], [c, false], [a, true]]);
  });
});

describe("GET /v1/sync/changes — with POST /v1/sync/batch", () => {
  it("pulls a pushed record exactly as the push returned it, and another device's pull sees the push", async () => {
    const user = await createTestUser();
    const other = await user.newSession();
    const start = await pull(user);
    const [list, task1] = [randomUUID(), randomUUID()];
    const pushed = await call("/v1/sync/batch", {
      method: "POST",
      token: user.token,
      body: {
        device_id: randomUUID(),
        ops: [
          { op_id: randomUUID(), collection: "lists", record_id: list, type: "upsert", base_version: null, data: { title: "Groceries" } },
          { op_id: randomUUID(), collection: "tasks", record_id: task1, type: "upsert", base_version: null, data: { title: "Milk", list_id: list } },
          { op_id: randomUUID(), collection: "tasks", record_id: task1, type: "delete", base_version: null },
        ],
      },
    });
    expect(pushed.status, pushed.text).toBe(200);
    const records = pushed.body.results.map((r: { record: Change }) => r.record);
    const next = await pull(user, { cursor: start.cursor });
    // Byte-for-byte the same records (the delete's tombstone is the task's latest state).
    expect(next.changes).toEqual([records[0], records[2]]);
    const elsewhere = await call(changesUrl({}), { token: other.token });
    expect(elsewhere.body.changes).toEqual([records[0]]);
  });
});

describe("GET /v1/sync/changes — collections filter", () => {
  it("lists only the named collections and binds the cursor to the filter", async () => {
    const user = await createTestUser();
    const [t1, l1, t2] = [randomUUID(), randomUUID(), randomUUID()];
    await writeRecords(user.userId, [
      { collection: "tasks", id: t1, data: task("t1") },
      { collection: "lists", id: l1, data: { title: "l1" } },
      { collection: "tasks", id: t2, data: task("t2") },
    ]);
    const tasksOnly = await pull(user, { collections: "tasks" });
    expect(tasksOnly.changes.map((ch) => ch.id)).toEqual([t1, t2]);
    const listsOnly = await pull(user, { collections: "lists" });
    expect(listsOnly.changes.map((ch) => ch.id)).toEqual([l1]);
    const both = await pull(user, { collections: "tasks,lists" });
    expect(both.changes).toHaveLength(3);

    const l2 = randomUUID();
    await writeRecords(user.userId, [{ collection: "lists", id: l2, data: { title: "l2" } }]);
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
  it("never lists another user's records, even with the same ids", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const shared = randomUUID();
    await writeRecords(alice.userId, [{ collection: "tasks", id: shared, data: task("alice's") }]);
    await writeRecords(bob.userId, [{ collection: "tasks", id: shared, data: task("bob's") }, { collection: "lists", id: randomUUID(), data: { title: "bob" } }]);
    const a = await pullAll(alice);
    expect(a.changes.map((ch) => ch.data?.title)).toEqual(["alice's"]);
    const b = await pullAll(bob);
    expect(b.changes.map((ch) => ch.data?.title).sort()).toEqual(["bob", "bob's"]);
    expect(JSON.stringify(a)).not.toContain("bob");
  });

  it("a tampered, foreign or garbage cursor → 400 INVALID_CURSOR, all alike", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    await writeRecords(alice.userId, [{ collection: "tasks", id: randomUUID(), data: task("x") }]);
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
    const forged = await encodeCursor("another-deployment-secret-0123456789abcdef", alice.userId, { v: 1, mode: "incremental", seq: 0, floor: 0, scope: "*", iat: Math.floor(Date.now() / 1000) });
    expectEnvelope(await call(changesUrl({ cursor: forged }), { token: alice.token }), 400, "INVALID_CURSOR");
  });

  it("needs a signed-in user", async () => {
    expectEnvelope(await call("/v1/sync/changes"), 401, "UNAUTHENTICATED");
  });
});

describe("GET /v1/sync/changes — retention horizon", () => {
  it("a cursor below a purged tombstone → 410 RESYNC_REQUIRED; a later one and a full sync still work", async () => {
    const user = await createTestUser();
    const [keep, old] = [randomUUID(), randomUUID()];
    const longAgo = new Date(Date.now() - 40 * 86_400_000);
    await writeRecords(user.userId, [{ collection: "tasks", id: keep, data: task("keep") }, { collection: "tasks", id: old, data: task("old") }]);
    const before = await pull(user);
    const [tombstoneSeq] = await writeRecords(user.userId, [{ collection: "tasks", id: old, data: null, at: longAgo }]);
    const after = await pull(user, { cursor: before.cursor });
    expect(after.changes.map((ch) => [ch.id, ch.deleted])).toEqual([[old, true]]);
    const later = randomUUID();
    await writeRecords(user.userId, [{ collection: "tasks", id: later, data: task("later") }]);

    // Only this test's tombstone is 30+ days old, so purging at the real "now" touches nothing else.
    const [purge] = await adminSql<{ tombstones_purged: number }[]>`
      select * from app_private.purge_sync_retention(p_now => now(), p_batch => 5000)`;
    expect(purge.tombstones_purged).toBeGreaterThanOrEqual(1);
    const [head] = await adminSql<{ purged_through_seq: string }[]>`
      select purged_through_seq from app_private.sync_heads where user_id = ${user.userId}`;
    expect(Number(head.purged_through_seq)).toBe(tombstoneSeq);

    const error = expectEnvelope(await call(changesUrl({ cursor: before.cursor }), { token: user.token }), 410, "RESYNC_REQUIRED");
    expect(error.retryable).toBe(false);
    expect((await pull(user, { cursor: after.cursor })).changes.map((ch) => ch.id)).toEqual([later]);
    // The resync, even page by page across the purged seq, is not sent back to resync again.
    const resync = await pullAll(user, { limit: 1 });
    expect(resync.changes.map((ch) => ch.id)).toEqual([keep, later]);
    expect((await pull(user, { cursor: resync.cursor })).changes).toEqual([]);
  });

  it("op results older than the window are purged in bounded batches; exactly-once holds within the window", async () => {
    const user = await createTestUser();
    const deviceId = randomUUID();
    const batch = {
      device_id: deviceId,
      ops: [randomUUID(), randomUUID(), randomUUID()].map((id) => ({
        op_id: randomUUID(), collection: "tasks", record_id: id, type: "upsert", base_version: null, data: { title: "t" },
      })),
    };
    const push = () => call("/v1/sync/batch", { method: "POST", token: user.token, body: batch });
    expect((await push()).body.results.map((r: { status: string }) => r.status)).toEqual(["applied", "applied", "applied"]);
    expect((await push()).body.results.map((r: { status: string }) => r.status)).toEqual(["duplicate", "duplicate", "duplicate"]);

    // 40 days later (only this test's op results are that old).
    await adminSql`update app_private.sync_ops set created_at = now() - interval '40 days' where user_id = ${user.userId}`;
    const purged: number[] = [];
    for (;;) {
      const [run] = await adminSql<{ ops_purged: number }[]>`select * from app_private.purge_sync_retention(p_now => now(), p_batch => 1)`;
      if (run.ops_purged === 0) break;
      purged.push(run.ops_purged);
    }
    expect(purged).toEqual([1, 1, 1]);
    const [left] = await adminSql<{ n: number }[]>`select count(*)::int as n from app_private.sync_ops where user_id = ${user.userId}`;
    expect(left.n).toBe(0);
    // Past the window an op_id is no longer remembered: a retry that late is a new op (docs/sync.md).
    expect((await push()).body.results.map((r: { status: string }) => r.status)).toEqual(["applied", "applied", "applied"]);
  });

  it("a cursor issued longer ago than the retention window → 410 RESYNC_REQUIRED", async () => {
    const user = await createTestUser();
    const secret = stack.functionsEnv.TIDESYNC_CURSOR_SECRET;
    const now = Math.floor(Date.now() / 1000);
    const scope = await collectionsScope(null);
    const stale = await encodeCursor(secret, user.userId, { v: 1, mode: "incremental", seq: 0, floor: 0, scope, iat: now - 31 * 86_400 });
    expectEnvelope(await call(changesUrl({ cursor: stale }), { token: user.token }), 410, "RESYNC_REQUIRED");
    const fresh = await encodeCursor(secret, user.userId, { v: 1, mode: "incremental", seq: 0, floor: 0, scope, iat: now - 29 * 86_400 });
    expect((await call(changesUrl({ cursor: fresh }), { token: user.token })).status).toBe(200);
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
    await writeRecords(user.userId, Array.from({ length: 501 }, (_, i) => ({ collection: "tasks", id: randomUUID(), data: task(`t${i}`) })));
    const first = await pull(user);
    expect(first.changes).toHaveLength(500);
    expect(first.has_more).toBe(true);
    const second = await pull(user, { cursor: first.cursor });
    expect(second.changes).toHaveLength(1);
    expect(second.has_more).toBe(false);
  });
});
