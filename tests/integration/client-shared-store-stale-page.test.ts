// Two clients on one SQLite file (an app and its background task,
// client/README.md "Background sync"): a pull page the app fetched with an old
// cursor comes back after the task pulled newer pages. The app's page said Bob
// lost access to the list; the task's newer pages said he was invited again,
// and Bob edited a task. A page applies only where the store's pull still
// stands (the cursor it was requested with): the app drops its stale page and
// goes on from the stored cursor. Before, the stale removal dropped the row and
// the queued edit (write_discarded, reason access_revoked, though Bob had
// access) and moved the stored cursor back.
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import { SqliteStorage } from "../../client/storage-sqlite.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { betterSqliteDriver } from "../../client/test/better-sqlite3-driver.ts";
import { listSharedWithBob } from "../support/client-device.ts";
import { adminSql, createTestUser, stack } from "../support/harness.ts";
import { removeMember, settled, share } from "../support/shared-lists.ts";

it("a page fetched before the other client pulled newer ones is not applied: a stale removal drops no row and no queued edit", async () => {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const { list, taskIds: [task], file } = await listSharedWithBob(alice, bob);
  const installationId = randomUUID();
  // The app's next pull answer is held (already fetched) until the task has run.
  let holdNextPull = false;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let reachedGate!: () => void;
  const atGate = new Promise<void>((resolve) => (reachedGate = resolve));
  const appFetch: FetchFunction = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    if (!holdNextPull || !String(input).includes("/v1/sync/changes")) return response;
    holdNextPull = false;
    const body = await response.text();
    reachedGate();
    await gate;
    return new Response(body, { status: response.status, headers: response.headers });
  };
  const appApi = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => bob.token, fetch: appFetch });
  const taskApi = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => bob.token });
  await appApi.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  const app = await TidesyncClient.open({ api: appApi, storage: new SqliteStorage(betterSqliteDriver(file)), installationId });
  const bg = await TidesyncClient.open({ api: taskApi, storage: new SqliteStorage(betterSqliteDriver(file)), installationId });
  await app.sync();
  expect(await app.list("tasks")).toHaveLength(1);

  await removeMember(alice, list, bob);
  await settled();
  const events: SyncEvent[] = [];
  app.on((event) => events.push(event));
  holdNextPull = true;
  const appSync = app.sync(); // fetches the page with the removal, held before it is applied
  await atGate;
  await share(alice, list, bob, "editor"); // Bob is invited again
  await settled();
  await bg.sync(); // the task pulls the removal and the re-invitation
  expect(await bg.list("tasks")).toHaveLength(1);
  await bg.upsert("tasks", task, { title: "edited after re-invite" });
  release();
  await appSync;

  expect(events.filter((e) => e.type === "write_discarded")).toEqual([]);
  expect((await app.list("tasks")).map((t) => t.data?.title)).toEqual(["edited after re-invite"]);
  expect(app.pendingOps().map((p) => p.op.data?.title)).toEqual(["edited after re-invite"]);
  await app.sync();
  const [server] = await adminSql<{ title: string }[]>`select title from public.tasks where id = ${task}`;
  expect(server.title).toBe("edited after re-invite");
  expect((await app.list("tasks")).map((t) => t.data?.title)).toEqual(["edited after re-invite"]);
});
