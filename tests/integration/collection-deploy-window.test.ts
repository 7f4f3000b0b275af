// A deploy that adds a synced collection, through two real function servers on one database
// (docs/versioning.md, "A synced table's columns and the function go in order"): the "old"
// one generated before the migration that makes public.tidesync_test_notes syncable, the "new" one after it.
// Between the two, a device pulling through the old function must not be moved past the new
// collection's rows for good, and a cursor the new function issued must not be followed by the
// old one (a rolling deploy) into listing them as removals.
import { randomUUID } from "node:crypto";
import { afterEach, expect, it } from "vitest";
import { type ApiResponse, call } from "../support/harness.ts";
import { untilOpenTransactionsEnd } from "../support/open-transactions.ts";
import { likeTasks, type ProbeStack, type ProbeUser, startProbeStack } from "../support/probe-stack.ts";

interface Change {
  collection: string;
  id: string;
  deleted: boolean;
  data: { body?: string } | null;
}

let probe: ProbeStack | undefined;
afterEach(async () => {
  await probe?.stop();
  probe = undefined;
});

/** A stack whose first ("old") server was generated while public.tidesync_test_notes existed but was not synced yet. */
async function beforeTheMigration(name: string): Promise<ProbeStack> {
  probe = await startProbeStack(name, [
    `create table public.tidesync_test_notes (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade, body text)`,
    ...likeTasks("tidesync_test_notes", ["body"]),
  ]);
  return probe;
}

async function pull(baseUrl: string, user: ProbeUser, cursor?: string, limit?: number): Promise<ApiResponse<{ changes: Change[]; cursor: string; has_more: boolean }>> {
  const query = [cursor && `cursor=${cursor}`, limit && `limit=${limit}`].filter(Boolean).join("&");
  return await call(`/v1/sync/changes${query ? `?${query}` : ""}`, { token: user.token, baseUrl });
}

const notesOf = (response: ApiResponse<{ changes: Change[] }>) =>
  response.body.changes.filter((c) => c.collection === "tidesync_test_notes").map((c) => [c.deleted, c.data?.body ?? null]);

const insertNote = async (stack: ProbeStack, user: ProbeUser, body: string) =>
  await stack.admin.unsafe(`insert into public.tidesync_test_notes (id, list_id, body) values ($1, $2, $3)`, [randomUUID(), user.userId, body]);

it("a device that pulls through the old function between the migration and the deploy gets 410 from the new one, not a cursor past the new rows", async () => {
  const stack = await beforeTheMigration("deploy_window");
  const old = stack.apiUrl;
  const pulling = await stack.newUser();
  const away = await stack.newUser();
  const starting = await stack.newUser();
  for (const user of [pulling, away, starting]) await insertNote(stack, user, "there before the migration");
  const pullingStart = await pull(old, pulling);
  const awayStart = await pull(old, away);
  expect([pullingStart.status, awayStart.status]).toEqual([200, 200]);

  // The migration: existing rows become entries, then a row is written (as through the Data API).
  await stack.admin.unsafe(`select app_private.enable_sync('public.tidesync_test_notes', 'list_id')`);
  for (const user of [pulling, away, starting]) await insertNote(stack, user, "written before the deploy");

  // The old function lists nothing of a collection it does not know (never a removal of its rows).
  // (A pull reads below the cluster's oldest open transaction: past the notes once those end.)
  await untilOpenTransactionsEnd(stack.admin);
  const during = await pull(old, pulling, pullingStart.body.cursor);
  expect(during.status, during.text).toBe(200);
  expect(notesOf(during)).toEqual([]);
  // A full sync's first page: its membership, its list and, unlisted, a note (one more row to go).
  const firstPage = await pull(old, starting, undefined, 3);
  expect(firstPage.body.changes.map((c) => c.collection)).toEqual(["list_members", "lists"]);
  expect(firstPage.body.has_more).toBe(true);

  // The deploy. That cursor passed the notes' entries unlisted: the device must pull from scratch.
  const fresh = (await stack.startServer()).apiUrl;
  const after = await pull(fresh, pulling, during.body.cursor);
  expect(after.status, after.text).toBe(410);
  expect(after.body).toMatchObject({ error: { code: "RESYNC_REQUIRED" } });
  expect(after.text).toContain("tidesync_test_notes");
  const full = await pull(fresh, pulling);
  expect(notesOf(full).sort()).toEqual([[false, "there before the migration"], [false, "written before the deploy"]]);
  const nextPage = await pull(fresh, starting, firstPage.body.cursor, 3);
  expect(nextPage.status, nextPage.text).toBe(410);
  expect(nextPage.text).toContain("tidesync_test_notes");

  // A device that did not pull during the window keeps its cursor: the notes arrive incrementally.
  await untilOpenTransactionsEnd(stack.admin);
  const caughtUp = await pull(fresh, away, awayStart.body.cursor);
  expect(caughtUp.status, caughtUp.text).toBe(200);
  expect(notesOf(caughtUp).sort()).toEqual([[false, "there before the migration"], [false, "written before the deploy"]]);
}, 180_000);

it("a cursor the new function issued is not followed by the old one during a rolling deploy (503, kept), and is once the collection is no longer synced", async () => {
  const stack = await beforeTheMigration("deploy_rolling");
  const old = stack.apiUrl;
  await stack.admin.unsafe(`select app_private.enable_sync('public.tidesync_test_notes', 'list_id')`);
  const fresh = (await stack.startServer()).apiUrl;
  const user = await stack.newUser();
  await insertNote(stack, user, "synced");
  await untilOpenTransactionsEnd(stack.admin);
  const start = await pull(fresh, user);
  expect(notesOf(start)).toEqual([[false, "synced"]]);
  await insertNote(stack, user, "written since");

  // An instance still running the old function: neither a page without the notes (its cursor would
  // pass them) nor their rows as removals, nor a 400/410 that would make the device start over.
  const onOld = await pull(old, user, start.body.cursor);
  expect(onOld.status, onOld.text).toBe(503);
  expect(onOld.body).toMatchObject({ error: { code: "UNAVAILABLE" } });
  expect(onOld.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
  await untilOpenTransactionsEnd(stack.admin);
  const onFresh = await pull(fresh, user, start.body.cursor);
  expect(onFresh.status, onFresh.text).toBe(200);
  expect(notesOf(onFresh)).toEqual([[false, "written since"]]);

  // A collection the database no longer syncs (the down step ran): the old function is the one in
  // step, and a cursor that named it works there.
  await stack.admin.unsafe(`select app_private.disable_sync('public.tidesync_test_notes')`);
  const resynced = await pull(fresh, user);
  const kept = await pull(old, user, resynced.body.cursor);
  expect(kept.status, kept.text).toBe(200);
}, 180_000);
