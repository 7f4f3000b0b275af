// What a user may see of the synced tables, read the way PostgREST reads
// (role authenticated with their claims, so their RLS policies decide), with
// each row's sync version.
import { SYNC_COLLECTIONS } from "../../functions/_shared/sync-collections.generated.ts";
import type { TestUser } from "./harness.ts";
import { asUser } from "./shared-lists.ts";

export interface VisibleRow {
  collection: string;
  id: string;
  version: number;
  data: Record<string, unknown>;
}

const ALL = SYNC_COLLECTIONS.map((c) => c.name);

/** Every row of `collections` (default: every synced collection) `user` can read now, by "collection/id". */
export async function visibleTo(user: TestUser, collections: readonly string[] = ALL): Promise<Map<string, VisibleRow>> {
  const rows = await asUser(user, async (tx) => {
    await tx`set local time zone 'UTC'`; // as the function's connections: one format for timestamps in data
    const result: { collection: string; id: string; version: string; data: Record<string, unknown> }[] = [];
    for (const { name, table } of SYNC_COLLECTIONS.filter((c) => collections.includes(c.name))) {
      result.push(...await tx<typeof result>`
        select ${name}::text as collection, t.id::text, s.version::text, to_jsonb(t) - 'id' as data
          from ${tx.unsafe(table)} t join app_private.sync_records s on s.collection = ${name} and s.id = t.id`);
    }
    return result;
  });
  return new Map(rows.map((r) => [`${r.collection}/${r.id}`, { collection: r.collection, id: r.id, version: Number(r.version), data: r.data }]));
}
