// An app and its background task, each with a client on the same SQLite file
// (client/README.md, "Background sync"), against the real function: a write
// the app makes after the task pushed its create is a new op (the server's
// ledger would answer the create's op_id `duplicate` and ignore new data).
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { TidesyncApi } from "../../client/api-client.ts";
import { SqliteStorage } from "../../client/storage-sqlite.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { betterSqliteDriver } from "../../client/test/better-sqlite3-driver.ts";
import { adminSql, createTestUser, stack } from "../support/harness.ts";

async function appAndTask() {
  const alice = await createTestUser();
  const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => alice.token });
  const installationId = randomUUID();
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  const file = path.join(mkdtempSync(path.join(tmpdir(), "tidesync-shared-")), "tidesync.db");
  const open = () => TidesyncClient.open({ api, storage: new SqliteStorage(betterSqliteDriver(file)), installationId });
  const app = await open();
  await app.sync();
  return { alice, app, open };
}

describe("two clients on one SQLite file (an app and its background task)", () => {
  it("an edit made in the app after the task pushed the create reaches the server", async () => {
    const { alice, app, open } = await appAndTask();
    const id = await app.create("tasks", { list_id: alice.userId, title: "draft" });
    await (await open()).sync();
    await app.upsert("tasks", id, { title: "final title" });
    expect(await app.sync()).toMatchObject({ applied: 1, duplicates: 0 });
    const [server] = await adminSql<{ title: string }[]>`select title from public.tasks where id = ${id}`;
    expect(server.title).toBe("final title");
    expect((await app.get("tasks", id))?.data?.title).toBe("final title");
  });

  it("a delete made in the app after the task pushed the create reaches the server", async () => {
    const { alice, app, open } = await appAndTask();
    const id = await app.create("tasks", { list_id: alice.userId, title: "typo" });
    await (await open()).sync();
    await app.delete("tasks", id);
    await app.sync();
    expect(await adminSql`select id from public.tasks where id = ${id}`).toHaveLength(0);
    expect(await app.list("tasks")).toEqual([]);
  });
});
