// Sign-out, and another user signs in on the same phone, while a WatermelonDB
// or RxDB sync of the first user's database is still running (one op per
// batch, the switch after the first). The adapters bind the database to the
// user whose token its first request went out with, as the core client binds
// its store (client-user-switch.test.ts): nothing goes out under the next
// user's token, the first user's unsent writes stay queued for them (not
// dropped as NOT_FOUND), and their database never takes the next user's rows
// (a pull of their cursor under the other token would answer INVALID_CURSOR
// and a full sync replacing the database with the other user's lists).
// WatermelonTidesync.close() and RxDB's cancel() stop a sync on sign-out:
// nothing is sent once they are called, and they resolve once the sync ended.
import { randomUUID } from "node:crypto";
import { addRxPlugin, createRxDatabase, type RxCollection, type RxDatabase } from "rxdb";
import { RxDBLocalDocumentsPlugin } from "rxdb/plugins/local-documents";
import { getRxStorageMemory } from "rxdb/plugins/storage-memory";
import { describe, expect, it } from "vitest";
import { replicateTidesync, RxdbPushOrder, type RxdbTidesync } from "../../client/adapters/rxdb/index.ts";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";
import { adminSql, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { pushOk, settled, upsert } from "../support/shared-lists.ts";

addRxPlugin(RxDBLocalDocumentsPlugin);

/** One phone: an installation whose signed-in user the test switches; the sync requests it sends, by whose token. */
async function phone(alice: TestUser) {
  let signedIn = alice;
  const sent: { route: string; as: string }[] = [];
  let afterRequest: ((route: string) => Promise<void>) | null = null;
  const fetch: FetchFunction = async (input, init) => {
    const route = new URL(input).pathname.split("/v1/").at(-1)!;
    if (route.startsWith("sync/")) sent.push({ route, as: signedIn.userId });
    const response = await globalThis.fetch(input, init);
    await afterRequest?.(route);
    return response;
  };
  const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => signedIn.token, fetch });
  const installationId = randomUUID();
  const signIn = async (user: TestUser) => {
    signedIn = user;
    await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  };
  await signIn(alice);
  return {
    api,
    installationId,
    sent,
    signIn,
    /** Runs once, after the first push batch came back (within the request, as a sign-out racing it). */
    afterFirstBatch(action: () => Promise<void> | void) {
      afterRequest = async (route) => {
        if (route !== "sync/batch") return;
        afterRequest = null;
        await action();
      };
    },
  };
}

