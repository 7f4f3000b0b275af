// The real client when the server begins syncing a collection while the app runs (a deploy after
// the opened client's first sync fetched GET /v1/meta): a pull brings records of a collection the
// schema it fetched does not name. The app can then write what it reads, without a restart or a
// call of refreshSchema(). Simulated: the GET /v1/meta this client fetches leaves "tasks" out
// until the "deploy".
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import { TidesyncValidationError } from "../../client/api-error.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { adminSql, createTestUser, stack } from "../support/harness.ts";
import { pushOk, settled, upsert } from "../support/shared-lists.ts";

it("a collection a pull brings that the fetched schema did not name: the client fetches the schema again and takes writes of it", async () => {
  const alice = await createTestUser();
  const state = { deployed: false, metaFetches: 0 };
  const fetch: FetchFunction = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    if (!String(input).endsWith("/v1/meta")) return response;
    state.metaFetches++;
    if (state.deployed) return response;
    const body = await response.json();
    body.collections = body.collections.filter((c: string) => c !== "tasks");
    delete body.collection_schemas.tasks;
    return new Response(JSON.stringify(body), { status: 200, headers: response.headers });
  };
  const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => alice.token, fetch });
  const installationId = randomUUID();
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  const client = await TidesyncClient.open({ api, storage: new MemoryStorage(), installationId });
  await client.sync();
  await expect(client.create("tasks", { list_id: alice.userId, title: "before the deploy" })).rejects.toThrow(TidesyncValidationError);

  state.deployed = true;
  const task = randomUUID();
  await pushOk((await alice.newSession()).token, { ops: [upsert("tasks", task, { list_id: alice.userId, title: "from the web" })] });
  await settled();
  await client.sync();
  expect((await client.list("tasks")).map((r) => r.data?.title)).toEqual(["from the web"]);
  expect(client.schema?.collections).toContain("tasks");

  await client.upsert("tasks", task, { done: true });
  const created = await client.create("tasks", { list_id: alice.userId, title: "written on the phone" });
  await client.sync();
  expect((await adminSql`select id, done from public.tasks where id in ${adminSql([task, created])} order by title`).map((r) => [r.id, r.done]))
    .toEqual([[task, true], [created, false]]);
  // One fetch when opened, one for the new collection: later pulls of it ask no more.
  expect(state.metaFetches).toBe(2);
});
