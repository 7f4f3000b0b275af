// A pull that ends (has_more: false) leaves the device holding what the Data
// API shows the user, through the real function: not rows of an account's
// earlier life (deleted, then created again with the same id), nor rows the
// user lost between the pages of a full sync.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { changesResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { adminSql, call, createTestUser, expectEnvelope, stack, type TestUser } from "../support/harness.ts";
import { applyChanges, asUser, pullAll, pushOk, removeMember, settled, share, upsert } from "../support/shared-lists.ts";

/** What the Data API shows `user` of the synced tables: "collection/id", sorted. */
async function dataApiKeys(user: TestUser): Promise<string[]> {
  return await asUser(user, async (tx) =>
    (await tx<{ key: string }[]>`
      select 'lists/' || id as key from public.lists
      union all select 'tasks/' || id from public.tasks
      union all select 'list_members/' || id from public.list_members`).map((r) => r.key).sort());
}

/** Alice's list "Shared" (id `list`) with one task "milk", shared with `bob` as editor. */
async function aliceSharesWithBob(alice: TestUser, bob: TestUser, list: string): Promise<string> {
  const milk = randomUUID();
  await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", milk, { list_id: list, title: "milk" })] });
  await share(alice, list, bob, "editor");
  return milk;
}

describe("a pull after the account was deleted and created again with the same id", () => {
  it("answers 410 RESYNC_REQUIRED to a cursor of the account's earlier life", async () => {
    const [alice, bob] = [await createTestUser(), await createTestUser()];
    const list = randomUUID();
    await aliceSharesWithBob(alice, bob, list);
    const before = await pullAll(bob);
    expect(before.changes.map((c) => `${c.collection}/${c.id}`)).toContain(`lists/${list}`);

    await adminSql`delete from auth.users where id = ${bob.userId}`;
    const reborn = await createTestUser({ userId: bob.userId });
    await settled();
    const response = await call(`/v1/sync/changes?cursor=${encodeURIComponent(before.cursor)}`, { token: reborn.token });
    expectEnvelope(response, 410, "RESYNC_REQUIRED");
    // From scratch, the device holds what the Data API shows the new account: its personal list only.
    const fresh = await pullAll(reborn);
    expect(applyChanges(new Map(), fresh.changes).has(`lists/${list}`)).toBe(false);
    expect([...applyChanges(new Map(), fresh.changes).keys()].sort()).toEqual(await dataApiKeys(reborn));
    // and its cursors are the new account's: followed, not refused
    expect((await pullAll(reborn, fresh.cursor)).changes).toEqual([]);
  });

  it("GET /v1/whoami tells the two accounts apart by account_created_at (auth.users.created_at)", async () => {
    const bob = await createTestUser();
    const earlier = (await call("/v1/whoami", { token: bob.token })).body.account_created_at;
    const [{ created }] = await adminSql<{ created: string }[]>`
      select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created from auth.users where id = ${bob.userId}`;
    expect(earlier).toBe(created);
    await adminSql`delete from auth.users where id = ${bob.userId}`;
    const reborn = await createTestUser({ userId: bob.userId });
    const later = (await call("/v1/whoami", { token: reborn.token })).body;
    expect(later.user_id).toBe(bob.userId);
    expect(later.account_created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(later.account_created_at).not.toBe(earlier);
  });

  // A store bound since is refused to the new account (client-user-switch.test.ts); one bound before
  // (its owner's user id only: here, first synced with a server that did not tell the account) is
  // bound to the account of its first sync since, and the 410 drops the earlier account's rows.
  it("leaves a client on a store from before the account binding with the new account's lists only", async () => {
    const [alice, bob] = [await createTestUser(), await createTestUser()];
    const list = randomUUID();
    const milk = await aliceSharesWithBob(alice, bob, list);
    await settled();
    const storage = new MemoryStorage();
    const installationId = randomUUID();
    const open = async (user: TestUser, { tellsAccount = true } = {}) => {
      // A server from before account_created_at.
      const fetchImpl: FetchFunction = async (input, init) => {
        const response = await fetch(input, init);
        if (tellsAccount || !input.endsWith("/v1/whoami")) return response;
        const { account_created_at: _, ...body } = await response.json() as Record<string, unknown>;
        return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
      };
      const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => user.token, fetch: fetchImpl });
      await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
      return await TidesyncClient.open({ api, storage, installationId });
    };
    const first = await open(bob, { tellsAccount: false });
    await first.sync();
    expect((await first.list("tasks")).map((t) => t.id)).toEqual([milk]);
    expect((await storage.loadState()).ownerAccount).toBeUndefined();

    await adminSql`delete from auth.users where id = ${bob.userId}`;
    const reborn = await createTestUser({ userId: bob.userId });
    await settled();
    const again = await open(reborn);
    await again.sync();
    await again.sync();
    expect((await again.list("lists")).map((l) => l.id)).toEqual([reborn.userId]);
    expect(await again.list("tasks")).toEqual([]);
    expect((await storage.loadState()).ownerAccount).toMatch(/Z$/);
  });
});

describe("a full sync whose user loses a list between its pages", () => {
  it("goes on until the device no longer holds the list's rows", async () => {
    const [alice, bob] = [await createTestUser(), await createTestUser()];
    // sorts before Bob's personal list: the first page reads it
    const list = `00000000-0000-4000-8000-${randomUUID().slice(-12)}`;
    await aliceSharesWithBob(alice, bob, list);
    await settled();
    const local = new Map<string, Record<string, unknown>>();
    let cursor: string | undefined;
    let pages = 0;
    for (let hasMore = true; hasMore; pages++) {
      const query = new URLSearchParams({ limit: "1", ...(cursor ? { cursor } : {}) });
      const response = await call(`/v1/sync/changes?${query}`, { token: bob.token });
      expect(response.status, response.text).toBe(200);
      const page = changesResponseSchema.parse(response.body);
      applyChanges(local, page.changes);
      ({ cursor, has_more: hasMore } = page);
      if (pages === 0) {
        await removeMember(alice, list, bob);
        await settled();
      }
    }
    expect([...local.keys()].sort()).toEqual(await dataApiKeys(bob));
    // up to date: the next pull has nothing more to remove
    expect((await pullAll(bob, cursor)).changes).toEqual([]);
  });
});
