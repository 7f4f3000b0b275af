// One RxDB device replicating the sample's tasks through a TidesyncApi whose
// requests a test can intercept (`fetch`): the set-up of the tests that race a
// pull, or a reSync, against a push on its way back.
import { randomUUID } from "node:crypto";
import { createRxDatabase, type RxCollection } from "rxdb";
import { getRxStorageMemory } from "rxdb/plugins/storage-memory";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import { replicateTidesync } from "../../client/adapters/rxdb/index.ts";
import { schemas } from "../adapters/rxdb-device.ts";
import { settled } from "./shared-lists.ts";
import { stack, type TestUser } from "./harness.ts";

export async function rxdbTasksDevice(user: TestUser, fetch: FetchFunction) {
  const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => user.token, fetch });
  const installationId = randomUUID();
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  const database = await createRxDatabase({ name: `rx-tasks-${randomUUID()}`, storage: getRxStorageMemory() });
  await database.addCollections({ tasks: { schema: schemas.tasks, localDocuments: true } });
  const tasks = database.collections.tasks as RxCollection<Record<string, unknown>>;
  const replication = replicateTidesync({
    collection: tasks,
    name: "tasks",
    replicationIdentifier: "tidesync-tasks",
    retryTime: 50,
    api,
    installationId,
    onEvent: () => {},
    batchSize: 20,
    backoff: { baseMs: 5, maxMs: 50, maxAttempts: 3 },
  });
  return {
    tasks,
    replication,
    /** reSync() then awaitInSync(), as client/README.md tells RxDB users, once the database settled. */
    async sync() {
      await settled();
      replication.state.reSync();
      await replication.awaitInSync();
    },
    async close() {
      await replication.state.cancel();
      await database.close();
    },
  };
}
