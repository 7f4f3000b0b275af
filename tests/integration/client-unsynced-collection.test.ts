// A client whose `collections` name one the server does not sync (dropped from it, or not deployed
// yet: an app build ahead of its server). The server refuses a pull filter naming it (400
// VALIDATION_FAILED, not retryable), so before, every sync of that client failed, for ever, although
// the GET /v1/meta it had just fetched did not list it. Now the client pulls the ones the server
// syncs and tells the app which it left out (a collections_unavailable event; client/sync-client.ts
// ownCollections). The one left out is tidesync_test_unsynced: a name no app syncs (an app that
// followed docs/sync.md syncs notes).
import { describe, expect, it } from "vitest";
import type { SyncEvent } from "../../client/events.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { userWithPulls } from "../support/client-device.ts";
import { stack } from "../support/harness.ts";

/** A user with 3 tasks, a client pulling `collections`, its events, and each pull's `collections` query (null: none). */
async function clientOf(collections: string[]) {
  const { api, installationId, pulls: filters } = await userWithPulls(stack.apiUrl, 3, (query) => query.get("collections"));
  const client = await TidesyncClient.open({ api, storage: new MemoryStorage(), installationId, collections });
  const events: SyncEvent[] = [];
  client.on((event) => events.push(event));
  return { client, events, filters };
}

describe("a client's `collections` naming one the server does not sync", () => {
  it("pulls the others, and names the one left out in a collections_unavailable event", async () => {
    const { client, events, filters } = await clientOf(["lists", "tasks", "tidesync_test_unsynced"]);
    expect(await client.sync()).toMatchObject({ pulled: 4 });
    expect(await client.sync()).toMatchObject({ pulled: 0, resynced: false });
    expect(client.status).toMatchObject({ state: "online", lastErrorCode: null });
    expect((await client.list("tasks")).length).toBe(3);
    expect(filters).toEqual(["lists,tasks", "lists,tasks"]);
    expect(events).toEqual([{ type: "collections_unavailable", collections: ["tidesync_test_unsynced"], pulling: ["lists", "tasks"] }]);
  }, 60_000);

  it("none of them synced: pulls nothing (not everything), pushes still go, and the event says so", async () => {
    const { client, events, filters } = await clientOf(["tidesync_test_unsynced"]);
    expect(await client.sync()).toMatchObject({ pulled: 0 });
    await client.create("lists", { title: "made here" });
    expect(await client.sync()).toMatchObject({ applied: 1, pulled: 0 });
    expect(filters).toEqual([]);
    expect(await client.list("tasks")).toEqual([]);
    expect(client.status).toMatchObject({ state: "online", lastErrorCode: null });
    expect(events).toEqual([{ type: "collections_unavailable", collections: ["tidesync_test_unsynced"], pulling: [] }]);
  }, 60_000);
});
