// A column added to, dropped from or retyped in a synced table, seen by a device that already
// holds the table's rows (docs/sync.md, "Changing a synced table"). DDL fires no sync trigger, so
// the value `add column … default` gives existing rows is in no change entry; and a function lists
// only the columns it was generated with, so a row a device pulled before the regenerated function
// was deployed (probe.startServer()) arrived without the column. A cursor names each collection by
// its name and columns as the function that issued it synced them: the function deployed after
// the change answers such a cursor 410 RESYNC_REQUIRED when the device may hold rows of it, and the
// full sync that follows lists every row as it stands.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TidesyncApi } from "../../client/api-client.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { type ProbeStack, startProbeStack, syncedLikeTasks } from "../support/probe-stack.ts";
import { decodeCursor, encodeCursor } from "../../functions/api/sync/cursor.ts";
import { ROLLOUT_SECONDS } from "../../functions/api/sync/plan-pull.ts";
import { call } from "../support/harness.ts";
import { untilOpenTransactionsEnd } from "../support/open-transactions.ts";
import { settled } from "../support/shared-lists.ts";

let probe: ProbeStack;
beforeAll(async () => {
  probe = await startProbeStack("added_column", [
    ...["defaulted", "backfilled_early", "rerecorded_early", "backfilled", "rerecorded", "held_elsewhere", "untouched", "filtered"].flatMap((name) => [
      `create table public.tidesync_test_${name} (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade, body text)`,
      ...syncedLikeTasks(`tidesync_test_${name}`, ["body"]),
    ]),
    `create type public.tidesync_test_status as enum ('todo', 'done')`,
    `create table public.tidesync_test_relabeled (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade, body text, status public.tidesync_test_status)`,
    ...syncedLikeTasks("tidesync_test_relabeled", ["body", "status"]),
    ...["dropped", "retyped"].flatMap((name) => [
      `create table public.tidesync_test_${name} (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade, body text, extra varchar(20))`,
      ...syncedLikeTasks(`tidesync_test_${name}`, ["body", "extra"]),
    ]),
  ]);
}, 180_000);
afterAll(async () => {
  await probe?.stop();
});

const written = { list_id: expect.any(String), body: "written before the migration" };

/** A new user's device holding one row of `table` (with `data` besides its list), synced through the function deployed first. */
async function deviceHoldingARow(table: string, data: Record<string, unknown> = { body: "written before the migration" }) {
  const user = await probe.newUser();
  let base = probe.apiUrl;
  const installationId = randomUUID();
  const api = new TidesyncApi({
    baseUrl: "http://deployed", getAccessToken: () => user.token,
    fetch: (input, init) => globalThis.fetch(String(input).replace("http://deployed", base), init),
  });
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  const storage = new MemoryStorage();
  /** The app opens the store, writes (`write`), syncs; then its records of `table` by id. */
  const sync = async (write?: (client: TidesyncClient) => Promise<unknown>) => {
    const client = await TidesyncClient.open({ api, storage, installationId });
    try {
      await write?.(client);
      const report = await client.sync();
      return { report, data: Object.fromEntries((await client.list(table)).map((record) => [record.id, record.data])) };
    } finally {
      await client.close();
    }
  };
  let id = "";
  await sync(async (client) => { id = await client.create(table, { list_id: user.userId, ...data }); });
  // A pull stops below the cluster's oldest open transaction: this one lists the user's list,
  // membership and row, so that later pulls list only what came after.
  await settled();
  await sync();
  return {
    id,
    listId: user.userId,
    /** One migration: its statements in one transaction. */
    migrate: (statements: readonly string[]) => probe.admin.begin(async (sql) => {
      for (const statement of statements) await sql.unsafe(statement);
    }),
    /** npm run generate and a deploy: the function generated from the database as it is now. */
    deploy: async () => { base = (await probe.startServer()).apiUrl; },
    sync: async (write?: (client: TidesyncClient) => Promise<unknown>) => {
      await settled();
      return await sync(write);
    },
  };
}

