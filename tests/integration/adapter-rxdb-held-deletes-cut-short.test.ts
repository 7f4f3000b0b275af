// RxDB's held-back deletes go in one send of their own, children first
// (client/adapters/rxdb/push-order.ts). A send cut short by the network leaves
// its unanswered deletes for the next send of them: the collection's own push,
// running meanwhile, must not send them (out of their order), or the next
// send sends them again and the app is told each answer twice.
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { FetchFunction } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import { taskOnServer } from "../support/client-device.ts";
import { createTestUser } from "../support/harness.ts";
import { rxdbTasksDevice } from "../support/rxdb-tasks-device.ts";
import { pushOk, settled, share, upsert } from "../support/shared-lists.ts";

const told = (events: SyncEvent[]) =>
  events.map((e) => e.type === "op_rejected" ? [e.type, e.error.code, e.op.record_id] : e.type === "write_discarded" ? [e.type, e.reason, e.record_id] : [e.type]);


async function until(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; !done(); i++) {
    if (i === 1000) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

it("a viewer's held-back delete whose send was cut short, and an edit of the collection pushed meanwhile: the delete goes once, by the send of the held deletes, told once", async () => {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const [list, shared, own] = [randomUUID(), randomUUID(), randomUUID()];
  await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" }), upsert("tasks", shared, { list_id: list, title: "Milk" })] });
  await share(alice, list, bob, "viewer");
  await settled();
  /** offline: every batch fails; heldOffline: only the sends of the held deletes (the batches they begin) fail. */
  let network: "online" | "offline" | "heldOffline" = "online";
  const log: string[] = [];
  const fetch: FetchFunction = async (input, init) => {
    if (String(input).includes("/v1/sync/batch")) {
      const ops = JSON.parse(String(init?.body)).ops as { type: string; record_id: string }[];
      const shape = ops.map((op) => `${op.type}:${op.record_id === shared ? "shared" : op.record_id === own ? "own" : "?"}`).join(",");
      if (network === "offline" || (network === "heldOffline" && ops[0]?.type === "delete")) {
        log.push(`failed ${shape}`);
        throw new TypeError("network down");
      }
      log.push(`sent ${shape}`);
    }
    return await globalThis.fetch(input, init);
  };
  const p = await rxdbTasksDevice(bob, fetch);
  await p.sync();
  await p.tasks.insert({ id: own, list_id: bob.userId, title: "Eggs", notes: null, done: false, position: 1 });
  await settled();
  await p.sync();

  network = "offline";
  // Held back, then its send fails; the collection's own push of the edit fails too.
  await (await p.tasks.findOne(shared).exec())!.remove();
  await until(() => log.includes("failed delete:shared"), "the held delete was tried");
  await (await p.tasks.findOne(own).exec())!.incrementalPatch({ title: "Eggs x12" });
  await until(() => log.some((line) => line.startsWith("failed") && line.includes("upsert:own")), "the edit was tried");
  // The edit's push gets through while the held delete's send still fails.
  network = "heldOffline";
  await until(() => log.some((line) => line.startsWith("sent") && line.includes("upsert:own")), "the edit was sent");
  network = "online";
  await settled();
  await p.sync();
  await settled();
  await p.sync();

  // (Before: the edit's push sent the delete first, from the outbox the cut-short send left, then the
  // send of the held deletes sent it again: refused and told twice.)
  expect(log.filter((line) => line.startsWith("sent") && line.includes("delete:shared"))).toEqual(["sent delete:shared"]);
  expect(await p.record(shared)).toEqual(await taskOnServer(alice, shared));
  expect((await p.record(own))?.data.title).toBe("Eggs x12");
  expect(told(p.events)).toEqual([["op_rejected", "FORBIDDEN", shared], ["write_discarded", "rejected", shared]]);
  await p.close();
}, 90_000);
