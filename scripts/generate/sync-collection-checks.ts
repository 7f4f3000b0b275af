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
// the server writes) is fine. Such a table that `authenticated` may also
// update must let it name `id` in an update: supabase-js `upsert()`
// (PostgREST: insert … on conflict (id) do update set id = excluded.id, …)
// sets every column it sends, the key included, and Postgres checks that
// privilege when it plans the statement, so without it every upsert fails
// 42501, even of a new row (the sync trigger refuses a change of the id).
//
// A table with a delete policy for `authenticated` must grant it DELETE: a
// policy only narrows what a privilege allows, so without the grant every
// delete is refused before any policy is read (42501 "permission denied"; a
// push's delete answered FORBIDDEN, which the owner cannot tell from a refusal
// by the policy). The grants of step 2 are written apart from the policies of
// step 3, and "select and the insertable and updatable columns" read as if
// that were all.
//
// A synced table scoped by a list must judge each write again by the writer's role after the locks
// it waited for (docs/security-model.md, step 3): RLS judges it on the snapshot it started with, so
// without the three writer_role_rechecked_on_* triggers an editor removed from the list while his
// insert waited for the list's lock still added a row to it. docs/sync.md's recipe once left them
// out; app_private.list_writes_not_rechecked() (pgTAP 165) names such tables.
//
// A synced table `authenticated` may insert rows into must let every row be created: a NOT NULL
// column without a default (its own, an identity's, a domain's) that it may not insert, and that
// no BEFORE INSERT trigger may fill, stays null in every create, which the database refuses
// (23502; a push create VALIDATION_FAILED on the column whether it sends it or not). "Server-owned
// columns get defaults, not grants" read as if a column left out of the grant were the server's.
//
// A pull cursor names the collections its server synced (functions/api/sync/cursor.ts `synced`),
// within a bounded length: at most MAX_SYNCED_COLLECTIONS synced tables.
import type postgres from "postgres";
import type { GeneratedCollection } from "../../functions/_shared/sync-collection-types.ts";
import { MAX_SYNCED_COLLECTIONS } from "../../functions/api/sync/cursor.ts";

/** What `npm run generate` refuses (its message says what to change): apart from a failure to read, which `npm start` leaves unsaid. */
export class SyncTableRefusal extends Error {}

/**
 * Throws, naming every such table and the grant to add, when a synced table
 * lets authenticated insert rows but not choose their id, or insert them with
 * their id and update them but not name the id in an update (upsert).
 */
export async function refuseMissingIdGrants(sql: postgres.Sql): Promise<void> {
  const tables = await sql<{ table_name: string; inserts: boolean; inserts_id: boolean; updates: boolean; updates_id: boolean }[]>`
    select format('%I.%I', n.nspname, c.relname) as table_name,
           bool_or(has_column_privilege('authenticated', t.relation, a.attname, 'INSERT')) as inserts,
           has_column_privilege('authenticated', t.relation, 'id', 'INSERT') as inserts_id,
           bool_or(has_column_privilege('authenticated', t.relation, a.attname, 'UPDATE')) as updates,
           has_column_privilege('authenticated', t.relation, 'id', 'UPDATE') as updates_id
      from app_private.sync_tables t
      join pg_catalog.pg_class c on c.oid = t.relation
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      join pg_catalog.pg_attribute a on a.attrelid = t.relation and a.attnum > 0 and not a.attisdropped
     group by n.nspname, c.relname, t.relation
     order by 1`;
  const messages = tables.flatMap(({ table_name: table, inserts, inserts_id, updates, updates_id }) => {
    if (inserts && !inserts_id) {
      return [`${table}: authenticated may insert rows but not choose their id, so every sync create of it would be refused FORBIDDEN ` +
        `(a device chooses a record's id and the push inserts the row with it). Grant it with the other insertable columns in the ` +
        `table's migration: grant insert (id, …) on ${table} to authenticated (docs/security-model.md, "Making a new table syncable", step 2).`];
    }
    if (inserts && updates && !updates_id) {
      return [`${table}: authenticated may insert rows and update them but not name their id in an update, so every supabase-js ` +
        `upsert() of it would fail 42501 (PostgREST's upsert sets every column it sends, the key included; the sync trigger refuses ` +
        `a change of the id). Grant it with the other updatable columns in the table's migration: grant update (id, …) on ${table} ` +
        `to authenticated (docs/security-model.md, "Making a new table syncable", step 2).`];
    }
    return [];
  });
  if (messages.length > 0) throw new SyncTableRefusal(messages.join("\n"));
}

