// The scenario's driver for the WatermelonDB adapter: a real Watermelon
// database (LokiJS in memory, as in Node) with the sample app's tables, the
// app's writes made through Watermelon's own API, synced by WatermelonTidesync.
import { appSchema, Database, Model, tableSchema } from "@nozbe/watermelondb";
import LokiJSAdapterModule from "@nozbe/watermelondb/adapters/lokijs";
import logger from "@nozbe/watermelondb/utils/common/logger";
import { setGenerator } from "@nozbe/watermelondb/utils/common/randomId";
import { WatermelonTidesync } from "../../client/adapters/watermelondb/index.ts";
import type { RecordData } from "../../client/storage.ts";
import type { AdapterDevice, DeviceRecord, DeviceSetup } from "./scenario.ts";

// The CommonJS build's default export, as Node's ESM loader hands it over.
const LokiJSAdapter = ((LokiJSAdapterModule as unknown as { default?: typeof LokiJSAdapterModule }).default ?? LokiJSAdapterModule);

// The server's ids are lower-case uuids; Watermelon's default ids are not uuids.
setGenerator(() => crypto.randomUUID());
// Loki's progress lines would bury the test's output.
logger.silence();

const VERSION = "server_version";
const schema = appSchema({
  version: 1,
  tables: [
    tableSchema({
      name: "lists",
      columns: [
        { name: "title", type: "string" },
        { name: "color", type: "string", isOptional: true },
        { name: "position", type: "number" },
        { name: "archived", type: "boolean" },
        { name: "created_by", type: "string", isOptional: true },
        { name: "server_created_at", type: "string", isOptional: true },
        { name: VERSION, type: "number", isOptional: true },
      ],
    }),
    tableSchema({
      name: "list_members",
      columns: [
        { name: "list_id", type: "string", isIndexed: true },
        { name: "user_id", type: "string" },
        { name: "role", type: "string" },
        { name: "server_created_at", type: "string", isOptional: true },
        { name: VERSION, type: "number", isOptional: true },
      ],
    }),
    tableSchema({
      name: "tasks",
      columns: [
        { name: "list_id", type: "string", isIndexed: true },
        { name: "title", type: "string" },
        { name: "notes", type: "string", isOptional: true },
        { name: "done", type: "boolean" },
        { name: "due_date", type: "string", isOptional: true },
        { name: "position", type: "number" },
        { name: "created_by", type: "string", isOptional: true },
        { name: "server_created_at", type: "string", isOptional: true },
        { name: VERSION, type: "number", isOptional: true },
      ],
    }),
  ],
});

class List extends Model {
  static override table = "lists";
}
class Task extends Model {
  static override table = "tasks";
}
class ListMember extends Model {
  static override table = "list_members";
}

const LOCAL = new Set(["id", "_status", "_changed", VERSION]);

/** A phone on WatermelonDB; `syncer()` makes the adapter object its sync() makes (close() it, as an app does on sign-out). */
export async function watermelonDevice(
  { name, api, installationId, onEvent, pullLimit, tables = ["lists", "tasks"], maxOpsPerBatch }: DeviceSetup,
): Promise<AdapterDevice & { syncer(): WatermelonTidesync; database: Database }> {
  const adapter = new LokiJSAdapter({ schema, useWebWorker: false, useIncrementalIndexedDB: true, dbName: name });
  const database = new Database({ adapter, modelClasses: [List, Task, ListMember] });
  // A new adapter object for every sync, as after an app restart: what it needs (cursor, sent ops) is in the database.
  const syncer = () => new WatermelonTidesync({
    database,
    api,
    installationId,
    tables,
    columns: Object.fromEntries(tables.map((table) => [table, { created_at: "server_created_at" }])),
    onEvent,
    pullLimit,
    maxOpsPerBatch,
    backoff: { baseMs: 5, maxMs: 50, maxAttempts: 3 },
  });

  const find = async (collection: string, id: string): Promise<Model | null> => {
    try {
      return await database.get(collection).find(id);
    } catch {
      return null;
    }
  };

  const device: AdapterDevice & { syncer(): WatermelonTidesync; database: Database } = {
    syncer,
    database,
    async sync() {
      await syncer().sync();
    },
    async write(collection, id, data) {
      const existing = await find(collection, id);
      await database.write(async () => {
        // What an app's model setters (@field) do: _setRaw, which Watermelon tracks as a change.
        const set = (record: Model) => {
          for (const [field, value] of Object.entries(data)) record._setRaw(field, value as never);
        };
        if (existing) await existing.update(set);
        else {
          await database.get(collection).create((record) => {
            record._raw.id = id;
            set(record);
          });
        }
      });
    },
    async remove(collection, id) {
      const existing = await find(collection, id);
      if (existing) await database.write(async () => await existing.markAsDeleted());
    },
    async records() {
      const result = new Map<string, DeviceRecord>();
      for (const collection of tables) {
        for (const record of await database.get(collection).query().fetch()) {
          const raw = record._raw as unknown as Record<string, unknown>;
          const data: RecordData = Object.fromEntries(Object.entries(raw).filter(([column]) => !LOCAL.has(column))
            .map(([column, value]) => [column === "server_created_at" ? "created_at" : column, value]));
          result.set(`${collection}/${record.id}`, { version: raw[VERSION] as number, data });
        }
      }
      return result;
    },
    async restart() {
      // Nothing to do: every sync already runs on a new adapter object (see syncer).
    },
    async close() {},
  };
  return device;
}
