// One RxDB device replicating the sample's tasks through a TidesyncApi whose
// requests a test can intercept (`fetch`): the set-up of the tests that race a
// pull, or a reSync, against a push on its way back, or kill the app between
// a push's answer and RxDB's record of it.
import { randomUUID } from "node:crypto";
import { createRxDatabase, type RxCollection } from "rxdb";
import { getRxStorageMemory } from "rxdb/plugins/storage-memory";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import { replicateTidesync, type RxdbTidesync } from "../../client/adapters/rxdb/index.ts";
import type { SyncEvent } from "../../client/events.ts";
import { schemas } from "../adapters/rxdb-device.ts";
import { settled } from "./shared-lists.ts";
import { stack, type TestUser } from "./harness.ts";

/** RxDB's own fields and the version field: not the record's data. */
const LOCAL = new Set(["id", "server_version", "_deleted", "_meta", "_rev", "_attachments"]);

export async function rxdbTasksDevice(user: TestUser, fetch: FetchFunction) {
  const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => user.token, fetch });
  const installationId = randomUUID();
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  const database = await createRxDatabase({ name: `rx-tasks-${randomUUID()}`, storage: getRxStorageMemory() });
  await database.addCollections({ tasks: { schema: schemas.tasks, localDocuments: true } });
  const tasks = database.collections.tasks as RxCollection<Record<string, unknown>>;
  const events: SyncEvent[] = [];
  const replicate = () =>
    replicateTidesync({
      collection: tasks,
      name: "tasks",
      replicationIdentifier: "tidesync-tasks",
      retryTime: 50,
      api,
      installationId,
      onEvent: (event) => events.push(event),
      batchSize: 20,
      backoff: { baseMs: 5, maxMs: 50, maxAttempts: 3 },
    });
  let replication: RxdbTidesync = replicate();
  return {
    tasks,
    get replication() {
      return replication;
    },
    /** What the adapter told the app, in order. */
    events,
    /** reSync() then awaitInSync(), as client/README.md tells RxDB users, once the database settled. */
    async sync() {
      await settled();
      replication.state.reSync();
      await replication.awaitInSync();
    },
    /** The task as the device holds it (its data without RxDB's fields), or undefined. */
    async record(id: string): Promise<{ version: unknown; data: Record<string, unknown> } | undefined> {
      const json = (await tasks.findOne(id).exec())?.toJSON() as Record<string, unknown> | undefined;
      return json && { version: json.server_version, data: Object.fromEntries(Object.entries(json).filter(([field]) => !LOCAL.has(field))) };
    },
    /**
     * The app is killed right after the next push handler returns: everything the adapter stored
     * is stored, and RxDB never records the push (a cancelled replication does not), so the
     * restarted app hands the same documents to the push again. Resolves once killed.
     */
    killAfterNextPush(): Promise<void> {
      const { state } = replication;
      const push = state.push!;
      const handler = push.handler;
      return new Promise((killed) => {
        push.handler = async (rows) => {
          push.handler = handler;
          const conflicts = await handler(rows);
          void state.cancel();
          // cancel() marks RxDB's replication cancelled a few microtasks on: before the handler returns.
          await new Promise((resolve) => setTimeout(resolve, 0));
          killed();
          return conflicts;
        };
      });
    },
    /**
     * The app is killed right after the next pull handler that hands RxDB documents returns: everything
     * the adapter stored is stored, and RxDB never stores the page (a cancelled replication does not).
     * Resolves once killed.
     */
    killAfterNextPullWithDocuments(): Promise<void> {
      const { state } = replication;
      const pull = state.pull!;
      const handler = pull.handler;
      return new Promise((killed) => {
        pull.handler = async (checkpoint, batchSize) => {
          const page = await handler(checkpoint, batchSize);
          if (page.documents.length === 0) return page;
          pull.handler = handler;
          void state.cancel();
          await new Promise((resolve) => setTimeout(resolve, 0));
          killed();
          return page;
        };
      });
    },
    /** The app restarts (after it was killed, or closed): a new replication over the same database. */
    async restart() {
      await replication.state.cancel();
      replication = replicate();
    },
    async close() {
      await replication.state.cancel();
      await database.close();
    },
  };
}
