// A pull asks for at most the max_pull_limit GET /v1/meta publishes: the core client's
// `pullLimit`, Watermelon's `pullLimit` and RxDB's `batchSize` (default 100) are capped at it
// (client/batching.ts pullLimitOf). Before, they went out as they were, and a server with
// TIDESYNC_MAX_PULL_LIMIT=50 answered every pull 400 VALIDATION_FAILED: the core client's and
// Watermelon's sync failed, RxDB retried for ever (as it did with `batchSize: 2000` on a default server).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { TidesyncApi } from "../../client/api-client.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { rxdbDevice } from "../adapters/rxdb-device.ts";
import type { DeviceFactory } from "../adapters/scenario.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { createTestUser, stack, type TestUser } from "../support/harness.ts";
import { pushOk, settled, upsert } from "../support/shared-lists.ts";

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

/** A user with TASKS tasks in their personal list, and an API on the server with the low max_pull_limit that records each pull's `limit`. */
async function userWithTasks(): Promise<{ user: TestUser; api: TidesyncApi; installationId: string; limits: (number | null)[] }> {
  const user = await createTestUser();
  await pushOk(user, { ops: Array.from({ length: TASKS }, (_, i) => upsert("tasks", randomUUID(), { list_id: user.userId, title: `t${i}` })) });
  await settled();
  const limits: (number | null)[] = [];
  const api = new TidesyncApi({
    baseUrl: server.apiUrl,
    getAccessToken: () => user.token,
    fetch: (input, init) => {
      const url = new URL(input);
      if (url.pathname.endsWith("/v1/sync/changes")) limits.push(url.searchParams.has("limit") ? Number(url.searchParams.get("limit")) : null);
      return globalThis.fetch(input, init);
    },
  });
  const installationId = randomUUID();
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  return { user, api, installationId, limits };
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
