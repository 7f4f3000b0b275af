// `npm run generate` refuses a synced table that `authenticated` may insert rows
// into but that has a NOT NULL column without a default it may not insert
// (scripts/generate/sync-collection-checks.ts): nothing sets that column, so no
// create could ever succeed, through the push (VALIDATION_FAILED on the column)
// or supabase-js (23502). docs/sync.md's `public.notes` with `note_key text not
// null` added and the grants unchanged, as an app developer following the
// recipe wrote it. The message names the table, the column and the two fixes.
// Each table is made in a transaction rolled back afterwards, and read as the
// generator reads it.
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { readSyncCollections } from "../../scripts/generate/sync-collections.ts";
import { adminSql } from "../support/harness.ts";

/** What the generator reads after `statements` on a new synced table public.tidesync_test_reqcol_notes (all rolled back). */
async function generateWith(noteKey: string, statements: string[], before: string[] = []): Promise<string[]> {
  const rollback = new Error("rolled back on purpose");
  let names: string[] = [];
  await adminSql.begin(async (tx) => {
    for (const statement of before) await tx.unsafe(statement);
    await tx.unsafe(`create table public.tidesync_test_reqcol_notes (id uuid primary key default gen_random_uuid(),
                       list_id uuid not null references public.lists (id) on delete cascade,
                       ${noteKey},
                       body text not null,
                       created_by uuid default auth.uid() references auth.users (id) on delete set null)`);
    await tx.unsafe(`alter table public.tidesync_test_reqcol_notes enable row level security`);
    await tx.unsafe(`revoke all on public.tidesync_test_reqcol_notes from public, anon, authenticated, service_role`);
    await tx.unsafe(`grant select, delete on public.tidesync_test_reqcol_notes to authenticated`);
    for (const statement of statements) await tx.unsafe(statement);
    await tx.unsafe(`select app_private.enable_sync('public.tidesync_test_reqcol_notes', 'list_id')`);
    names = (await readSyncCollections(tx as unknown as postgres.Sql)).map((c) => c.name);
    throw rollback;
  }).catch((error) => {
    if (error !== rollback) throw error;
  });
  return names;
}

const RECIPE_GRANT = `grant insert (id, list_id, body), update (id, list_id, body) on public.tidesync_test_reqcol_notes to authenticated`;

describe("npm run generate and a NOT NULL column authenticated may not insert", () => {
  it("refuses the recipe's table with a NOT NULL column without a default left out of the insert grant, naming it and both fixes", async () => {
    await expect(generateWith(`note_key text not null`, [RECIPE_GRANT])).rejects.toThrow(
      /public\.tidesync_test_reqcol_notes: note_key is NOT NULL without a default and authenticated may not insert it, so no row of it can be created.*grant insert \(id, list_id, body, note_key\) on public\.tidesync_test_reqcol_notes to authenticated.*alter table public\.tidesync_test_reqcol_notes alter column note_key set default/s,
    );
  });

  it("names every such column of the table, a domain's NOT NULL as the column's own", async () => {
    const refusal = generateWith(`note_key text not null, code public.tidesync_test_reqcol_code`, [RECIPE_GRANT], [`create domain public.tidesync_test_reqcol_code as text not null`]);
    await expect(refusal).rejects.toThrow(/public\.tidesync_test_reqcol_notes: note_key is NOT NULL.*\npublic\.tidesync_test_reqcol_notes: code is NOT NULL/s);
  });

  it("takes it with the column granted, with a default, nullable, filled by a BEFORE INSERT trigger, or when no one may insert rows", async () => {
    expect(await generateWith(`note_key text not null`, [
      `grant insert (id, list_id, body, note_key), update (id, list_id, body) on public.tidesync_test_reqcol_notes to authenticated`,
    ])).toContain("tidesync_test_reqcol_notes");
    expect(await generateWith(`note_key text not null default md5(random()::text)`, [RECIPE_GRANT])).toContain("tidesync_test_reqcol_notes");
    expect(await generateWith(`note_key text`, [RECIPE_GRANT])).toContain("tidesync_test_reqcol_notes");
    expect(await generateWith(`note_key text not null`, [
      RECIPE_GRANT,
      `create function public.tidesync_test_reqcol_fill() returns trigger language plpgsql as $$ begin new.note_key := md5(random()::text); return new; end $$`,
      `create trigger tidesync_test_reqcol_fill before insert on public.tidesync_test_reqcol_notes for each row execute function public.tidesync_test_reqcol_fill()`,
    ])).toContain("tidesync_test_reqcol_notes");
    expect(await generateWith(`note_key text not null`, [`grant update (id, body) on public.tidesync_test_reqcol_notes to authenticated`])).toContain("tidesync_test_reqcol_notes");
  });
});
