// What `npm run generate` refuses in a synced table, with a message that says
// what to change, rather than let the running API surprise the developer.
//
// A table `authenticated` may insert rows into must let it choose their `id`:
// a device makes up a record's id (a uuid) and a sync create inserts the row
// with it, so without INSERT on `id` every create through POST /v1/sync/batch
// is refused FORBIDDEN ("you may not make this change to this record") while a
// supabase-js insert, which leaves id to its default, works. `id` has a
// default, so "server-owned columns get defaults, not grants" reads as if it
// needed no grant. A table without any INSERT for `authenticated` (rows only
// the server writes) is fine.
//
// A pull cursor names the collections its server synced (functions/api/sync/cursor.ts `synced`),
// within a bounded length: at most MAX_SYNCED_COLLECTIONS synced tables.
import type postgres from "postgres";
import { MAX_SYNCED_COLLECTIONS } from "../../functions/api/sync/cursor.ts";

/** Throws, naming every such table, when a synced table lets authenticated insert rows but not choose their id. */
export async function refuseUncreatableIds(sql: postgres.Sql): Promise<void> {
  const tables = await sql<{ table_name: string }[]>`
    select format('%I.%I', n.nspname, c.relname) as table_name
      from app_private.sync_tables t
      join pg_catalog.pg_class c on c.oid = t.relation
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
     where not has_column_privilege('authenticated', t.relation, 'id', 'INSERT')
       and exists (select 1 from pg_catalog.pg_attribute a
                    where a.attrelid = t.relation and a.attnum > 0 and not a.attisdropped
                      and has_column_privilege('authenticated', t.relation, a.attname, 'INSERT'))
     order by 1`;
  if (tables.length === 0) return;
  throw new Error(tables.map(({ table_name: table }) =>
    `${table}: authenticated may insert rows but not choose their id, so every sync create of it would be refused FORBIDDEN ` +
    `(a device chooses a record's id and the push inserts the row with it). Grant it with the other insertable columns in the ` +
    `table's migration: grant insert (id, …) on ${table} to authenticated (docs/security-model.md, "Making a new table syncable", step 2).`,
  ).join("\n"));
}

/** Throws when more tables sync than a pull cursor can name (each pull without a filter would fail). */
export function refuseTooManyCollections(names: readonly string[]): void {
  if (names.length <= MAX_SYNCED_COLLECTIONS) return;
  throw new Error(
    `${names.length} tables are synced; at most ${MAX_SYNCED_COLLECTIONS} are supported (a pull cursor names each one the server syncs, ` +
      "functions/api/sync/cursor.ts MAX_SYNCED_COLLECTIONS). Merge tables, or sync fewer.",
  );
}
