// The scenario's driver for the RxDB adapter: a real RxDB database (the
// memory storage, as in Node) with the sample app's collections, the app's
// writes made through RxDB's own API, replicated live by replicateRxCollection
// with the adapter's pull and push handlers, in one RxdbPushOrder.
import { addRxPlugin, createRxDatabase, type RxCollection, type RxJsonSchema } from "rxdb";
import { RxDBLocalDocumentsPlugin } from "rxdb/plugins/local-documents";
import { getRxStorageMemory } from "rxdb/plugins/storage-memory";
import type { Subscription } from "rxjs";
import { replicateTidesync, RxdbPushOrder, type RxdbTidesync } from "../../client/adapters/rxdb/index.ts";
import type { RecordData } from "../../client/storage.ts";
import type { AdapterDevice, DeviceRecord, DeviceSetup } from "./scenario.ts";

// The adapter keeps its cursor and sent ops in the collection's local documents.
addRxPlugin(RxDBLocalDocumentsPlugin);

const VERSION = "server_version";
const text = { type: "string" } as const;
const optional = (type: string) => ({ type: [type, "null"] });

function schemaOf(fields: Record<string, object>, required: string[]): RxJsonSchema<Record<string, unknown>> {
  return {
    version: 0,
    primaryKey: "id",
    type: "object",
    properties: { id: { type: "string", maxLength: 36 }, ...fields, [VERSION]: optional("number") },
    required: ["id", ...required],
  } as RxJsonSchema<Record<string, unknown>>;
}

/** The sample app's collections as RxDB schemas (the server version in `server_version`). */
export const schemas = {
  lists: schemaOf({ title: text, color: optional("string"), position: { type: "number" }, archived: { type: "boolean" }, created_by: optional("string"), created_at: optional("string") }, ["title"]),
  tasks: schemaOf({
    list_id: text,
    title: text,
    notes: optional("string"),
    done: { type: "boolean" },
    due_date: optional("string"),
    position: { type: "number" },
    created_by: optional("string"),
    created_at: optional("string"),
  }, ["list_id", "title"]),
  list_members: schemaOf({ list_id: text, user_id: text, role: text, created_at: optional("string") }, ["list_id", "user_id", "role"]),
};
const LOCAL = new Set(["id", VERSION, "_deleted", "_meta", "_rev", "_attachments"]);

/** A phone on RxDB; `collection(name)` is the app's RxCollection (for writes the device's own methods do not make). */
export async function rxdbDevice(
  { name, api, installationId, onEvent, pullLimit, tables = ["lists", "tasks"], maxOpsPerBatch }: DeviceSetup,
): Promise<AdapterDevice & { collection(name: string): RxCollection<Record<string, unknown>> }> {
  const database = await createRxDatabase({ name: `${name}-${crypto.randomUUID()}`, storage: getRxStorageMemory() });
  await database.addCollections(Object.fromEntries(tables.map((table) => [table, { schema: schemas[table as keyof typeof schemas], localDocuments: true }])));
  const collection = (n: string) => database.collections[n] as RxCollection<Record<string, unknown>>;
  const replications = new Map<string, RxdbTidesync>();
  const start = () => {
    const order = new RxdbPushOrder(tables);
    for (const collectionName of tables) {
      replications.set(collectionName, replicateTidesync({
        collection: collection(collectionName),
        name: collectionName,
        replicationIdentifier: `tidesync-${collectionName}`,
        retryTime: 50,
        api,
        installationId,
        onEvent,
        batchSize: pullLimit ?? 20,
        maxOpsPerBatch,
        backoff: { baseMs: 5, maxMs: 50, maxAttempts: 3 },
        // Upserts parents first, then deletes children first, across the replications.
        order,
      }));
    }
  };
  const stop = async () => {
    for (const replication of replications.values()) await replication.state.cancel();
  };
  start();

  return {
    collection,
    async sync() {
      // Each replication catches up, or the sync fails with the first error it meets.
      for (const replication of replications.values()) {
        let subscription: Subscription | undefined;
        const failed = new Promise<never>((_, reject) => {
          subscription = replication.state.error$.subscribe(reject);
        });
        try {
          replication.state.reSync();
          await Promise.race([replication.awaitInSync(), failed]);
        } finally {
          subscription?.unsubscribe();
        }
      }
    },
    async write(collectionName, id, data) {
      const existing = await collection(collectionName).findOne(id).exec();
      if (existing) await existing.incrementalPatch(data);
      else await collection(collectionName).insert({ id, ...data });
    },
    async remove(collectionName, id) {
      await (await collection(collectionName).findOne(id).exec())?.remove();
    },
    async records() {
      const result = new Map<string, DeviceRecord>();
      for (const collectionName of tables) {
        for (const doc of await collection(collectionName).find().exec()) {
          const json = doc.toJSON() as Record<string, unknown>;
          const data: RecordData = Object.fromEntries(Object.entries(json).filter(([field]) => !LOCAL.has(field)));
          result.set(`${collectionName}/${doc.primary}`, { version: json[VERSION] as number, data });
        }
      }
      return result;
    },
    async restart() {
      // New replications on the same database: RxDB resumes from its stored checkpoints, the adapter from its local documents.
      await stop();
      start();
    },
    async close() {
      await stop();
      await database.close();
    },
  };
}
