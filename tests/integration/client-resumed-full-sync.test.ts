import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import { SqliteStorage } from "../../client/storage-sqlite.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { betterSqliteDriver } from "../../client/test/better-sqlite3-driver.ts";
import { adminSql, createTestUser, stack } from "../support/harness.ts";
import { asUser, removeMember, settled, share } from "../support/shared-lists.ts";

// One client on a SQLite store whose full sync was interrupted (the OS ended the
// app) resumes it at its next page. What its earlier pages listed stays marked,
// so a list the user lost meanwhile is not swept: its removal comes after the
// full sync's cursor. sync() ("push, then pull until up to date") pulls it too
// before it resolves (it used to keep the list until the next sync()).
it("a resumed full sync ends up to date: a list the user lost while it was interrupted is gone when sync() resolves", async () => {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const list2 = "00000000-0000-4000-8000-" + randomUUID().slice(-12); // sorts first: the first pages list it
  await asUser(alice, (tx) => tx`insert into public.lists (id, title) values (${list2}, 'Secret')`);
  await adminSql`insert into public.tasks (list_id, title) select ${list2}, 'secret ' || g from generate_series(1, 4) g`;
  await share(alice, list2, bob, "viewer");
  await settled();
  const file = path.join(mkdtempSync(path.join(tmpdir(), "tidesync-resumed-")), "tidesync.db");
  let pages = 0, killAt = 2;
  const f: FetchFunction = async (input, init) => {
    if (String(input).includes("/v1/sync/changes") && ++pages === killAt) throw new TypeError("app killed by the OS");
    return globalThis.fetch(input, init);
  };
  const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => bob.token, fetch: f });
  const installationId = randomUUID();
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  const open = () => TidesyncClient.open({ api, storage: new SqliteStorage(betterSqliteDriver(file)), installationId, pullLimit: 3, backoff: { maxAttempts: 1 } });
  await expect((await open()).sync()).rejects.toThrow(); // page 1 (list2's rows) applied, then killed
  await removeMember(alice, list2, bob); // Bob loses the list
  await settled();
  killAt = -1;
  const app = await open();
  await app.sync(); // resolves: "pull until up to date"
  const titles = (await app.list("tasks")).map((t) => t.data?.title);
  const lists = (await app.list("lists")).map((l) => l.data?.title);
  expect(lists).not.toContain("Secret");
  expect(titles.filter((t) => String(t).startsWith("secret"))).toEqual([]);
}, 60_000);
