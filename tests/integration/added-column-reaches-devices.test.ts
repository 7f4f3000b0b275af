// A column added to a synced table, seen by a device that already holds the table's rows
// (docs/sync.md, "Changing a synced table"). DDL fires no sync trigger, so the value
// `add column … default` gives existing rows reaches no device by itself; and a function lists
// only the columns it was generated with, so a row a device pulls before the regenerated function
// is deployed (probe.startServer()) arrives without the column and is not listed again. The
// recipes the doc gives write every row after that deploy.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TidesyncApi } from "../../client/api-client.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { type ProbeStack, startProbeStack, syncedLikeTasks } from "../support/probe-stack.ts";
import { settled } from "../support/shared-lists.ts";

let probe: ProbeStack;
beforeAll(async () => {
  probe = await startProbeStack("added_column", ["defaulted", "backfilled_early", "rerecorded_early", "backfilled", "rerecorded"].flatMap((name) => [
    `create table public.tidesync_test_${name} (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade, body text)`,
    ...syncedLikeTasks(`tidesync_test_${name}`, ["body"]),
  ]));
}, 180_000);
afterAll(async () => {
  await probe?.stop();
});

const written = { list_id: expect.any(String), body: "written before the migration" };

/** A new user's device holding one row of `table`, synced through the function deployed first. */
async function deviceHoldingARow(table: string) {
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
  await sync(async (client) => { id = await client.create(table, { list_id: user.userId, body: "written before the migration" }); });
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

describe("a column added to a synced table, on a device that already holds its rows", () => {
  it("added with a default alone: the device's finished pull lacks it (a nullable one's too: absent, not null)", async () => {
    const device = await deviceHoldingARow("tidesync_test_defaulted");
    await device.migrate([
      `alter table public.tidesync_test_defaulted add column priority integer not null default 0`,
      `alter table public.tidesync_test_defaulted add column tag text`,
      `grant insert (priority, tag), update (priority, tag) on public.tidesync_test_defaulted to authenticated`,
    ]);
    await device.deploy();
    const { report, data } = await device.sync();
    expect(report).toMatchObject({ pulled: 0, resynced: false });
    expect(data[device.id]).toEqual(written);
    const [row] = await probe.admin`select priority, tag from public.tidesync_test_defaulted where id = ${device.id}`;
    expect(row).toEqual({ priority: 0, tag: null });
  });

  it("rows written in the migration that adds the column, pulled before the deploy: the function deployed after lists them no more", async () => {
    const device = await deviceHoldingARow("tidesync_test_backfilled_early");
    await device.migrate([
      `alter table public.tidesync_test_backfilled_early add column priority integer`,
      `update public.tidesync_test_backfilled_early set priority = 0`,
    ]);
    expect((await device.sync()).report).toMatchObject({ pulled: 1 });
    await device.deploy();
    const { report, data } = await device.sync();
    expect(report).toMatchObject({ pulled: 0, resynced: false });
    expect(data[device.id]).toEqual(written);
  });

  it("the table re-recorded in the migration that adds the column, the device's resync run before the deploy: nothing after it", async () => {
    const device = await deviceHoldingARow("tidesync_test_rerecorded_early");
    await device.migrate([
      `alter table public.tidesync_test_rerecorded_early add column priority integer not null default 0`,
      `select app_private.disable_sync('public.tidesync_test_rerecorded_early')`,
      `select app_private.enable_sync('public.tidesync_test_rerecorded_early', 'list_id')`,
    ]);
    expect((await device.sync()).report).toMatchObject({ resynced: true });
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