/** Waits for what the test cannot await directly (a request's answer, an error on error$), however slow the server: fails if it never happens. */
async function until(what: string, holds: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 30_000; !holds();) {
    if (Date.now() > deadline) throw new Error(`never ${what} (30 s)`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The codes of the refusals on error$ (RxDB's RC_PUSH / RC_PULL, with the handler's error as a plain object). */
const causes = (errors: unknown[]) =>
  errors.flatMap((error) => (error as { parameters?: { errors?: { code?: string }[] } }).parameters?.errors ?? []).map((cause) => cause.code);

const taskIds = () => [randomUUID(), randomUUID(), randomUUID()];

async function onServer(ids: string[]): Promise<number> {
  await settled();
  return (await adminSql`select id from public.tasks where id in ${adminSql(ids)}`).length;
}

describe("WatermelonDB: the user switches while a sync of the first user's database runs", () => {
  it("nothing is sent under the next user's token; the unsent writes stay for the first user, and their database takes none of the other's rows", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const bobsList = randomUUID();
    await pushOk(bob, { ops: [upsert("lists", bobsList, { title: "Bob's private list" })] });
    const p = await phone(alice);
    const events: SyncEvent[] = [];
    const device = await watermelonDevice({ name: `switch-${randomUUID()}`, api: p.api, installationId: p.installationId, onEvent: (e) => events.push(e), maxOpsPerBatch: 1 });
    await device.sync();
    const tasks = taskIds();
    for (const [i, id] of tasks.entries()) await device.write("tasks", id, { list_id: alice.userId, title: `alice ${i}`, done: false, position: i });
    p.afterFirstBatch(() => p.signIn(bob));

    await expect(device.sync()).rejects.toMatchObject({ code: "STORE_OF_ANOTHER_USER", storeUserId: alice.userId, userId: bob.userId });
    expect(p.sent.filter((request) => request.as === bob.userId)).toEqual([]);
    expect(await onServer(tasks)).toBe(1);
    const local = await device.records();
    expect(tasks.filter((id) => local.has(`tasks/${id}`))).toEqual(tasks);
    expect(local.has(`lists/${bobsList}`)).toBe(false);
    expect(local.has(`lists/${bob.userId}`)).toBe(false);
    expect(local.has(`lists/${alice.userId}`)).toBe(true);
    expect(events).toEqual([]);

    // Alice signs in again: her writes go out.
    await p.signIn(alice);
    await device.sync();
    expect(await onServer(tasks)).toBe(3);
    expect(events.filter((e) => e.type === "op_rejected")).toEqual([]);
  }, 60_000);

  it("close() on sign-out: no request after it, it resolves once the sync ended, and the database keeps the unsent writes", async () => {
    const alice = await createTestUser();
    const p = await phone(alice);
    const device = await watermelonDevice({ name: `close-${randomUUID()}`, api: p.api, installationId: p.installationId, onEvent: () => {}, maxOpsPerBatch: 1 });
    await device.sync();
    const tasks = taskIds();
    for (const [i, id] of tasks.entries()) await device.write("tasks", id, { list_id: alice.userId, title: `alice ${i}`, done: false, position: i });
    const tidesync = device.syncer();
    let sentBeforeClose = 0;
    let closed: Promise<void> | null = null;
    p.afterFirstBatch(() => {
      sentBeforeClose = p.sent.length;
      closed = tidesync.close();
    });

    const sync = tidesync.sync();
    await expect(sync).rejects.toMatchObject({ code: "ABORTED" });
    await closed;
    expect(p.sent.length).toBe(sentBeforeClose);
    await expect(tidesync.sync()).rejects.toMatchObject({ code: "ABORTED" });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(p.sent.length).toBe(sentBeforeClose);
    const local = await device.records();
    expect(tasks.filter((id) => local.has(`tasks/${id}`))).toEqual(tasks);

    // The next sign-in of Alice (a new adapter object): the first batch goes again (duplicate), then the rest.
    await device.sync();
    expect(await onServer(tasks)).toBe(3);
  }, 60_000);
});

const optional = (type: string) => ({ type: [type, "null"] });
const schema = (fields: Record<string, object>, required: string[]) => ({
  version: 0,
  primaryKey: "id",
  type: "object",
  properties: { id: { type: "string", maxLength: 36 }, ...fields, server_version: optional("number") },
  required: ["id", ...required],
}) as never;

async function rxDatabase(): Promise<RxDatabase> {
  const db = await createRxDatabase({ name: `switch-${randomUUID()}`, storage: getRxStorageMemory() });
  await db.addCollections({
    lists: {
      schema: schema({ title: { type: "string" }, created_by: optional("string"), created_at: optional("string"), color: optional("string"), position: { type: "number" }, archived: { type: "boolean" } }, ["title"]),
      localDocuments: true,
    },
    tasks: {
      schema: schema({ list_id: { type: "string" }, title: { type: "string" }, done: { type: "boolean" }, position: { type: "number" }, notes: optional("string"), due_date: optional("string"), created_by: optional("string"), created_at: optional("string") }, ["list_id", "title"]),
      localDocuments: true,
    },
  });
  return db;
}

/** The app's replications of lists and tasks (one op per batch). */
function replicate(db: RxDatabase, p: Awaited<ReturnType<typeof phone>>, events: SyncEvent[] = []): RxdbTidesync[] {
  const order = new RxdbPushOrder(["lists", "tasks"]);
  return (["lists", "tasks"] as const).map((name) =>
    replicateTidesync({
      collection: db.collections[name] as RxCollection<Record<string, unknown>>,
      name,
      replicationIdentifier: `tidesync-${name}`,
      api: p.api,
      installationId: p.installationId,
      onEvent: (e) => events.push(e),
      order,
      retryTime: 50,
      maxOpsPerBatch: 1,
      backoff: { baseMs: 5, maxMs: 50, maxAttempts: 3 },
    })
  );
}

const insertTasks = (db: RxDatabase, user: TestUser, ids: string[]) =>
  db.collections.tasks.bulkInsert(ids.map((id, i) => ({ id, list_id: user.userId, title: `${user.userId} ${i}`, done: false, position: i })));

describe("WatermelonDB: the account is deleted and created again with the same id", () => {
  it("the earlier account's unsent writes are not pushed as the new account's: the sync is refused before any request, the database kept", async () => {
    const bob = await createTestUser();
    const p = await phone(bob);
    const events: SyncEvent[] = [];
    const device = await watermelonDevice({ name: `reborn-${randomUUID()}`, api: p.api, installationId: p.installationId, onEvent: (e) => events.push(e) });
    await device.sync();
    const tasks = taskIds();
    for (const [i, id] of tasks.entries()) await device.write("tasks", id, { list_id: bob.userId, title: `old account ${i}`, done: false, position: i });

    await adminSql`delete from auth.users where id = ${bob.userId}`;
    const reborn = await createTestUser({ userId: bob.userId });
    await p.signIn(reborn);
    p.sent.length = 0;
    await expect(device.sync()).rejects.toMatchObject({ code: "STORE_OF_EARLIER_ACCOUNT", userId: bob.userId });
    expect(p.sent).toEqual([]);
    expect(await onServer(tasks)).toBe(0);
    const local = await device.records();
    expect(tasks.filter((id) => local.has(`tasks/${id}`))).toEqual(tasks);
    expect(local.has(`lists/${bob.userId}`)).toBe(true);
    expect(events).toEqual([]);
  }, 60_000);
});

describe("RxDB: the user switches while a push of the first user's database runs", () => {
  it("cancel() on sign-out stops the push under way: no request after it; the unsent ops go out when the user is back", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const p = await phone(alice);
    const db = await rxDatabase();
    const events: SyncEvent[] = [];
    const replications = replicate(db, p, events);
    for (const r of replications) await r.awaitInSync();
    let sentBeforeCancel = 0;
    let cancelled: Promise<unknown> | null = null;
    p.afterFirstBatch(() => {
      sentBeforeCancel = p.sent.length;
      cancelled = Promise.all(replications.map((r) => r.state.cancel()));
    });
    const tasks = taskIds();
    await insertTasks(db, alice, tasks);
    await until("the first batch answered", () => cancelled !== null);
    await cancelled;
    expect(p.sent.length).toBe(sentBeforeCancel);
    await p.signIn(bob);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(p.sent.length).toBe(sentBeforeCancel);
    expect(await onServer(tasks)).toBeLessThanOrEqual(1);

    // Alice back, new replications of her database: what was not answered goes out.
    await p.signIn(alice);
    const again = replicate(db, p, events);
    for (const r of again) await r.awaitInSync();
    expect(await onServer(tasks)).toBe(3);
    expect(events.filter((e) => e.type === "op_rejected")).toEqual([]);
    expect(p.sent.filter((request) => request.as === bob.userId)).toEqual([]);
    await db.close();
  }, 60_000);

  it("replications left running send nothing under the next user's token (STORE_OF_ANOTHER_USER on error$), and go on when the first user is back", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const p = await phone(alice);
    const db = await rxDatabase();
    const replications = replicate(db, p);
    for (const r of replications) await r.awaitInSync();
    const errors: unknown[] = [];
    for (const r of replications) r.state.error$.subscribe((error) => errors.push(error));
    p.afterFirstBatch(() => p.signIn(bob));
    const tasks = taskIds();
    await insertTasks(db, alice, tasks);
    await until("a refusal on error$", () => errors.length > 0);
    replications[1].state.reSync();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(p.sent.filter((request) => request.as === bob.userId)).toEqual([]);
    expect(causes(errors)).toContain("STORE_OF_ANOTHER_USER");
    expect(await onServer(tasks)).toBe(1);

    await p.signIn(alice);
    await replications[1].awaitInSync();
    expect(await onServer(tasks)).toBe(3);
    await db.close();
  }, 60_000);

  it("an account deleted and created again with the same id: new replications of the earlier account's database send nothing (STORE_OF_EARLIER_ACCOUNT on error$)", async () => {
    const bob = await createTestUser();
    const p = await phone(bob);
    const db = await rxDatabase();
    const first = replicate(db, p);
    for (const r of first) await r.awaitInSync();
    await Promise.all(first.map((r) => r.state.cancel()));
    const tasks = taskIds();
    await insertTasks(db, bob, tasks);

    await adminSql`delete from auth.users where id = ${bob.userId}`;
    const reborn = await createTestUser({ userId: bob.userId });
    await p.signIn(reborn);
    p.sent.length = 0;
    const again = replicate(db, p);
    const errors: unknown[] = [];
    for (const r of again) r.state.error$.subscribe((error) => errors.push(error));
    await until("a refusal on error$", () => errors.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(causes(errors)).toContain("STORE_OF_EARLIER_ACCOUNT");
    expect(p.sent).toEqual([]);
    expect(await onServer(tasks)).toBe(0);
    expect((await db.collections.tasks.findByIds(tasks).exec()).size).toBe(3);
    await Promise.all(again.map((r) => r.state.cancel()));
    await db.close();
  }, 60_000);

  it("cancel() between a push answer and the pull that delivers its correction: nothing rejects unhandled", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const alice = await createTestUser();
      const p = await phone(alice);
      const db = await rxDatabase();
      let cancelled: Promise<unknown> | null = null;
      const replication: RxdbTidesync = replicateTidesync({
        collection: db.collections.tasks as RxCollection<Record<string, unknown>>,
        name: "tasks",
        replicationIdentifier: "tidesync-tasks",
        api: p.api,
        installationId: p.installationId,
        order: new RxdbPushOrder(["tasks"]),
        retryTime: 50,
        // The user signs out as soon as the app is told of a refused write.
        onEvent: (e) => {
          if (e.type === "op_rejected") cancelled ??= replication.state.cancel();
        },
      });
      await replication.awaitInSync();
      // A task of a list that does not exist: NOT_FOUND, a correction to deliver.
      await db.collections.tasks.insert({ id: randomUUID(), list_id: randomUUID(), title: "x", done: false, position: 0 });
      await until("the refused write told (op_rejected)", () => cancelled !== null);
      await cancelled;
      await new Promise((resolve) => setTimeout(resolve, 300));
      await db.close();
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  }, 60_000);
});