/**
 * Warnings, one per synced table that authenticated may insert into (with the id) and update but
 * with insertable columns it may not update (a scope column left out so rows cannot move, say):
 * supabase-js upsert() sends every column it is given and PostgREST sets each in the update,
 * so every upsert naming one fails 42501, even of a new row. Not refused: a table whose rows
 * are created by insert() and changed by update() works, and keeping a column unchangeable is
 * a choice; the warning says what it costs.
 */
export async function insertOnlyColumnWarnings(sql: postgres.Sql): Promise<string[]> {
  const tables = await sql<{ table_name: string; columns: string[] }[]>`
    select format('%I.%I', n.nspname, c.relname) as table_name,
           array_agg(a.attname::text order by a.attnum) as columns
      from app_private.sync_tables t
      join pg_catalog.pg_class c on c.oid = t.relation
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      join pg_catalog.pg_attribute a on a.attrelid = t.relation and a.attnum > 0 and not a.attisdropped
     where has_column_privilege('authenticated', t.relation, 'id', 'INSERT')
       and has_column_privilege('authenticated', t.relation, 'id', 'UPDATE')
       and has_column_privilege('authenticated', t.relation, a.attname, 'INSERT')
       and not has_column_privilege('authenticated', t.relation, a.attname, 'UPDATE')
     group by n.nspname, c.relname
     order by 1`;
  return tables.map(({ table_name: table, columns }) =>
    `${table}: authenticated may insert ${columns.join(", ")} but not update ${columns.length === 1 ? "it" : "them"}, so a supabase-js ` +
    `upsert() that sends ${columns.length === 1 ? "it" : "one of them"} fails 42501, even of a new row (PostgREST's upsert sets every ` +
    `column it sends). Use insert() and update() for this table, or grant update (${columns.join(", ")}, …) on ${table} to ` +
    `authenticated and let the policies decide (docs/security-model.md, "Making a new table syncable", step 2).`
  );
}

/**
 * Throws, naming every such table and the grant to add, when a synced table has a permissive
 * DELETE policy that applies to authenticated (to it or to public, for delete or for all)
 * but authenticated may not delete from it.
 */
export async function refuseMissingDeleteGrants(sql: postgres.Sql): Promise<void> {
  const tables = await sql<{ table_name: string; policy: string }[]>`
    select format('%I.%I', n.nspname, c.relname) as table_name, min(p.polname) as policy
      from app_private.sync_tables t
      join pg_catalog.pg_class c on c.oid = t.relation
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      join pg_catalog.pg_policy p on p.polrelid = t.relation
     where p.polcmd in ('d', '*') and p.polpermissive
       and p.polroles && array[0::oid, (select r.oid from pg_catalog.pg_roles r where r.rolname = 'authenticated')]
       and not has_table_privilege('authenticated', t.relation, 'DELETE')
     group by n.nspname, c.relname
     order by 1`;
  if (tables.length === 0) return;
  throw new SyncTableRefusal(tables.map(({ table_name: table, policy }) =>
    `${table}: authenticated has a delete policy ("${policy}") but no DELETE privilege, so every delete of it would be refused ` +
    `(a sync delete FORBIDDEN, a supabase-js delete 42501 "permission denied"): a policy only narrows what a grant allows. ` +
    `Grant it in the table's migration: grant select, delete on ${table} to authenticated (docs/security-model.md, ` +
    `"Making a new table syncable", step 2), or drop the policy if nobody may delete its rows.`
  ).join("\n"));
}

