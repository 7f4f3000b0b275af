// The core client (client/sync-client.ts) as an adapter device: the
// reference the adapters' tests hold WatermelonDB and RxDB to (its outbox
// keeps the app's order, and it pushes before it pulls).
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import type { DeviceFactory, DeviceRecord } from "./scenario.ts";

export const coreClientDevice: DeviceFactory = async ({ api, installationId, onEvent, tables = ["lists", "tasks"], maxOpsPerBatch }) => {
  const client = await TidesyncClient.open({ api, storage: new MemoryStorage(), installationId, maxOpsPerBatch });
  client.on(onEvent);
  return {
    sync: async () => void (await client.sync()),
    write: (collection, id, data) => client.upsert(collection, id, data),
    remove: (collection, id) => client.delete(collection, id),
    async records() {
      const result = new Map<string, DeviceRecord>();
      for (const collection of tables) {
        for (const r of await client.list(collection)) result.set(`${collection}/${r.id}`, { version: r.version!, data: r.data! });
      }
      return result;
    },
    restart: async () => {},
    close: async () => {},
  };
};
