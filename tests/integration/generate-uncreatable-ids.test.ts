// `npm run generate` refuses a synced table that `authenticated` may insert
// rows into but whose id it may not choose (scripts/generate/sync-collection-checks.ts):
// the push creates a row with the id the device chose, so every sync create
// would be answered FORBIDDEN while supabase-js inserts (id from its default)
// work; and one it may update but whose id it may not name in an update, as
// supabase-js upsert() does. The message names the table and the grant to add. Each table is made
// in a transaction rolled back afterwards, and read as the generator reads it.
import type postgres from "postgres";
import { describe, expect, it, vi } from "vitest";
import { readSyncCollections } from "../../scripts/generate/sync-collections.ts";
import { adminSql } from "../support/harness.ts";

/** The generator's warnings while it reads the table after `grants`. */
async function warningsWith(grants: string[]): Promise<string[]> {
  const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
  try {
    await generateWith(grants);
    return warn.mock.calls.map((call) => String(call[0])).filter((line) => line.includes("tidesync_test_idgrant_notes"));
  } finally {
    warn.mockRestore();
  }
}

/** What the generator reads after `grants` on a new synced table public.tidesync_test_idgrant_notes (all rolled back). */
async function generateWith(grants: string[]): Promise<string[]> {
  const rollback = new Error("rolled back on purpose");
  let names: string[] = [];
  await adminSql.begin(async (tx) => {
    await tx.unsafe(`create table public.tidesync_test_idgrant_notes (id uuid primary key default gen_random_uuid(),
                       list_id uuid not null references public.lists (id) on delete cascade, body text not null)`);
    await tx.unsafe(`alter table public.tidesync_test_idgrant_notes enable row level security`);
    await tx.unsafe(`revoke all on public.tidesync_test_idgrant_notes from public, anon, authenticated, service_role`);
    for (const grant of grants) await tx.unsafe(grant);
    await tx.unsafe(`select app_private.enable_sync('public.tidesync_test_idgrant_notes', 'list_id')`);
    names = (await readSyncCollections(tx as unknown as postgres.Sql)).map((c) => c.name);
    throw rollback;
  }).catch((error) => {
    if (error !== rollback) throw error;
  });
  return names;
}

describe("npm run generate and a synced table's insert and update grants on id", () => {
  it("refuses a table authenticated may insert into without choosing the id, naming the table and the grant to add", async () => {
    await expect(generateWith([
      `grant select, delete on public.tidesync_test_idgrant_notes to authenticated`,
      `grant insert (list_id, body), update (list_id, body) on public.tidesync_test_idgrant_notes to authenticated`,
    ])).rejects.toThrow(
      /public\.tidesync_test_idgrant_notes: authenticated may insert rows but not choose their id.*refused FORBIDDEN.*grant insert \(id, …\) on public\.tidesync_test_idgrant_notes to authenticated/s,
    );
  });

  it("refuses one authenticated may insert into and update without naming the id in an update (supabase-js upsert)", async () => {
    await expect(generateWith([
      `grant select, delete on public.tidesync_test_idgrant_notes to authenticated`,
      `grant insert (id, list_id, body), update (list_id, body) on public.tidesync_test_idgrant_notes to authenticated`,
    ])).rejects.toThrow(
      /public\.tidesync_test_idgrant_notes: authenticated may insert rows and update them but not name their id.*upsert\(\) of it would fail 42501.*grant update \(id, …\) on public\.tidesync_test_idgrant_notes to authenticated/s,
    );
  });

  it("takes it with insert (id, …) and update (id, …), one authenticated cannot update, and one it cannot insert into at all (rows only the server writes)", async () => {
    expect(await generateWith([
      `grant select, delete on public.tidesync_test_idgrant_notes to authenticated`,
      `grant insert (id, list_id, body), update (id, list_id, body) on public.tidesync_test_idgrant_notes to authenticated`,
    ])).toContain("tidesync_test_idgrant_notes");
    expect(await generateWith([
      `grant select, delete on public.tidesync_test_idgrant_notes to authenticated`,
      `grant insert (id, list_id, body) on public.tidesync_test_idgrant_notes to authenticated`,
    ])).toContain("tidesync_test_idgrant_notes");
    expect(await generateWith([`grant select on public.tidesync_test_idgrant_notes to authenticated`])).toContain("tidesync_test_idgrant_notes");
  });

  it("warns (and takes the table) when authenticated may insert a column it may not update: every supabase-js upsert() sending it fails 42501", async () => {
    const warnings = await warningsWith([
      `grant select, delete on public.tidesync_test_idgrant_notes to authenticated`,
      `grant insert (id, list_id, body), update (id, body) on public.tidesync_test_idgrant_notes to authenticated`,
    ]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/public\.tidesync_test_idgrant_notes: authenticated may insert list_id but not update it, so a supabase-js upsert\(\).*42501.*grant update \(list_id, …\)/);
    expect(await warningsWith([
      `grant select, delete on public.tidesync_test_idgrant_notes to authenticated`,
      `grant insert (id, list_id, body), update (id, list_id, body) on public.tidesync_test_idgrant_notes to authenticated`,
    ])).toEqual([]);
  });
});
