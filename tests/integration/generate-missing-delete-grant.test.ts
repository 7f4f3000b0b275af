// `npm run generate` refuses a synced table with a delete policy for
// `authenticated` but no DELETE grant to it (scripts/generate/sync-collection-checks.ts):
// a policy only narrows what a privilege allows, so every delete would be
// refused, a push's delete answered FORBIDDEN as if the policy had refused the
// owner. The message names the table, the policy and the grant to add. Each
// table is made in a transaction rolled back afterwards, and read as the
// generator reads it.
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { readSyncCollections } from "../../scripts/generate/sync-collections.ts";
import { adminSql } from "../support/harness.ts";

const EDITORS = `list_id = any ((select app_private.my_list_ids('editor'))::uuid[])`;

/** What the generator reads after `statements` on a new synced table public.tidesync_test_delgrant_notes (all rolled back). */
async function generateWith(statements: string[]): Promise<string[]> {
  const rollback = new Error("rolled back on purpose");
  let names: string[] = [];
  await adminSql.begin(async (tx) => {
    await tx.unsafe(`create table public.tidesync_test_delgrant_notes (id uuid primary key default gen_random_uuid(),
                       list_id uuid not null references public.lists (id) on delete cascade, body text not null)`);
    await tx.unsafe(`alter table public.tidesync_test_delgrant_notes enable row level security`);
    await tx.unsafe(`revoke all on public.tidesync_test_delgrant_notes from public, anon, authenticated, service_role`);
    await tx.unsafe(`grant insert (id, list_id, body), update (id, list_id, body) on public.tidesync_test_delgrant_notes to authenticated`);
    for (const statement of statements) await tx.unsafe(statement);
    await tx.unsafe(`select app_private.enable_sync('public.tidesync_test_delgrant_notes', 'list_id')`);
    names = (await readSyncCollections(tx as unknown as postgres.Sql)).map((c) => c.name);
    throw rollback;
  }).catch((error) => {
    if (error !== rollback) throw error;
  });
  return names;
}

describe("npm run generate and a synced table's delete policy and grant", () => {
  it("refuses a delete policy for authenticated without the DELETE grant, naming the table, the policy and the grant to add", async () => {
    await expect(generateWith([
      `grant select on public.tidesync_test_delgrant_notes to authenticated`,
      `create policy "Editors can delete notes" on public.tidesync_test_delgrant_notes for delete to authenticated using (${EDITORS})`,
    ])).rejects.toThrow(
      /public\.tidesync_test_delgrant_notes: authenticated has a delete policy \("Editors can delete notes"\) but no DELETE privilege.*sync delete FORBIDDEN.*grant select, delete on public\.tidesync_test_delgrant_notes to authenticated/s,
    );
  });

  it("refuses one whose policy is for every role (public) or for all commands too", async () => {
    await expect(generateWith([
      `grant select on public.tidesync_test_delgrant_notes to authenticated`,
      `create policy "Editors can delete notes" on public.tidesync_test_delgrant_notes for delete using (${EDITORS})`,
    ])).rejects.toThrow(/public\.tidesync_test_delgrant_notes: authenticated has a delete policy/);
    await expect(generateWith([
      `grant select on public.tidesync_test_delgrant_notes to authenticated`,
      `create policy "Editors can do anything" on public.tidesync_test_delgrant_notes for all to authenticated using (${EDITORS})`,
    ])).rejects.toThrow(/public\.tidesync_test_delgrant_notes: authenticated has a delete policy \("Editors can do anything"\)/);
  });

  it("takes the table with the grant, and one without a delete policy for authenticated (nobody deletes its rows)", async () => {
    expect(await generateWith([
      `grant select, delete on public.tidesync_test_delgrant_notes to authenticated`,
      `create policy "Editors can delete notes" on public.tidesync_test_delgrant_notes for delete to authenticated using (${EDITORS})`,
    ])).toContain("tidesync_test_delgrant_notes");
    expect(await generateWith([`grant select on public.tidesync_test_delgrant_notes to authenticated`])).toContain("tidesync_test_delgrant_notes");
    expect(await generateWith([
      `grant select on public.tidesync_test_delgrant_notes to authenticated`,
      `create policy "The server deletes notes" on public.tidesync_test_delgrant_notes for delete to service_role using (true)`,
    ])).toContain("tidesync_test_delgrant_notes");
  });
});
