// A push's delete of a row the caller may delete but not update (a table whose
// DELETE policy is wider than its UPDATE policy: here any editor of the list
// deletes a note, only its author edits it). The push cannot lock such a row
// before it plans (row locks under RLS need the UPDATE policy), so an edit can
// commit between the batch's read and its delete. The delete removes only the
// row version it was planned against: the edit is kept and the delete answers
// `conflict` with the edited record, as the merge answers an edit it saw
// (docs/sync.md, "Merge rules"). Before, the edit was deleted with the row and
// the delete answered `applied`. A write of the same values meanwhile is a new
// row version too (no field changed): planned again, the delete applies, where
// it was refused FORBIDDEN when the push told a write by the sync version.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiResponse, call } from "../support/harness.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { type ProbeStack, type ProbeUser, startProbeStack } from "../support/probe-stack.ts";
import { remove, upsert } from "../support/shared-lists.ts";

let probe: ProbeStack;
const editor = `list_id in (select unnest(app_private.my_list_ids('editor')))`;
const member = `list_id in (select unnest(app_private.my_list_ids('viewer')))`;

beforeAll(async () => {
  probe = await startProbeStack("stale_delete", [
    `create table public.tidesync_test_notes (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade,
       body text, author uuid not null default auth.uid())`,
    `alter table public.tidesync_test_notes enable row level security`,
    `create policy "Editors add their notes" on public.tidesync_test_notes for insert to authenticated with check (${editor} and author = (select auth.uid()))`,
    `create policy "Authors edit their notes" on public.tidesync_test_notes for update to authenticated
       using (${editor} and author = (select auth.uid())) with check (${editor} and author = (select auth.uid()))`,
    `create policy "Editors delete any note" on public.tidesync_test_notes for delete to authenticated using (${editor})`,
    `create policy "Members read notes" on public.tidesync_test_notes for select to authenticated using (${member})`,
    `grant select, delete on public.tidesync_test_notes to authenticated`,
    `grant insert (id, list_id, body), update (id, body) on public.tidesync_test_notes to authenticated`,
    `select app_private.enable_sync('public.tidesync_test_notes', 'list_id')`,
  ]);
}, 120_000);

afterAll(async () => {
  await probe?.stop();
});

async function pushOps(user: ProbeUser, ops: unknown[]): Promise<ApiResponse> {
  const response = await call("/v1/sync/batch", { method: "POST", token: user.token, body: { ops }, baseUrl: probe.apiUrl });
  expect(response.status, response.text).toBe(200);
  return response;
}

async function body(note: string): Promise<string | undefined> {
  const [row] = await probe.admin<{ body: string }[]>`select body from public.tidesync_test_notes where id = ${note}`;
  return row?.body;
}

/** Alice's note in her list, Bob an editor there: he may delete the note, not edit it. */
async function aliceNoteBobMayDelete() {
  const [alice, bob] = [await probe.newUser(), await probe.newUser()];
  const list = randomUUID();
  const note = randomUUID();
  const created = await pushOps(alice, [upsert("lists", list, { title: "L" }), upsert("tidesync_test_notes", note, { list_id: list, body: "first" })]);
  await probe.admin`insert into public.list_members (list_id, user_id, role) values (${list}, ${bob.userId}, 'editor')`;
  const refused = await pushOps(bob, [upsert("tidesync_test_notes", note, { body: "by bob" }, created.body.results[1].record.version)]);
  expect(refused.body.results[0]).toMatchObject({ status: "rejected", error: { code: "FORBIDDEN" } });
  return { alice, bob, note, version: created.body.results[1].record.version as number };
}

describe("a delete of a row the caller may delete but not update", () => {
  it("an edit committed between the batch's read and its delete is kept: the delete answers conflict with the edited record", async () => {
    const { alice, bob, note, version } = await aliceNoteBobMayDelete();
    // Alice's edit (the Data API) runs and stays open; Bob's push reads the note as it was, plans its
    // delete, and its delete waits for her row; then she commits.
    const held = holdTransaction((tx) => tx`update public.tidesync_test_notes set body = 'edited by alice' where id = ${note}`, { as: alice, db: probe.admin });
    await held.ran;
    const pushing = pushOps(bob, [remove("tidesync_test_notes", note, version)]);
    try {
      await waitersOf(await held.pid);
    } finally {
      held.commit();
    }
    await held.done;
    const result = (await pushing).body.results[0];
    expect(await body(note)).toBe("edited by alice");
    expect(result).toMatchObject({ status: "conflict", conflicting_fields: ["body"], record: { id: note, deleted: false, data: { body: "edited by alice" } } });
    expect(result.record.version).toBeGreaterThan(version);
  }, 60_000);

  it("a write committed meanwhile that changes no field (the same values again) does not refuse the delete: it applies", async () => {
    const { alice, bob, note, version } = await aliceNoteBobMayDelete();
    // A new row version (xmin) with the same sync version: the delete of the version read matches
    // nothing, yet no DELETE policy refused it. Planned again, the merge sees no change.
    const held = holdTransaction((tx) => tx`update public.tidesync_test_notes set body = body where id = ${note}`, { as: alice, db: probe.admin });
    await held.ran;
    const pushing = pushOps(bob, [remove("tidesync_test_notes", note, version)]);
    try {
      await waitersOf(await held.pid);
    } finally {
      held.commit();
    }
    await held.done;
    const result = (await pushing).body.results[0];
    expect(result).toMatchObject({ status: "applied", record: { id: note, deleted: true } });
    expect(await body(note)).toBeUndefined();
  }, 60_000);

  it("a delete the DELETE policy refuses stays FORBIDDEN, also when a write of the same values commits meanwhile", async () => {
    const { alice, bob, note, version } = await aliceNoteBobMayDelete();
    await probe.admin`update public.list_members set role = 'viewer'
                       where user_id = ${bob.userId} and list_id = (select list_id from public.tidesync_test_notes where id = ${note})`;
    const held = holdTransaction((tx) => tx`update public.tidesync_test_notes set body = body where id = ${note}`, { as: alice, db: probe.admin });
    await held.ran;
    const pushing = pushOps(bob, [remove("tidesync_test_notes", note, version)]);
    // A viewer's delete matches no row the policy lets them delete: it waits for nothing, so the
    // write may commit before or after it; planned again or not, the policy refuses it.
    held.commit();
    await held.done;
    expect((await pushing).body.results[0]).toMatchObject({ status: "rejected", error: { code: "FORBIDDEN" }, record: { id: note, deleted: false, version } });
    expect((await pushOps(bob, [remove("tidesync_test_notes", note, version)])).body.results[0]).toMatchObject({ status: "rejected", error: { code: "FORBIDDEN" } });
    expect(await body(note)).toBe("first");
  }, 60_000);

  it("with no edit meanwhile, the delete applies", async () => {
    const { bob, note, version } = await aliceNoteBobMayDelete();
    const result = (await pushOps(bob, [remove("tidesync_test_notes", note, version)])).body.results[0];
    expect(result).toMatchObject({ status: "applied", record: { id: note, deleted: true } });
    expect(await body(note)).toBeUndefined();
  }, 60_000);
});
