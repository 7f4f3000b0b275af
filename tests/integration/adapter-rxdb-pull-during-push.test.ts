// A RxDB pull whose page is read while a push is on its way back: RxDB skips
// a pulled document that still differs from the master state it assumes (the
// push not yet recorded), and moves its checkpoint past it. The pull handler
// returned a full page (more to come) without waiting for the push, so a page
// read after the push's commit, holding the record's new state (another
// device's edit of another field merged with this one), was skipped; the
// push's answer then made RxDB assume the device's own document as the
// master's: the other device's edit and the new version never reached the
// device, by any later pull. Nor may they be lost when the app is killed as
// the push stores its corrections (the page's records among them): the push
// that completes it after the restart hands them over.
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { FetchFunction } from "../../client/api-client.ts";
import { clientDevice } from "../support/client-device.ts";
import { createTestUser } from "../support/harness.ts";
import { rxdbTasksDevice } from "../support/rxdb-tasks-device.ts";
import { settled } from "../support/shared-lists.ts";
import { visibleTo } from "../support/rls-view.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const killed of [false, true]) {
it(`a RxDB pull whose full page is read while a push is under way ends with the server's record${killed ? ", the app killed as the push stored its corrections" : ""}`, async () => {
  const alice = await createTestUser();
  /** Set for the race: how the device's next requests are delayed. */
  let hook: ((url: string, init: RequestInit | undefined) => Promise<Response>) | null = null;
  const fetch: FetchFunction = (input, init) => (hook ? hook(String(input), init as RequestInit) : globalThis.fetch(input, init));
  const device = await rxdbTasksDevice(alice, fetch);
  const { tasks, sync, close } = device;
  const other = await clientDevice(alice);
  try {
    const task = randomUUID();
    await tasks.insert({ id: task, list_id: alice.userId, title: "Milk", notes: null, done: false, position: 1 });
    await sync();
    await sync();
    await other.client.sync();
    await other.client.upsert("tasks", task, { title: "Milk, 2 litres" });
    await other.client.sync();

    // A pull starts; its first request waits for the push below to be committed, and for
    // more changes of the other device (a full page, more to come). The push's answer comes
    // back only once that page is read.
    let committed!: () => void;
    const pushCommitted = new Promise<void>((resolve) => (committed = resolve));
    let read!: () => void;
    const pageRead = new Promise<void>((resolve) => (read = resolve));
    let pullHeld = true;
    let pushHeld = true;
    hook = async (url, init) => {
      if (url.includes("/v1/sync/changes") && pullHeld) {
        pullHeld = false;
        await pushCommitted;
        for (let i = 0; i < 25; i++) await other.client.create("tasks", { list_id: alice.userId, title: `other ${i}` });
        await other.client.sync();
        await settled();
        const response = await globalThis.fetch(url, init);
        read();
        return response;
      }
      if (url.includes("/v1/sync/batch") && pushHeld) {
        pushHeld = false;
        const response = await globalThis.fetch(url, init);
        committed();
        await pageRead;
        await sleep(300);
        return response;
      }
      return globalThis.fetch(url, init);
    };
    // Killed: as the adapter stores the push's corrections (the record the page listed among them), RxDB not told.
    const upsertLocal = tasks.upsertLocal;
    const kill = new Promise<void>((resolve) => {
      if (!killed) return;
      tasks.upsertLocal = function (this: typeof tasks, id: string, data: unknown) {
        if (id !== "tidesync.corrections") return upsertLocal.call(this, id, data);
        tasks.upsertLocal = upsertLocal;
        void device.replication.state.cancel();
        resolve();
        return Promise.reject(new Error("the app was killed"));
      } as typeof upsertLocal;
    });
    await settled();
    device.replication.state.reSync();
    await (await tasks.findOne(task).exec())!.incrementalPatch({ notes: "the usual brand" });
    if (killed) {
      await kill;
      await device.restart();
      await sync();
    } else await device.replication.awaitInSync();
    hook = null;
    expect([pullHeld, pushHeld]).toEqual([false, false]);

    await sync();
    await sync();
    const server = (await visibleTo(alice, ["tasks"])).get(`tasks/${task}`)!;
    expect(server.data).toMatchObject({ title: "Milk, 2 litres", notes: "the usual brand" });
    const local = (await tasks.findOne(task).exec())!.toJSON() as Record<string, unknown>;
    expect({ title: local.title, notes: local.notes, version: local.server_version }).toEqual({ title: "Milk, 2 litres", notes: "the usual brand", version: server.version });
    expect(await tasks.count().exec()).toBe(26);
  } finally {
    await close();
  }
}, 60_000);
}
