// Two clients on one SQLite file (an app and its background task,
// client/README.md "Background sync", "Events"): the app's edit of a task in a
// list Bob was removed from is pushed by the background task's sync, which has
// no listener. The store keeps the events it could not tell; the app's client
// tells its listeners at its next step, once. Before, the app was never told
// its write was discarded (the events went to the task's client only).
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { TidesyncApi } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import { SqliteStorage } from "../../client/storage-sqlite.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { betterSqliteDriver } from "../../client/test/better-sqlite3-driver.ts";
import { listSharedWithBob } from "../support/client-device.ts";
import { createTestUser, stack } from "../support/harness.ts";
import { removeMember, settled } from "../support/shared-lists.ts";

it("the app's write the background task's sync discarded is told to the app's listeners, once", async () => {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const { list, taskIds: [task], file } = await listSharedWithBob(alice, bob);
  const installationId = randomUUID();
  const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => bob.token });
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  const open = () => TidesyncClient.open({ api, storage: new SqliteStorage(betterSqliteDriver(file)), installationId });
  const app = await open();
  const background = await open(); // a background task: no listener
  await app.sync();
  const told: string[] = [];
  app.on((event: SyncEvent) => told.push(`${event.type}:${event.type === "write_discarded" ? event.reason : event.type === "op_rejected" ? event.error.code : ""}`));
  await app.upsert("tasks", task, { title: "offline edit" });
  await removeMember(alice, list, bob);
  await settled();

  await background.sync();
  expect(told).toEqual([]);
  await app.sync();
  expect(told).toEqual(["op_rejected:NOT_FOUND", "write_discarded:rejected"]);
  expect(await app.list("tasks")).toEqual([]);
  await app.sync();
  const reopened = await open();
  const toldAgain: SyncEvent[] = [];
  reopened.on((event) => toldAgain.push(event));
  await reopened.sync();
  expect(told).toHaveLength(2);
  expect(toldAgain).toEqual([]);
});
