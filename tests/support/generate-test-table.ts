// A test's own synced table as docs/sync.md's recipe makes it (RLS, revoke all,
// select and delete granted, the writable columns granted, step 3's recheck
// triggers, enable_sync), with a developer's change before or after
// enable_sync, read as `npm run generate` reads it (readCheckedSyncCollections:
// every refusal it makes, then the collections). Made in a transaction rolled
// back afterwards.
import type postgres from "postgres";
import { readCheckedSyncCollections } from "../../scripts/generate/sync-collections.ts";
import { adminSql } from "./harness.ts";
import { recheckTriggers } from "./recheck-triggers.ts";

export interface TestTableChanges {
  /** Statements after the table is made and granted, before enable_sync (a grant of one's own, another foreign key). */
  before?: string[];
  /** Statements after enable_sync (a later migration). */
  after?: string[];
}

/**
 * The collections `npm run generate` reads with public.tidesync_test_<name> made as docs/sync.md's
 * recipe does, `changes` applied; rejects with its refusal.
 */
export async function generateWithTable(name: string, changes: TestTableChanges = {}): Promise<string[]> {
  const table = `public.tidesync_test_${name}`;
  const rollback = new Error("rolled back on purpose");
  let names: string[] = [];
  await adminSql.begin(async (tx) => {
    await tx.unsafe(`create table public.tidesync_test_${name} (id uuid primary key default gen_random_uuid(),
                       list_id uuid not null references public.lists (id) on delete cascade, body text not null,
                       created_by uuid default auth.uid() references auth.users (id) on delete set null)`);
    await tx.unsafe(`alter table ${table} enable row level security`);
    await tx.unsafe(`revoke all on ${table} from public, anon, authenticated, service_role`);
    await tx.unsafe(`grant select, delete on ${table} to authenticated`);
    await tx.unsafe(`grant insert (id, list_id, body), update (id, list_id, body) on ${table} to authenticated`);
    for (const statement of recheckTriggers(table)) await tx.unsafe(statement);
    for (const statement of changes.before ?? []) await tx.unsafe(statement);
    await tx.unsafe(`select app_private.enable_sync('${table}', 'list_id')`);
    for (const statement of changes.after ?? []) await tx.unsafe(statement);
    names = (await readCheckedSyncCollections(tx as unknown as postgres.Sql, () => {})).map((c) => c.name);
    throw rollback;
  }).catch((error) => {
    if (error !== rollback) throw error;
  });
  return names;
}
