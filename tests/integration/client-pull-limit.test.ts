// A pull asks for at most the max_pull_limit GET /v1/meta publishes: the core client's
// `pullLimit`, Watermelon's `pullLimit` and RxDB's `batchSize` (default 100) are capped at it
// (client/batching.ts pullLimitOf). Before, they went out as they were, and a server with
// TIDESYNC_MAX_PULL_LIMIT=50 answered every pull 400 VALIDATION_FAILED: the core client's and
// Watermelon's sync failed, RxDB retried for ever (as it did with `batchSize: 2000` on a default server).
import { afterAll, beforeAll, expect, it } from "vitest";
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { rxdbDevice } from "../adapters/rxdb-device.ts";
import type { DeviceFactory } from "../adapters/scenario.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { userWithPulls } from "../support/client-device.ts";
import { stack } from "../support/harness.ts";

const MAX_PULL_LIMIT = 50;
const TASKS = 120;

let server: FunctionsServer;
beforeAll(async () => {
  server = await startFunctionsServer(
    { ...stack.functionsEnv, TIDESYNC_MAX_PULL_LIMIT: String(MAX_PULL_LIMIT), TIDESYNC_DEFAULT_PULL_LIMIT: String(MAX_PULL_LIMIT) },
    { name: "client-pull-limit" },
  );
}, 240_000);
afterAll(async () => {
  await server?.stop();
});

/** A user with TASKS tasks, on the server with the low max_pull_limit, and each pull's `limit` (null: none), in order. */
async function userWithTasks() {
  const { api, installationId, pulls: limits } = await userWithPulls(server.apiUrl, TASKS, (query) => query.has("limit") ? Number(query.get("limit")) : null);
  return { api, installationId, limits };
}

it("the core client asks for pages of at most max_pull_limit, whatever its pullLimit", async () => {
  const { api, installationId, limits } = await userWithTasks();
  const client = await TidesyncClient.open({ api, storage: new MemoryStorage(), installationId, pullLimit: 100 });
  await client.sync();
  expect((await client.list("tasks")).length).toBe(TASKS);
  expect(limits.length).toBeGreaterThan(2);
  expect(limits.every((limit) => limit === MAX_PULL_LIMIT)).toBe(true);
  await client.close();
}, 60_000);

for (const [name, factory] of [["WatermelonDB", watermelonDevice], ["RxDB", rxdbDevice]] as [string, DeviceFactory][]) {
  // 100: RxDB's default batchSize (the test driver's default is 20).
  it(`the ${name} adapter asks for pages of at most max_pull_limit, whatever its page size`, async () => {
    const { api, installationId, limits } = await userWithTasks();
    const device = await factory({ name: `pull-limit-${name}`, api, installationId, onEvent: () => {}, pullLimit: 100 });
    try {
      await device.sync();
      const tasks = [...(await device.records()).keys()].filter((key) => key.startsWith("tasks/"));
      expect(tasks.length).toBe(TASKS);
      expect(limits.length).toBeGreaterThan(2);
      expect(limits.every((limit) => limit === MAX_PULL_LIMIT)).toBe(true);
    } finally {
      await device.close();
    }
  }, 60_000);
}