/** Step 3's recheck triggers of a list-scoped table, by name: the event and transition tables of each. */
export const RECHECK_TRIGGERS: Record<string, { event: "insert" | "update" | "delete"; rows: string }> = {
  writer_role_rechecked_on_insert: { event: "insert", rows: "new table as new_rows" },
  writer_role_rechecked_on_update: { event: "update", rows: "old table as old_rows new table as new_rows" },
  writer_role_rechecked_on_delete: { event: "delete", rows: "old table as old_rows" },
};

/**
 * Throws, naming every synced table scoped by a list that lacks one of step 3's recheck triggers
 * (or has it in another shape: without its transition tables, its WHEN, or disabled), with the
 * statements to add.
 */
export async function refuseUnrecheckedListWrites(sql: postgres.Sql): Promise<void> {
  const tables = await sql<{ table_name: string; scope_column: string; missing: string[] }[]>`
    select table_name, scope_column, missing from app_private.list_writes_not_rechecked()`;
  if (tables.length === 0) return;
  throw new SyncTableRefusal(tables.map(({ table_name: table, scope_column: scope, missing }) =>
    `${table}: its writes into a list are not judged again by the writer's role after the locks they waited for ` +
    `(missing: ${missing.join(", ")}), so a member removed from the list while his write waited (an insert's foreign-key check ` +
    `waits for the removal) still writes into it. Add docs/security-model.md's step 3 triggers to the table's migration, each ` +
    `with the role of its command's policy ('editor' below):\n` +
    missing.map((name) =>
      `  create or replace trigger ${name} after ${RECHECK_TRIGGERS[name].event} on ${table} referencing ${RECHECK_TRIGGERS[name].rows}\n` +
      `    for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', '${scope}');`
    ).join("\n")
  ).join("\n"));
}

/**
 * Throws, naming every such column and the two fixes, when a synced table authenticated may
 * insert into has a NOT NULL column without a default that it may not insert and no trigger may
 * fill: what the push requires of a create (collections.ts schemaFor) could never be sent.
 */
export function refuseUncreatableColumns(collections: readonly GeneratedCollection[]): void {
  const messages = collections.flatMap(({ table, fields }) => {
    const insertable = fields.filter((f) => f.insertable).map((f) => f.name);
    if (insertable.length === 0) return []; // rows only the server writes
    return fields.filter((f) => !f.nullable && !f.has_default && !f.insertable && !f.filled_by_trigger).map(({ name }) =>
      `${table}: ${name} is NOT NULL without a default and authenticated may not insert it, so no row of it can be created ` +
      `(nothing sets it: every sync create is refused VALIDATION_FAILED on it, a supabase-js insert 23502). In the table's migration, ` +
      `either grant it with the other insertable columns: grant insert (id, ${[...insertable, name].join(", ")}) on ${table} to authenticated, ` +
      `or give it a default: alter table ${table} alter column ${name} set default … (docs/security-model.md, "Making a new table syncable", step 2).`
    );
  });
  if (messages.length > 0) throw new SyncTableRefusal(messages.join("\n"));
}

/** Throws when more tables sync than a pull cursor can name (each pull without a filter would fail). */
export function refuseTooManyCollections(names: readonly string[]): void {
  if (names.length <= MAX_SYNCED_COLLECTIONS) return;
  throw new SyncTableRefusal(
    `${names.length} tables are synced; at most ${MAX_SYNCED_COLLECTIONS} are supported (a pull cursor names each one the server syncs, ` +
      "functions/api/sync/cursor.ts MAX_SYNCED_COLLECTIONS). Merge tables, or sync fewer.",
  );
}
