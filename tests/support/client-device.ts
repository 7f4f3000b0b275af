// A phone of a test user for the real client (client/): a session bound to a
// new (or given) installation, the client on an in-memory store, and the
// events it emits, in order.
import { randomUUID } from "node:crypto";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient, type TidesyncClientOptions } from "../../client/sync-client.ts";
import { stack, type TestUser } from "./harness.ts";

export interface ClientDeviceOptions extends Pick<TidesyncClientOptions, "backoff"> {
  installationId?: string;
  /** The client's fetch (a test's network faults); the global one by default. */
  fetch?: FetchFunction;
}

export async function clientDevice(user: TestUser, { installationId = randomUUID(), fetch, ...options }: ClientDeviceOptions = {}) {
  const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => user.token, ...(fetch ? { fetch } : {}) });
  const session = await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  const client = await TidesyncClient.open({ api, storage: new MemoryStorage(), installationId, ...options });
  const events: SyncEvent[] = [];
  client.on((event) => events.push(event));
  return { api, session, client, events };
}
