// The real client (client/) against real Deno + Postgres: writes made offline
// reach the server in the order the app made them. The server runs a batch's
// ops in request order (docs/sync.md), so an edit that points a record at one
// created after the record's earlier queued op must not be merged into that op:
// it would go before its target exists and be refused, the record lost with it.
// Nor may a list's delete share a batch with, or go before, the op rebased from
// a refused move out of it: its cascade would take the record.
import { describe, expect, it } from "vitest";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { clientDevice } from "../support/client-device.ts";
import { settled } from "../support/shared-lists.ts";

const phone = (user: TestUser) => clientDevice(user);

async function taskRow(id: string) {
  const [row] = await adminSql<{ list_id: string; title: string }[]>`select list_id, title from public.tasks where id = ${id}`;
  return row;
}

describe("the client's writes reach the server in the app's order", () => {
  it("a task created offline, then a new list, then the task moved to it: both are on the server", async () => {
    const alice = await createTestUser();
    const { client, events } = await phone(alice);
    // Offline: nothing has been synced yet; the personal list's id is the user's id.
    const task = await client.create("tasks", { list_id: alice.userId, title: "Pack" });
    const trip = await client.create("lists", { title: "Trip" });
    await client.upsert("tasks", task, { list_id: trip });

    const report = await client.sync();
    expect(report).toMatchObject({ rejected: 0, conflicts: 0 });
    expect(events.filter((event) => event.type === "write_discarded" || event.type === "op_rejected")).toEqual([]);
    expect(await taskRow(task)).toEqual({ list_id: trip, title: "Pack" });
    expect(await client.get("tasks", task)).toMatchObject({ pending: false, data: { list_id: trip, title: "Pack" } });
  });

  it("a synced task renamed offline, then a new list, then the task moved to it: the rename and the move are on the server", async () => {
    const alice = await createTestUser();
    const { client, events } = await phone(alice);
    const task = await client.create("tasks", { list_id: alice.userId, title: "Call the bank" });
    await client.sync();

    await client.upsert("tasks", task, { title: "Call the bank about the loan" });
    const errands = await client.create("lists", { title: "Errands" });
    await client.upsert("tasks", task, { list_id: errands });

    const report = await client.sync();
    expect(report).toMatchObject({ rejected: 0, conflicts: 0 });
    expect(events.filter((event) => event.type === "write_discarded" || event.type === "op_rejected")).toEqual([]);
    expect(await taskRow(task)).toEqual({ list_id: errands, title: "Call the bank about the loan" });
    expect(await client.get("tasks", task)).toMatchObject({ pending: false, data: { list_id: errands, title: "Call the bank about the loan" } });
  });

  it("a synced list renamed offline, its task moved out, then the list deleted: the task survives where it was moved", async () => {
    const alice = await createTestUser();
    const { client, events } = await phone(alice);
    const old = await client.create("lists", { title: "Old" });
    const task = await client.create("tasks", { list_id: old, title: "Keep me" });
    await client.sync();

    await client.upsert("lists", old, { title: "Old (to delete)" });
    await client.upsert("tasks", task, { list_id: alice.userId });
    await client.delete("lists", old);

    const report = await client.sync();
    expect(report).toMatchObject({ rejected: 0, conflicts: 0 });
    expect(events.filter((event) => event.type === "write_discarded" || event.type === "op_rejected" || event.type === "conflict")).toEqual([]);
    expect(await taskRow(task)).toEqual({ list_id: alice.userId, title: "Keep me" });
    expect(await adminSql`select 1 from public.lists where id = ${old}`).toHaveLength(0);
    expect(await client.get("tasks", task)).toMatchObject({ pending: false, data: { list_id: alice.userId, title: "Keep me" } });
    expect((await client.list("lists")).map((list) => list.id)).not.toContain(old);
  });

  // Another device renamed the task meanwhile: the op carrying the move conflicts (on the title), so
  // nothing of it is applied, the move neither. The list's delete must wait for the rebased op (the
  // move, without the title): sent with that op, or behind it, its cascade takes the task.
  for (const merged of [false, true]) {
    it(`a task moved to a new list${merged ? " (two writes, one op)" : ""} while another device renames it, then its old list deleted: the task is kept in the new list`, async () => {
      const alice = await createTestUser();
      const { client: phoneClient, events } = await phone(alice);
      const { client: tablet, events: tabletEvents } = await phone(alice);
      const l1 = await phoneClient.create("lists", { title: "L1" });
      const task = await phoneClient.create("tasks", { list_id: l1, title: "T" });
      await phoneClient.sync();
      await settled(); // a pull stops below the cluster's oldest open transaction (other files' writers)
      await tablet.sync();

      const l2 = await phoneClient.create("lists", { title: "L2" });
      if (merged) {
        await phoneClient.upsert("tasks", task, { title: "Keep me (phone)" });
        await phoneClient.upsert("tasks", task, { list_id: l2 });
      } else {
        await phoneClient.upsert("tasks", task, { title: "Keep me (phone)", list_id: l2 });
      }
      await phoneClient.delete("lists", l1);
      expect(phoneClient.pendingOps().map(({ op }) => [op.collection, op.type])).toEqual([["lists", "upsert"], ["tasks", "upsert"], ["lists", "delete"]]);
      await tablet.upsert("tasks", task, { title: "Renamed (tablet)" });
      await tablet.sync();

      await phoneClient.sync();
      // The title is the tablet's (server wins on the field it changed); the move is the phone's.
      expect(await taskRow(task)).toEqual({ list_id: l2, title: "Renamed (tablet)" });
      expect(await adminSql`select 1 from public.lists where id = ${l1}`).toHaveLength(0);
      const conflicts = events.filter((event) => event.type === "conflict");
      expect(conflicts).toHaveLength(1);
      expect(conflicts[0]).toMatchObject({ resolution: { type: "upsert", data: { list_id: l2 } } });
      expect(events.filter((event) => event.type === "write_discarded").map((event) => event.type === "write_discarded" && event.fields)).toEqual([["title"]]);
      expect(events.filter((event) => event.type === "op_rejected")).toEqual([]);
      expect(phoneClient.pendingOps()).toEqual([]);
      expect(await phoneClient.get("tasks", task)).toMatchObject({ pending: false, data: { list_id: l2, title: "Renamed (tablet)" } });

      await settled();
      await tablet.sync();
      expect(await tablet.get("tasks", task)).toMatchObject({ pending: false, data: { list_id: l2, title: "Renamed (tablet)" } });
      expect(tabletEvents).toEqual([]);
    });
  }

  it("a task created offline in a synced list, then the list deleted: the device keeps neither, as the server and its pulls", async () => {
    const alice = await createTestUser();
    const { client, events } = await phone(alice);
    const list = await client.create("lists", { title: "Short-lived" });
    await client.sync();

    const task = await client.create("tasks", { list_id: list, title: "Never stored" });
    await client.upsert("tasks", task, { title: "Never stored (edited)" });
    await client.delete("lists", list);
    const report = await client.sync();
    expect(report).toMatchObject({ rejected: 0, conflicts: 0 });
    expect(events.filter((event) => event.type === "write_discarded" || event.type === "op_rejected" || event.type === "conflict")).toEqual([]);
    expect(await taskRow(task)).toBeUndefined();
    // The list's delete took the task with it: the device holds no copy, nor a version the server never had.
    expect(await client.get("tasks", task)).toBeUndefined();
    expect(await client.list("tasks")).toEqual([]);
    await client.sync();
    expect(await client.get("tasks", task)).toBeUndefined();
  });
});
