// A phone of a test user for the real client (client/): a session bound to a
// new (or given) installation, the client on an in-memory store, and the
// events it emits, in order.
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient, type TidesyncClientOptions } from "../../client/sync-client.ts";
import { createTestUser, stack, type TestUser } from "./harness.ts";
import { pushOk, settled, share, upsert } from "./shared-lists.ts";

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

/**
 * The scene of the shared-store tests: Alice's list "Shared" with `tasks` tasks (titles t, or
 * t0, t1, … for more than one), made and pushed on her own phone, shared with Bob as editor; and
 * a new SQLite file for Bob's store (the one his app and its background task open).
 */
export async function listSharedWithBob(alice: TestUser, bob: TestUser, tasks = 1): Promise<{ list: string; taskIds: string[]; file: string }> {
  const A = await clientDevice(alice);
  const list = await A.client.create("lists", { title: "Shared" });
  const taskIds: string[] = [];
  for (let i = 0; i < tasks; i++) taskIds.push(await A.client.create("tasks", { list_id: list, title: tasks === 1 ? "t" : `t${i}` }));
  await A.client.sync();
  await share(alice, list, bob, "editor");
  await settled();
  const file = path.join(mkdtempSync(path.join(tmpdir(), "tidesync-shared-store-")), "tidesync.db");
  return { list, taskIds, file };
}

/**
 * A new user with `tasks` tasks (t0, t1, …) in their personal list, a session on a new
 * installation, and an API (on the functions at `apiUrl`) that records what `pick` reads of each
 * pull's query (GET /v1/sync/changes), in order: what the clients built on it asked for.
 */
export async function userWithPulls<T>(apiUrl: string, tasks: number, pick: (query: URLSearchParams) => T) {
  const user = await createTestUser();
  await pushOk(user, { ops: Array.from({ length: tasks }, (_, i) => upsert("tasks", randomUUID(), { list_id: user.userId, title: `t${i}` })) });
  await settled();
  const pulls: T[] = [];
  const api = new TidesyncApi({
    baseUrl: apiUrl,
    getAccessToken: () => user.token,
    fetch: (input, init) => {
      const url = new URL(input);
      if (url.pathname.endsWith("/v1/sync/changes")) pulls.push(pick(url.searchParams));
      return globalThis.fetch(input, init);
    },
  });
  const installationId = randomUUID();
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  return { user, api, installationId, pulls };
}

/** The task as a fresh device of `user` pulls it from the server: its version and data (undefined: the server holds none the user sees). */
export async function taskOnServer(user: TestUser, id: string) {
  const other = await clientDevice(user);
  await other.client.sync();
  const record = await other.client.get("tasks", id);
  return record && { version: record.version, data: record.data };
}