describe("a column added to, dropped from or retyped in a synced table, on a device that already holds its rows", () => {
  it("added with a default: nothing changes before the deploy; after it, the device resyncs once and holds the column's value (a nullable one's: null)", async () => {
    const device = await deviceHoldingARow("tidesync_test_defaulted");
    await device.migrate([
      `alter table public.tidesync_test_defaulted add column priority integer not null default 0`,
      `alter table public.tidesync_test_defaulted add column tag text`,
      `grant insert (priority, tag), update (priority, tag) on public.tidesync_test_defaulted to authenticated`,
    ]);
    // Through the function deployed before, which lists neither column: no change entry, nothing pulled.
    const before = await device.sync();
    expect(before.report).toMatchObject({ pulled: 0, resynced: false });
    expect(before.data[device.id]).toEqual(written);
    await device.deploy();
    // 410 RESYNC_REQUIRED, then a full sync of every collection: the list, the membership, the row.
    const { report, data } = await device.sync();
    expect(report).toMatchObject({ pulled: 3, resynced: true });
    expect(data[device.id]).toEqual({ ...written, priority: 0, tag: null });
    const [row] = await probe.admin`select priority, tag from public.tidesync_test_defaulted where id = ${device.id}`;
    expect(row).toEqual({ priority: 0, tag: null });
    // Once: the cursor the resync ended with names the columns.
    expect((await device.sync()).report).toMatchObject({ pulled: 0, resynced: false });
  });

  it("rows written in the migration that adds the column, pulled before the deploy without it: after the deploy the device resyncs and holds them with it", async () => {
    const device = await deviceHoldingARow("tidesync_test_backfilled_early");
    await device.migrate([
      `alter table public.tidesync_test_backfilled_early add column priority integer`,
      `update public.tidesync_test_backfilled_early set priority = 0`,
    ]);
    const before = await device.sync();
    expect(before.report).toMatchObject({ pulled: 1 });
    expect(before.data[device.id]).toEqual(written);
    await device.deploy();
    const { report, data } = await device.sync();
    expect(report).toMatchObject({ pulled: 3, resynced: true });
    expect(data[device.id]).toEqual({ ...written, priority: 0 });
  });

  it("the table re-recorded in the migration that adds the column, the device's resync run before the deploy: a second resync after it brings the column", async () => {
    const device = await deviceHoldingARow("tidesync_test_rerecorded_early");
    await device.migrate([
      `alter table public.tidesync_test_rerecorded_early add column priority integer not null default 0`,
      `select app_private.disable_sync('public.tidesync_test_rerecorded_early')`,
      `select app_private.enable_sync('public.tidesync_test_rerecorded_early', 'list_id')`,
    ]);
    const before = await device.sync();
    expect(before.report).toMatchObject({ resynced: true });
    expect(before.data[device.id]).toEqual(written);
    await device.deploy();
    const { report, data } = await device.sync();
    expect(report).toMatchObject({ pulled: 3, resynced: true });
    expect(data[device.id]).toEqual({ ...written, priority: 0 });
  });

  it("a column dropped: after the deploy the device resyncs and its row no longer holds it", async () => {
    const device = await deviceHoldingARow("tidesync_test_dropped", { body: "kept", extra: "dropped soon" });
    await device.migrate([`alter table public.tidesync_test_dropped drop column extra`]);
    await device.deploy();
    const { report, data } = await device.sync();
    expect(report).toMatchObject({ pulled: 3, resynced: true });
    expect(data[device.id]).toEqual({ list_id: device.listId, body: "kept" });
    // The function deployed first names the column: every pull of it without a filter answers 503
    // (docs/sync.md, "Changing a synced table") while it is gone. Back, for the tests after this one.
    await device.migrate([`alter table public.tidesync_test_dropped add column extra varchar(20)`]);
  });

  it("a column retyped (values rewritten by the migration): after the deploy the device resyncs and holds the new values", async () => {
    const device = await deviceHoldingARow("tidesync_test_retyped", { body: "kept", extra: "  padded  " });
    await device.migrate([`alter table public.tidesync_test_retyped alter column extra type varchar(8) using trim(extra)`]);
    await device.deploy();
    const { report, data } = await device.sync();
    expect(report).toMatchObject({ pulled: 3, resynced: true });
    expect(data[device.id]).toEqual({ list_id: device.listId, body: "kept", extra: "padded" });
  });

  it("an enum label renamed (the rows' values with it): after the deploy the device resyncs and holds the new label", async () => {
    const device = await deviceHoldingARow("tidesync_test_relabeled", { body: "kept", status: "todo" });
    await device.migrate([`alter type public.tidesync_test_status rename value 'todo' to 'open'`]);
    await device.deploy();
    const { report, data } = await device.sync();
    expect(report).toMatchObject({ pulled: 3, resynced: true });
    expect(data[device.id]).toEqual({ list_id: device.listId, body: "kept", status: "open" });
  });

  it("a device holding no row of the changed table behind its cursor is not sent to resync", async () => {
    const device = await deviceHoldingARow("tidesync_test_held_elsewhere");
    await device.migrate([`alter table public.tidesync_test_untouched add column priority integer not null default 0`]);
    await device.deploy();
    const { report, data } = await device.sync();
    expect(report).toMatchObject({ pulled: 0, resynced: false });
    expect(data[device.id]).toEqual(written);
  });

  it("added without a default, the function deployed, then every row backfilled by an update: the rows alone are pulled again", async () => {
    const device = await deviceHoldingARow("tidesync_test_backfilled");
    await device.migrate([`alter table public.tidesync_test_backfilled add column priority integer`]);
    // Through the function deployed before: a row created meanwhile gets no value (no default yet).
    let created = "";
    await device.sync(async (client) => { created = await client.create("tidesync_test_backfilled", { list_id: device.listId, body: "written before the deploy" }); });
    await device.deploy();
    await device.migrate([
      `update public.tidesync_test_backfilled set priority = 0`,
      `alter table public.tidesync_test_backfilled alter column priority set default 0, alter column priority set not null`,
      `grant insert (priority), update (priority) on public.tidesync_test_backfilled to authenticated`,
    ]);
    const { report, data } = await device.sync();
    // An incremental pull listing the backfilled rows alone (not the user's list or membership).
    expect(report).toMatchObject({ pulled: 2, resynced: false });
    expect(data).toEqual({
      [device.id]: { ...written, priority: 0 },
      [created]: { list_id: device.listId, body: "written before the deploy", priority: 0 },
    });
  });

  it("added with a default, the function deployed, then the table re-recorded (disable_sync, enable_sync): the device resyncs everything", async () => {
    const device = await deviceHoldingARow("tidesync_test_rerecorded");
    await device.migrate([
      `alter table public.tidesync_test_rerecorded add column priority integer not null default 0`,
      `grant insert (priority), update (priority) on public.tidesync_test_rerecorded to authenticated`,
    ]);
    expect((await device.sync()).report).toMatchObject({ pulled: 0 });
    await device.deploy();
    await device.migrate([
      `select app_private.disable_sync('public.tidesync_test_rerecorded')`,
      `select app_private.enable_sync('public.tidesync_test_rerecorded', 'list_id')`,
    ]);
    // 410 RESYNC_REQUIRED, then a full sync of every collection: the list, the membership, the row.
    const { report, data } = await device.sync();
    expect(report).toMatchObject({ pulled: 3, resynced: true });
    expect(data[device.id]).toEqual({ ...written, priority: 0 });
  });
});

