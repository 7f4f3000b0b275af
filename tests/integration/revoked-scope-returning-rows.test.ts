// A removed member's next pull removes every row that was in the list before
// they lost it, also a row that left the list and came back meanwhile (its
// change entry must still say it was there before the removal). What stays on
// their device is their own: the personal list and their membership of it.
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { createTestUser } from "../support/harness.ts";
import { applyChanges, personalKeys, pullAll, pushOk, removeMember, settled, share, upsert } from "../support/shared-lists.ts";

it("a row that moved out of the list and back after the member was removed is removed from their device too", async () => {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const list = randomUUID();
  const task = randomUUID();
  const created = await pushOk(alice, { ops: [upsert("lists", list, { title: "Trip" }), upsert("tasks", task, { list_id: list, title: "tickets" })] });
  await share(alice, list, bob, "editor");
  await settled();
  const bobView = await pullAll(bob);
  const local = applyChanges(new Map(), bobView.changes);
  expect(local.has(`tasks/${task}`)).toBe(true);

  await removeMember(alice, list, bob);
  const away = await pushOk(alice, { ops: [upsert("tasks", task, { list_id: alice.userId }, created.results[1].record!.version)] });
  await pushOk(alice, { ops: [upsert("tasks", task, { list_id: list }, away.results[0].record!.version)] });

  await settled();
  applyChanges(local, (await pullAll(bob, bobView.cursor)).changes);
  expect([...local.keys()].sort()).toEqual(await personalKeys(bob));
});
