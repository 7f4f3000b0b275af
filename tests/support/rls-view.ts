// What a user may see of the synced tables, read the way PostgREST reads
// (role authenticated with their claims, so their RLS policies decide), with
// each row's sync version.
import type { TestUser } from "./harness.ts";
import { asUser } from "./shared-lists.ts";

export interface VisibleRow {
  collection: string;
  id: string;
  version: number;
  data: Record<string, unknown>;
}

/** Every list and task `user` can read now, by "collection/id". */
export async function visibleTo(user: TestUser): Promise<Map<string, VisibleRow>> {
  const rows = await asUser(user, async (tx) => {
    await tx`set local time zone 'UTC'`; // as the function's connections: one format for timestamps in data
    return await tx<{ collection: string; id: string; version: string; data: Record<string, unknown> }[]>`
      select 'lists' as collection, l.id::text, s.version::text, to_jsonb(l) - 'id' as data
        from public.lists l join app_private.sync_records s on s.collection = 'lists' and s.id = l.id
      union all
      select 'tasks', t.id::text, s.version::text, to_jsonb(t) - 'id'
        from public.tasks t join app_private.sync_records s on s.collection = 'tasks' and s.id = t.id`;
  });
  return new Map(rows.map((r) => [`${r.collection}/${r.id}`, { collection: r.collection, id: r.id, version: Number(r.version), data: r.data }]));
}
