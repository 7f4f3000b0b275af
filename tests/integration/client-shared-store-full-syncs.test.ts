// Two clients on one SQLite file (an app and its background task,
// client/README.md "Background sync"), both in a full sync. The marks of a full
// sync are in the store; so is which full sync runs (an id, with its next
// cursor). The task's full sync began while the app's ran, then the OS ended
// the task: the app's pages and its sweep no longer belong to the store's full
// sync, so the app goes on with the task's instead of sweeping rows the task's
// reset had unmarked. Before, the app swept 6 of the 12 tasks (and the shared
// list) and stored its final cursor: incremental pulls never brought them back.
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import { SqliteStorage } from "../../client/storage-sqlite.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { betterSqliteDriver } from "../../client/test/better-sqlite3-driver.ts";
import { listSharedWithBob } from "../support/client-device.ts";
import { createTestUser, stack } from "../support/harness.ts";
import { settled } from "../support/shared-lists.ts";

it("a full sync the background task began and never finished, while the app's ran, drops no row the app can see", async () => {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const { list, file } = await listSharedWithBob(alice, bob, 12);
  const installationId = randomUUID();
  // The app's fourth page request waits until the task has run.
  let pages = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let reachedGate!: () => void;
  const atGate = new Promise<void>((resolve) => (reachedGate = resolve));
  const appFetch: FetchFunction = async (input, init) => {
    if (String(input).includes("/v1/sync/changes") && ++pages === 4) {
      reachedGate();
      await gate;
    }
    return globalThis.fetch(input, init);
  };
  // The task's second page request never comes back (the OS ends the task).
  let taskPages = 0;
  const taskFetch: FetchFunction = async (input, init) => {
    if (String(input).includes("/v1/sync/changes") && ++taskPages === 2) throw new TypeError("task killed");
    return globalThis.fetch(input, init);
  };
  const appApi = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => bob.token, fetch: appFetch });
  const taskApi = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => bob.token, fetch: taskFetch });
  await appApi.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  const open = (api: TidesyncApi, options = {}) =>
    TidesyncClient.open({ api, storage: new SqliteStorage(betterSqliteDriver(file)), installationId, pullLimit: 3, ...options });
  const app = await open(appApi);
  const task = await open(taskApi, { backoff: { maxAttempts: 1 } });
  const events: SyncEvent[] = [];
  app.on((event) => events.push(event));

  const appSync = app.sync();
  await atGate;
  await expect(task.sync()).rejects.toThrow();
  release();
  await appSync;
  expect(await app.list("tasks")).toHaveLength(12);
  expect((await app.list("lists")).map((l) => l.data?.title)).toContain("Shared");
  expect(events.filter((e) => e.type === "write_discarded")).toEqual([]);

  await settled();
  await app.sync();
  expect(await app.list("tasks")).toHaveLength(12);
  const reopened = await open(appApi);
  await reopened.sync();
  expect(await reopened.list("tasks")).toHaveLength(12);
  expect((await reopened.list("lists")).map((l) => l.data?.title)).toContain("Shared");
});