describe("a column added, through the API: a collections filter, and a rolling deploy", () => {
  it("a filtered cursor names its collections' columns too (410 after the deploy), and a cursor the new function issued is not followed by the old one (503, kept)", async () => {
    const user = await probe.newUser();
    const table = "tidesync_test_filtered";
    const pull = (baseUrl: string, cursor?: string, filtered = true) =>
      call<{ changes: { id: string; data: Record<string, unknown> | null }[]; cursor: string; has_more: boolean }>(
        `/v1/sync/changes?${[filtered && `collections=${table}`, cursor && `cursor=${cursor}`].filter(Boolean).join("&")}`,
        { token: user.token, baseUrl },
      );
    const id = randomUUID();
    await probe.admin.unsafe(`insert into public.${table} (id, list_id, body) values ($1, $2, 'there before')`, [id, user.userId]);
    await untilOpenTransactionsEnd(probe.admin);
    const old = probe.apiUrl;
    const before = await pull(old);
    expect(before.status, before.text).toBe(200);
    expect(before.body.changes.map((c) => c.data)).toEqual([{ list_id: user.userId, body: "there before" }]);

    await probe.admin.unsafe(`alter table public.${table} add column priority integer not null default 7`);
    const fresh = (await probe.startServer()).apiUrl;
    // The old function's filtered cursor, on the new function: the row it listed lacks the column.
    const stale = await pull(fresh, before.body.cursor);
    expect(stale.status, stale.text).toBe(410);
    expect(stale.body).toMatchObject({ error: { code: "RESYNC_REQUIRED" } });
    expect(stale.text).toContain(table);
    const again = await pull(fresh);
    expect(again.status, again.text).toBe(200);
    expect(again.body.changes.map((c) => c.data)).toEqual([{ list_id: user.userId, body: "there before", priority: 7 }]);

    // An instance still running the old function, with the new function's cursors (filtered or
    // not): it would list the rows without the column and move the cursor past them. 503, kept.
    const unfiltered = await pull(fresh, undefined, false);
    for (const [cursor, filtered] of [[again.body.cursor, true], [unfiltered.body.cursor, false]] as const) {
      const onOld = await pull(old, cursor, filtered);
      expect(onOld.status, onOld.text).toBe(503);
      expect(onOld.body).toMatchObject({ error: { code: "UNAVAILABLE" } });
      expect(onOld.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
      expect((await pull(fresh, cursor, filtered)).status).toBe(200);
      // The same cursor issued ROLLOUT_SECONDS ago: no rollout lasts so long, so the old function is
      // the one deployed (rolled back, the column kept). 410: the device resyncs through it, not 503 for ever.
      const payload = await decodeCursor(probe.cursorSecret, user.userId, cursor);
      const aged = await encodeCursor(probe.cursorSecret, user.userId, { ...payload, iat: payload.iat - ROLLOUT_SECONDS });
      const rolledBack = await pull(old, aged, filtered);
      expect(rolledBack.status, rolledBack.text).toBe(410);
      expect(rolledBack.body).toMatchObject({ error: { code: "RESYNC_REQUIRED" } });
      // A cursor naming no collections (from before they were bound) may have passed the row: 410 too.
      const { synced: _, ...unbound } = payload;
      const before = await pull(fresh, await encodeCursor(probe.cursorSecret, user.userId, unbound), filtered);
      expect(before.status, before.text).toBe(410);
    }
  });
});
