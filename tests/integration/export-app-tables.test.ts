// An app's own synced table is in the data export without a line of
// TypeScript: made syncable in a migration and read by `npm run generate`
// (readSyncCollections), its rule comes from the table (exportRules), and the
// export holds the caller's rows of it and nobody else's. One table has a
// created_by column (its rows are the caller's when it names them), one has
// none (the rows whose sync state names the caller as creator: the user whose
// write inserted them, or the list's owner once their creator left the list). Both are made in a transaction rolled back afterwards,
// in which the export is written as the caller, under RLS, as the route does.
import { randomUUID } from "node:crypto";
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { accountExportSchema } from "../../functions/_shared/schemas/account-export.ts";
import type { GeneratedCollection } from "../../functions/_shared/sync-collection-types.ts";
import { SYNC_COLLECTIONS } from "../../functions/_shared/sync-collections.generated.ts";
import { exportRules } from "../../functions/api/account/export-ownership.ts";
import { writeExport } from "../../functions/api/account/export-store.ts";
import type { Tx } from "../../functions/api/lib/db.ts";
import { readSyncCollections } from "../../scripts/generate/sync-collections.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";

const APP_TABLES = [
  `create table public.tidesync_test_export_gadgets (
     id uuid primary key default gen_random_uuid(),
     list_id uuid not null references public.lists (id) on delete cascade,
     label text not null,
     created_by uuid default auth.uid() references auth.users (id) on delete set null)`,
  `create table public.tidesync_test_export_notes (
     id uuid primary key default gen_random_uuid(),
     list_id uuid not null references public.lists (id) on delete cascade,
     body text not null)`,
  ...["tidesync_test_export_gadgets", "tidesync_test_export_notes"].flatMap((table) => [
    `alter table public.${table} enable row level security`,
    `revoke all on public.${table} from public, anon, authenticated, service_role`,
    `grant select, delete on public.${table} to authenticated`,
    `grant insert (id, list_id, ${table === "tidesync_test_export_gadgets" ? "label" : "body"}) on public.${table} to authenticated`,
    `create policy "Members can read the ${table} of their lists" on public.${table} for select to authenticated
       using (list_id in (select unnest(app_private.my_list_ids('viewer'))))`,
    `create policy "Editors can add ${table} to their lists" on public.${table} for insert to authenticated
       with check (list_id in (select unnest(app_private.my_list_ids('editor'))))`,
    `select app_private.enable_sync('public.${table}', 'list_id')`,
  ]),
];

