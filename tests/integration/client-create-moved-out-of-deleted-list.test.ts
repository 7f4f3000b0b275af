// A task created offline in a shared list, then moved to the user's own list,
// while the list's owner deletes the shared list. The create comes back
// NOT_FOUND on its list_id (the list is gone) and nothing of it is applied;
// the move, queued behind another record's write, is an op of its own, with
// no base (the task was new on this device) and only list_id. It used to be
// sent as it was: a create without a title, refused VALIDATION_FAILED, the
// task lost although the user saw it in their own list; or, with one op per
// batch, not sent at all: the NOT_FOUND (about the list, not the task) was
// taken for a task the user cannot see, and its later ops were dropped.
import { describe, expect, it } from "vitest";
import { clientDevice } from "../support/client-device.ts";
import { adminSql, createTestUser } from "../support/harness.ts";
import { settled, share } from "../support/shared-lists.ts";

describe("a task created offline in a shared list, then moved to the user's own list, while the owner deletes the shared list", () => {
  for (const maxOpsPerBatch of [undefined, 1]) {
    it(`ends up in the user's list with everything they wrote${maxOpsPerBatch ? " (one op per batch)" : ""}`, async () => {
      const alice = await createTestUser();
      const bob = await createTestUser();
      const A = await clientDevice(alice);
      const B = await clientDevice(bob, { maxOpsPerBatch });
      const shared = await A.client.create("lists", { title: "Shared" });
      await A.client.sync();
      await share(alice, shared, bob, "editor");
      await settled();
      await B.client.sync();
      const other = await B.client.create("tasks", { list_id: bob.userId, title: "other" });
      await B.client.sync();
      // Offline: a task in the shared list, another task's edit (so the move is an op of its own), the move.
      const task = await B.client.create("tasks", { list_id: shared, title: "Buy cake", notes: "chocolate" });
      await B.client.upsert("tasks", other, { done: true });
      await B.client.upsert("tasks", task, { list_id: bob.userId });
      const seen = (await B.client.get("tasks", task))?.data;
      expect(seen).toMatchObject({ list_id: bob.userId, title: "Buy cake", notes: "chocolate" });
      await A.client.delete("lists", shared);
      await A.client.sync();
      await settled();

      await B.client.sync();
      await settled();
      await B.client.sync();
      expect(await adminSql`select list_id, title, notes from public.tasks where id = ${task}`).toEqual([{ list_id: bob.userId, title: "Buy cake", notes: "chocolate" }]);
      expect(await adminSql`select done from public.tasks where id = ${other}`).toEqual([{ done: true }]);
      expect((await B.client.get("tasks", task))?.data).toMatchObject(seen!);
      expect(B.client.pendingOps()).toEqual([]);
      // The create in the shared list was refused (the list is gone), and the app is told; nothing the user sees was lost.
      expect(B.events.filter((e) => e.type === "write_discarded")).toEqual([]);
      expect(B.events.flatMap((e) => (e.type === "op_rejected" ? [[e.error.code, e.error.details?.[0]?.field, e.dropped]] : []))).toEqual([["NOT_FOUND", "/ops/0/data/list_id", false]]);
    }, 60_000);
  }
});
