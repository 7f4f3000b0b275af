// reSync() then awaitInSync() (client/README.md) asked while a push is on its
// way back: RxDB holds the pull it asks for until the push is recorded; the
// wait ends only once that pull has run and brought another device's change
// of the pushed record (merged by the server with the push).
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { FetchFunction } from "../../client/api-client.ts";
import { clientDevice } from "../support/client-device.ts";
import { adminSql, createTestUser } from "../support/harness.ts";
import { rxdbTasksDevice } from "../support/rxdb-tasks-device.ts";
import { settled } from "../support/shared-lists.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it("reSync() and awaitInSync() asked while a push's answer is on its way end with the other device's change shown", async () => {
  const alice = await createTestUser();
  let holdPush = false;
  let answered = false;
  // The push's answer is held until the test has asked reSync() and awaitInSync() (however long the waits before take).
  let answer!: () => void;
  const answerMayGo = new Promise<void>((resolve) => (answer = resolve));
  const fetch: FetchFunction = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    if (holdPush && String(input).includes("/v1/sync/batch")) {
      holdPush = false;
      await answerMayGo;
      answered = true;
    }
    return response;
  };
  const { tasks, replication, sync, close } = await rxdbTasksDevice(alice, fetch);
  const other = await clientDevice(alice);
  try {
    const task = randomUUID();
    await tasks.insert({ id: task, list_id: alice.userId, title: "Milk", notes: null, done: false, position: 1 });
    await sync();
    await sync();
    await other.client.sync();
    await other.client.upsert("tasks", task, { done: true });
    await other.client.sync();
    await settled();

    holdPush = true;
    await (await tasks.findOne(task).exec())!.incrementalPatch({ title: "Milk, 2 litres" });
    // The push is committed; its answer is still on its way.
    for (const deadline = Date.now() + 30_000; (await adminSql`select 1 from public.tasks where id = ${task} and title = 'Milk, 2 litres'`).length === 0;) {
      if (Date.now() > deadline) throw new Error("the push never reached the server (30 s)");
      await sleep(10);
    }
    await settled();
    expect(answered).toBe(false);
    replication.state.reSync();
    const inSync = replication.awaitInSync();
    // The answer arrives while the pull reSync() asked for is held (the wait is for nothing to observe: only a later arrival).
    await sleep(300);
    answer();
    await inSync;
    expect(answered).toBe(true);
    const local = (await tasks.findOne(task).exec())!.toJSON() as Record<string, unknown>;
    expect({ title: local.title, done: local.done }).toEqual({ title: "Milk, 2 litres", done: true });
  } finally {
    answer();
    await close();
  }
}, 60_000);