async function asUser(tx: Tx, user: TestUser | null): Promise<void> {
  if (user) {
    await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: user.userId, role: "authenticated", session_id: user.sessionId })}, true),
                    set_config('role', 'authenticated', true)`;
  } else {
    await tx`reset role`;
    await tx`select set_config('request.jwt.claims', '', true)`;
  }
}

async function exportAs(tx: Tx, user: TestUser, collections: readonly GeneratedCollection[]) {
  await asUser(tx, user);
  let text = "";
  await writeExport(tx, { userId: user.userId, sessionId: user.sessionId }, async (chunk) => {
    text += chunk;
  }, exportRules(collections));
  await asUser(tx, null);
  return accountExportSchema.parse(JSON.parse(text));
}

const ids = (rows: Record<string, unknown>[] | undefined) => (rows ?? []).map((r) => r.id as string).sort();

describe("the data export of an app's own synced tables", () => {
  it("holds the caller's rows of each, by its created_by column or by the creator in its sync state, and nobody else's", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const shared = randomUUID();
    const [aliceGadget, alicePersonalGadget, bobGadget, aliceNote, bobNote, adminNote] = Array.from({ length: 6 }, () => randomUUID());
    const rollback = new Error("rolled back on purpose");
    let checked = false;
    await adminSql.begin(async (sql) => {
      const tx = sql as unknown as Tx;
      for (const statement of APP_TABLES) await tx.unsafe(statement);
      const generated = (await readSyncCollections(sql as unknown as postgres.Sql)).filter((c) => c.name.startsWith("tidesync_test_export_"));
      expect(generated.map((c) => [c.name, c.owner_column])).toEqual([["tidesync_test_export_gadgets", "created_by"], ["tidesync_test_export_notes", null]]);
      const collections = [...SYNC_COLLECTIONS, ...generated];

      // Alice's list, shared with Bob as editor; both write in it, Alice in her personal list too.
      await asUser(tx, alice);
      await tx`insert into public.lists (id, title) values (${shared}, 'Shared with Bob')`;
      await asUser(tx, null);
      await tx`insert into public.list_members (list_id, user_id, role) values (${shared}, ${bob.userId}, 'editor')`;
      await asUser(tx, alice);
      await tx`insert into public.tidesync_test_export_gadgets (id, list_id, label) values (${aliceGadget}, ${shared}, 'alice'), (${alicePersonalGadget}, ${alice.userId}, 'mine')`;
      await tx`insert into public.tidesync_test_export_notes (id, list_id, body) values (${aliceNote}, ${shared}, 'alice')`;
      await asUser(tx, bob);
      await tx`insert into public.tidesync_test_export_gadgets (id, list_id, label) values (${bobGadget}, ${shared}, 'bob')`;
      await tx`insert into public.tidesync_test_export_notes (id, list_id, body) values (${bobNote}, ${shared}, 'bob')`;
      await asUser(tx, null);
      await tx`insert into public.tidesync_test_export_notes (id, list_id, body) values (${adminNote}, ${shared}, 'written by an admin: nobody''s')`;

      const ofAlice = await exportAs(tx, alice, collections);
      expect(ofAlice.complete).toBe(true);
      expect(Object.keys(ofAlice.synced)).toEqual(collections.map((c) => c.name));
      expect(ids(ofAlice.synced.tidesync_test_export_gadgets)).toEqual([aliceGadget, alicePersonalGadget].sort());
      expect(ids(ofAlice.synced.tidesync_test_export_notes)).toEqual([aliceNote]);
      expect(ofAlice.synced.tidesync_test_export_notes?.[0]).toMatchObject({ id: aliceNote, list_id: shared, body: "alice" });
      expect(ids(ofAlice.synced.lists)).toContain(shared);

      const ofBob = await exportAs(tx, bob, collections);
      expect(ids(ofBob.synced.tidesync_test_export_gadgets)).toEqual([bobGadget]);
      expect(ids(ofBob.synced.tidesync_test_export_notes)).toEqual([bobNote]);
      expect(ids(ofBob.synced.lists)).not.toContain(shared);

      // Bob leaves: his rows there pass to the list's owner (sync.md, "Limits and their errors"),
      // in the sync state, not in the table's created_by column: his note is Alice's to export
      // now, his gadget nobody's (he cannot read it any more; its column still names him).
      await asUser(tx, bob);
      await tx`delete from public.list_members where list_id = ${shared} and user_id = ${bob.userId}`;
      await asUser(tx, null);
      const ofAliceAfter = await exportAs(tx, alice, collections);
      expect(ids(ofAliceAfter.synced.tidesync_test_export_notes)).toEqual([aliceNote, bobNote].sort());
      expect(ids(ofAliceAfter.synced.tidesync_test_export_gadgets)).toEqual([aliceGadget, alicePersonalGadget].sort());
      const ofBobAfter = await exportAs(tx, bob, collections);
      expect(ids(ofBobAfter.synced.tidesync_test_export_notes)).toEqual([]);
      expect(ids(ofBobAfter.synced.tidesync_test_export_gadgets)).toEqual([]);
      checked = true;
      throw rollback;
    }).catch((error) => {
      if (error !== rollback) throw error;
    });
    expect(checked).toBe(true);
  });
});
