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
//
// What a developer following docs/security-model.md "Making a new table syncable" may get wrong
// without any other test noticing (an app-developer review that added a synced `notes`):
// * a synced table authenticated may not read, or not every column of: one pull statement reads
//   every synced table's rows whole (functions/api/sync/pull-store.ts rowDataCaseOf), as does the
//   push's first statement (push-store.ts stateSql), and Postgres checks SELECT on all of them
//   before it runs either, so every pull and every push of every collection, for every user,
//   failed 500 INTERNAL;
// * row level security disabled by a later migration (enable_sync refuses a table without it,
//   but nothing looked again): any signed-in user then read every row through the Data API;
// * created_by (the owner column, sync-collection-owners.ts) writable by authenticated, as
//   Supabase's default privileges leave it without step 2's `revoke all`: a user could write rows
//   naming another user as their creator, which that user's data export then holds;
// * a column default (or generated column) that calls a function, or takes a sequence's next
//   value, authenticated may not use (the project's own habit is `revoke all on function`):
//   every create that leaves the column out was refused FORBIDDEN "you may not make this change"
//   (42501 "permission denied for function …"), while a create that sent it worked;
// * a scope column that is no foreign key to a synced table (the common Supabase table's
//   `user_id uuid not null references auth.users`, made syncable by its user_id: enable_sync
//   takes any not-null uuid column): sync lists a row to the members of its scope, and a user, or
//   a table not synced, has none. It was refused alone, before the other checks ran, with no
//   statement nor a way on (an adopting developer's review);
// * the scope column's foreign key without `on delete cascade` (`references public.lists (id)`
//   alone is `no action`): a list with rows in it could not be deleted, so the account purge
//   failed 23503 on every run and a push's delete of such a list was refused.
import type postgres from "postgres";
import type { GeneratedCollection } from "../../functions/_shared/sync-collection-types.ts";
import { MAX_SYNCED_COLLECTIONS } from "../../functions/api/sync/cursor.ts";

/** What `npm run generate` refuses (its message says what to change): apart from a failure to read, which `npm start` leaves unsaid. */
export class SyncTableRefusal extends Error {}

/**
 * Runs every check in turn, then throws one SyncTableRefusal with what each refused (in their
 * order), so that `npm run generate` names every mistake at once; another failure is thrown as is.
 */
export async function refuseAll(checks: readonly (() => unknown)[]): Promise<void> {
  const refusals: string[] = [];
  for (const check of checks) {
    try {
      await check();
    } catch (error) {
      if (!(error instanceof SyncTableRefusal)) throw error;
      refusals.push(error.message);
    }
  }
  if (refusals.length > 0) throw new SyncTableRefusal(refusals.join("\n"));
}

/** Throws, naming every such table and the statement that fixes it, when a synced table's row level security is off. */
export async function refuseTablesWithoutRowSecurity(sql: postgres.Sql): Promise<void> {
  const tables = await sql<{ table_name: string }[]>`
    select format('%I.%I', n.nspname, c.relname) as table_name
      from app_private.sync_tables t
      join pg_catalog.pg_class c on c.oid = t.relation
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
     where not c.relrowsecurity
     order by 1`;
  if (tables.length === 0) return;
  throw new SyncTableRefusal(tables.map(({ table_name: table }) =>
    `${table}: row level security is disabled, so its policies decide nothing: any signed-in user reads every row of it ` +
    `through the Data API (supabase-js), whatever list it is in, and writes whatever the grants allow. enable_sync refused the ` +
    `table without it; a later migration turned it off. Turn it on again in a migration: alter table ${table} enable row level ` +
    `security (docs/security-model.md, "Making a new table syncable", step 2).`
  ).join("\n"));
}

/**
 * Throws, naming every such table, the columns and the grant to add, when authenticated may not
 * read every column of a synced table: the pull and the push read each synced table's rows whole.
 */
export async function refuseUnreadableTables(sql: postgres.Sql): Promise<void> {
  const tables = await sql<{ table_name: string; unreadable: string[]; columns: number }[]>`
    select format('%I.%I', n.nspname, c.relname) as table_name,
           array_agg(a.attname::text order by a.attnum) filter (where not has_column_privilege('authenticated', t.relation, a.attname, 'SELECT')) as unreadable,
           count(*)::integer as columns
      from app_private.sync_tables t
      join pg_catalog.pg_class c on c.oid = t.relation
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      join pg_catalog.pg_attribute a on a.attrelid = t.relation and a.attnum > 0 and not a.attisdropped
     group by n.nspname, c.relname
    having bool_or(not has_column_privilege('authenticated', t.relation, a.attname, 'SELECT'))
     order by 1`;
  if (tables.length === 0) return;
  throw new SyncTableRefusal(tables.map(({ table_name: table, unreadable, columns }) => {
    const what = unreadable.length === columns
      ? "it (no SELECT privilege)"
      : `its column${unreadable.length === 1 ? "" : "s"} ${unreadable.join(", ")} (no SELECT privilege on ${unreadable.length === 1 ? "it" : "them"})`;
    return `${table}: authenticated may not read ${what}, so every pull and every push, of every collection and for every user, ` +
      `would fail 500 INTERNAL: one pull statement reads the rows of every synced table with all their columns, as does the push's ` +
      `first statement, and Postgres checks SELECT on each before it runs it. Grant it in a migration: grant select on ${table} to ` +
      `authenticated (the select policy decides which rows a user reads; a synced row is listed whole, so a column users must not ` +
      `read belongs in another table) (docs/security-model.md, "Making a new table syncable", step 2).`;
  }).join("\n"));
}

/**
 * Throws, naming every such column, what it calls and the grant to add, when a synced table's
 * column default or generated column calls a function authenticated may not execute, or takes
 * the next value of a sequence it may not use: Postgres checks that privilege of the writer.
 */
export async function refuseDefaultsAuthenticatedCannotRun(sql: postgres.Sql): Promise<void> {
  const uses = await sql<{ table_name: string; column: string; generated: boolean; object: string; is_sequence: boolean }[]>`
    select format('%I.%I', n.nspname, c.relname) as table_name, a.attname::text as column, a.attgenerated <> '' as generated,
           -- schema-qualified whatever the search_path, for the grant the message writes
           case when p.oid is not null then format('%I.%I(%s)', pn.nspname, p.proname, pg_catalog.pg_get_function_identity_arguments(p.oid))
                else format('%I.%I', qn.nspname, q.relname) end as object,
           q.oid is not null as is_sequence
      from app_private.sync_tables t
      join pg_catalog.pg_class c on c.oid = t.relation
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      join pg_catalog.pg_attrdef d on d.adrelid = t.relation
      join pg_catalog.pg_attribute a on a.attrelid = t.relation and a.attnum = d.adnum and not a.attisdropped
      join pg_catalog.pg_depend dep on dep.classid = 'pg_catalog.pg_attrdef'::regclass and dep.objid = d.oid
      left join pg_catalog.pg_proc p on dep.refclassid = 'pg_catalog.pg_proc'::regclass and p.oid = dep.refobjid
      left join pg_catalog.pg_namespace pn on pn.oid = p.pronamespace
      left join pg_catalog.pg_class q on dep.refclassid = 'pg_catalog.pg_class'::regclass and q.oid = dep.refobjid and q.relkind = 'S'
      left join pg_catalog.pg_namespace qn on qn.oid = q.relnamespace
     where (p.oid is not null and not has_function_privilege('authenticated', p.oid, 'EXECUTE'))
        or (q.oid is not null and not has_sequence_privilege('authenticated', q.oid, 'USAGE'))
     order by 1, 2, 4`;
  if (uses.length === 0) return;
  throw new SyncTableRefusal(uses.map(({ table_name: table, column, generated, object, is_sequence: sequence }) => {
    const used = sequence ? `takes the next value of the sequence ${object}, which authenticated may not use` : `calls ${object}, which authenticated may not execute`;
    const refused = generated
      ? `every insert and every update of a row of it is refused`
      : `every create that leaves ${column} out is refused`;
    const grant = sequence ? `grant usage on sequence ${object} to authenticated` : `grant execute on function ${object} to authenticated`;
    return `${table}: the ${generated ? "generated column" : "default of"} ${column} ${used}, and Postgres checks that privilege of the ` +
      `writer, so ${refused} (a push's op FORBIDDEN "you may not make this change to this record", a supabase-js write 42501 ` +
      `"permission denied for ${sequence ? "sequence" : "function"} …"). In a migration, ${grant}, or make the ${generated ? "expression" : "default"} ` +
      `one authenticated may run (docs/security-model.md, "Making a new table syncable", step 2).`;
  }).join("\n"));
}

/** The statements that scope `table`, kept by `column` (a user's id), by each user's personal list: docs/sync.md, "A table each user keeps to themselves". */
function personalListStatements(table: string, column: string): string[] {
  return [
    `select app_private.disable_sync('${table}');`,
    `alter table ${table} add column list_id uuid references public.lists (id) on delete cascade;`,
    `update ${table} t set list_id = t.${column} where exists (select 1 from public.list_members m where m.list_id = t.${column} ` +
    `and m.user_id = t.${column} and m.role = 'owner');`,
    `alter table ${table} alter column list_id set default auth.uid(), alter column list_id set not null;`,
    `-- grants without list_id, policies by the caller's role in the row's list and step 3's recheck triggers, as docs/sync.md's recipe`,
    `select app_private.enable_sync('${table}', 'list_id');`,
  ];
}

/**
 * Throws, naming every such table, what its scope column references and how to scope it, when a
 * synced table's scope column (not `id`) is no foreign key of its own to a synced table: sync
 * lists a row to the members of its scope, which only a scope table's membership table names.
 */
export async function refuseScopeColumnsWithoutScopeTable(sql: postgres.Sql): Promise<void> {
  const columns = await sql<{ table_name: string; scope_column: string; referenced: string | null }[]>`
    select format('%I.%I', n.nspname, c.relname) as table_name, t.scope_column::text as scope_column,
           (select format('%I.%I', rn.nspname, rc.relname)
              from pg_catalog.pg_constraint f
              join pg_catalog.pg_class rc on rc.oid = f.confrelid
              join pg_catalog.pg_namespace rn on rn.oid = rc.relnamespace
             where f.conrelid = t.relation and f.contype = 'f' and f.conkey = array[a.attnum]
             order by f.conname limit 1) as referenced
      from app_private.sync_tables t
      join pg_catalog.pg_class c on c.oid = t.relation
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      join pg_catalog.pg_attribute a on a.attrelid = t.relation and a.attname = t.scope_column
     where t.scope_column <> 'id'
       -- the scope column's key to a synced table, as readSyncCollections finds its scope collection
       and not exists (select 1 from pg_catalog.pg_constraint f
                         join app_private.sync_tables s on s.relation = f.confrelid
                        where f.conrelid = t.relation and f.contype = 'f' and f.conkey = array[a.attnum])
     order by 1`;
  if (columns.length === 0) return;
  throw new SyncTableRefusal(columns.map(({ table_name: table, scope_column: column, referenced }) => {
    const what = referenced === null ? `is no foreign key` : `references ${referenced}, not a synced scope table`;
    const why = `so no device would get its rows: sync lists a row to the members of its scope (a list of public.lists, or a row ` +
      `of a table synced with enable_sync(…, 'id') and a membership table), and ${
        referenced === null ? "it cannot tell which scope a row is in" : `${referenced} ${referenced === "auth.users" ? "is no scope" : "is not synced"}`
      }. `;
    const scopeTable = `give it a scope table of its own with a membership table (docs/security-model.md, "Making a new table ` +
      `syncable", step 4)`;
    if (referenced === "auth.users") {
      return `${table}: its scope column ${column} ${what}, ${why}For rows each user keeps to themselves, scope them by the ` +
        `user's personal list (a list whose id is the user's id, which they own), in a new migration:\n` +
        personalListStatements(table, column).map((s) => `  ${s}`).join("\n") +
        `\n(docs/sync.md, "A table each user keeps to themselves", says what each does and which rows it cannot place). ` +
        `Or ${scopeTable}.`;
    }
    if (referenced === null) {
      return `${table}: its scope column ${column} ${what}, ${why}Add its key to the scope table in a migration: alter table ${table} ` +
        `add foreign key (${column}) references public.lists (id) on delete cascade (a list's rows), or ${scopeTable}.`;
    }
    return `${table}: its scope column ${column} ${what}, ${why}Make ${referenced} a scope table in a migration: select ` +
      `app_private.enable_sync('${referenced}', 'id'), with a membership table (docs/security-model.md, "Making a new table ` +
      `syncable", step 4), or scope the rows by a list (a list_id column: docs/sync.md, "Making a table syncable").`;
  }).join("\n"));
}

/** Postgres' letter for a foreign key's delete action (pg_constraint.confdeltype), as SQL says it. */
const DELETE_ACTIONS: Record<string, string> = { a: "no action", r: "restrict", c: "cascade", n: "set null", d: "set default" };

/**
 * Throws, naming every such table, its key and the statement that replaces it, when a synced
 * table's scope column references its scope table with another delete action than cascade: a
 * row is in its scope and goes with it.
 */
export async function refuseScopeKeysWithoutCascade(sql: postgres.Sql): Promise<void> {
  const keys = await sql<{ table_name: string; scope_column: string; key: string; scope_table: string; scope_key: string; action: string }[]>`
    select format('%I.%I', n.nspname, c.relname) as table_name, t.scope_column::text as scope_column, f.conname::text as key,
           format('%I.%I', sn.nspname, sc.relname) as scope_table, k.attname::text as scope_key, f.confdeltype::text as action
      from app_private.sync_tables t
      join pg_catalog.pg_class c on c.oid = t.relation
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      join pg_catalog.pg_attribute a on a.attrelid = t.relation and a.attname = t.scope_column
      -- the scope column's key to a synced table, as readSyncCollections finds its scope collection
      join pg_catalog.pg_constraint f on f.conrelid = t.relation and f.contype = 'f' and f.conkey = array[a.attnum]
      join app_private.sync_tables s on s.relation = f.confrelid
      join pg_catalog.pg_class sc on sc.oid = f.confrelid
      join pg_catalog.pg_namespace sn on sn.oid = sc.relnamespace
      join pg_catalog.pg_attribute k on k.attrelid = f.confrelid and k.attnum = f.confkey[1]
     where t.scope_column <> 'id' and f.confdeltype <> 'c'
     order by 1, 3`;
  if (keys.length === 0) return;
  throw new SyncTableRefusal(keys.map(({ table_name: table, scope_column: column, key, scope_table: scope, scope_key: scopeKey, action }) => {
    const blocked = `the account purge, which deletes the lists that go with a deleted account, then fails for that account on ` +
      `every run, and a delete of such a list (a push's, supabase-js') is refused`;
    const consequence = action === "d"
      ? `a delete of a row of ${scope} moves its rows into the scope their ${column}'s default names, past the policies and the ` +
        `recheck triggers, to that scope's members`
      : action === "n"
      ? `a delete of a row of ${scope} that still holds rows of it fails 23502 (${column} is NOT NULL): ${blocked}`
      : `a delete of a row of ${scope} that still holds rows of it fails 23503: ${blocked}`;
    return `${table}: its scope column ${column} references ${scope} (${key}) on delete ${DELETE_ACTIONS[action] ?? action}, so ` +
      `${consequence}. A row is in its scope and goes with it: replace the key in a migration: alter table ${table} drop constraint ` +
      `${key}, add constraint ${key} foreign key (${column}) references ${scope} (${scopeKey}) on delete cascade ` +
      `(docs/security-model.md, "Making a new table syncable", step 1).`;
  }).join("\n"));
}

/**
 * Throws, naming every such table, its owner column and the statements that fix it, when
 * authenticated may insert or update a synced table's owner column (`owners`: collection → its
 * created_by, readOwnerColumns): the database sets it, and a data export trusts it.
 */
export async function refuseWritableOwnerColumns(sql: postgres.Sql, owners: ReadonlyMap<string, string>): Promise<void> {
  const tables = await sql<{
    table_name: string;
    column: string;
    inserts: boolean;
    updates: boolean;
    whole_table: boolean;
    deletes: boolean;
    insertable: string[];
    updatable: string[];
  }[]>`
    select format('%I.%I', n.nspname, c.relname) as table_name, o.column,
           has_column_privilege('authenticated', t.relation, o.column, 'INSERT') as inserts,
           has_column_privilege('authenticated', t.relation, o.column, 'UPDATE') as updates,
           -- a table's privilege (Supabase's default ones): a column revoke takes nothing from it
           has_table_privilege('authenticated', t.relation, 'INSERT') or has_table_privilege('authenticated', t.relation, 'UPDATE') as whole_table,
           has_table_privilege('authenticated', t.relation, 'DELETE') as deletes,
           array(select a.attname::text from pg_catalog.pg_attribute a
                  where a.attrelid = t.relation and a.attnum > 0 and not a.attisdropped and a.attname <> o.column
                    and has_column_privilege('authenticated', t.relation, a.attname, 'INSERT') order by a.attnum) as insertable,
           array(select a.attname::text from pg_catalog.pg_attribute a
                  where a.attrelid = t.relation and a.attnum > 0 and not a.attisdropped and a.attname <> o.column
                    and has_column_privilege('authenticated', t.relation, a.attname, 'UPDATE') order by a.attnum) as updatable
      from app_private.sync_tables t
      join unnest(${[...owners.keys()]}::text[], ${[...owners.values()]}::text[]) as o (collection, "column") on o.collection = t.collection
      join pg_catalog.pg_class c on c.oid = t.relation
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
     where has_column_privilege('authenticated', t.relation, o.column, 'INSERT')
        or has_column_privilege('authenticated', t.relation, o.column, 'UPDATE')
     order by 1`;
  if (tables.length === 0) return;
  throw new SyncTableRefusal(tables.map(({ table_name: table, column, inserts, updates, whole_table, deletes, insertable, updatable }) => {
    const writes = [inserts && "insert", updates && "update"].filter((w): w is string => Boolean(w));
    const fix = whole_table
      ? [
        `revoke all on ${table} from public, anon, authenticated, service_role`,
        `grant select${deletes ? ", delete" : ""} on ${table} to authenticated`,
        ...(insertable.length + updatable.length > 0
          ? [`grant ${[insertable.length > 0 && `insert (${insertable.join(", ")})`, updatable.length > 0 && `update (${updatable.join(", ")})`]
            .filter(Boolean).join(", ")} on ${table} to authenticated`]
          : []),
      ].join("; ")
      : `revoke ${writes.map((w) => `${w} (${column})`).join(", ")} on ${table} from public, authenticated`;
    return `${table}: authenticated may ${writes.join(" and ")} ${column}, the column naming each row's creator, so a user can write ` +
      `rows naming another user as their creator, and those rows are in that other user's data export (docs/account-export.md). ` +
      `The database sets it (its default); no user writes it. ` +
      (whole_table
        ? `The privilege is the table's (Supabase grants everything on a new public table to anon, authenticated and service_role ` +
          `unless it is revoked first), so revoke everything and grant back the columns users write, in a migration: ${fix}`
        : `Revoke it in a migration: ${fix}`) +
      ` (docs/security-model.md, "Making a new table syncable", step 2).`;
  }).join("\n"));
}

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

/** One of step 3's trigger names on a table, as the catalog has it. */
interface RecheckTriggerRow {
  table_name: string;
  name: string;
  /** pg_trigger.tgenabled: O (origin), A (always), R (replica only), D (disabled). */
  enabled: string;
  /** pg_trigger.tgtype: bit 1 row, 2 before, 4 insert, 8 delete, 16 update. */
  type: number;
  old_rows: string | null;
  new_rows: string | null;
  definition: string;
}

const EVENT_BITS = { insert: 4, delete: 8, update: 16 } as const;
const RECHECK_WHEN = "WHEN ((CURRENT_USER = 'authenticated'::name)) EXECUTE";

/**
 * What is wrong with a step 3 trigger that exists but does not count (the conditions of
 * app_private.list_writes_not_rechecked()), and whether re-enabling it is all it needs.
 */
function recheckTriggerProblems(row: RecheckTriggerRow): { problems: string[]; enableOnly: boolean } {
  const { event, rows } = RECHECK_TRIGGERS[row.name];
  const shape: string[] = [];
  if (row.type & 2) shape.push("fires before the write, not after");
  if (row.type & 1) shape.push("fires for each row, not for each statement");
  if (!(row.type & EVENT_BITS[event])) shape.push(`does not fire on ${event}`);
  const referencing = [row.old_rows && `old table as ${row.old_rows}`, row.new_rows && `new table as ${row.new_rows}`].filter(Boolean).join(" ");
  if ((row.old_rows !== null) !== rows.includes("old table") || (row.new_rows !== null) !== rows.includes("new table")) {
    shape.push(`references ${referencing || "no transition table"}, not ${rows}`);
  }
  if (!row.definition.includes(` FOR EACH STATEMENT ${RECHECK_WHEN} `)) {
    shape.push(row.definition.includes(" WHEN (") ? "has another when than (current_user = 'authenticated')" : "has no when (current_user = 'authenticated')");
  }
  const state = row.enabled === "D"
    ? ["is disabled"]
    : row.enabled === "R"
    ? ["is enabled replica, so it never fires for PostgREST or the api function"]
    : [];
  const problems = [...shape, ...state];
  return { problems: problems.length > 0 ? problems : ["is not as step 3 writes it"], enableOnly: shape.length === 0 && state.length > 0 };
}

/** Step 3's statement making the trigger `name` of `table`, calling `execute` (its own function, or the generic one with 'editor'). */
function recheckTriggerStatement(table: string, name: string, execute: string): string {
  return `  create or replace trigger ${name} after ${RECHECK_TRIGGERS[name].event} on ${table} referencing ${RECHECK_TRIGGERS[name].rows}\n` +
    `    for each statement when (current_user = 'authenticated') execute function ${execute};`;
}

/**
 * Throws, naming every synced table scoped by a list that lacks one of step 3's recheck triggers
 * or has it in another shape (without its transition tables or its WHEN, disabled or enabled
 * replica), what is wrong with each and the statements that fix them.
 */
export async function refuseUnrecheckedListWrites(sql: postgres.Sql): Promise<void> {
  const tables = await sql<{ table_name: string; scope_column: string; missing: string[] }[]>`
    select table_name, scope_column, missing from app_private.list_writes_not_rechecked()`;
  if (tables.length === 0) return;
  const found = await sql<RecheckTriggerRow[]>`
    select format('%I.%I', n.nspname, c.relname) as table_name, g.tgname::text as name, g.tgenabled::text as enabled, g.tgtype::integer as type,
           g.tgoldtable::text as old_rows, g.tgnewtable::text as new_rows, pg_catalog.pg_get_triggerdef(g.oid) as definition
      from app_private.sync_tables t
      join pg_catalog.pg_class c on c.oid = t.relation
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      join pg_catalog.pg_trigger g on g.tgrelid = t.relation and not g.tgisinternal
     where g.tgname = any (${Object.keys(RECHECK_TRIGGERS)}::text[])`;
  throw new SyncTableRefusal(tables.map(({ table_name: table, scope_column: scope, missing }) => {
    const generic = `app_private.recheck_write_into_list('editor', '${scope}')`;
    const absent = missing.filter((name) => !found.some((t) => t.table_name === table && t.name === name));
    const wrong = missing.flatMap((name) => {
      const row = found.find((t) => t.table_name === table && t.name === name);
      return row ? [{ row, ...recheckTriggerProblems(row) }] : [];
    });
    const what = [
      ...(absent.length > 0 ? [`missing: ${absent.join(", ")}`] : []),
      ...wrong.map(({ row, problems }) => `${row.name} ${problems.join(", ")}`),
    ].join("; ");
    const statements = missing.map((name) => {
      const bad = wrong.find((w) => w.row.name === name);
      if (!bad) return recheckTriggerStatement(table, name, generic);
      if (bad.enableOnly) return `  alter table ${table} enable trigger ${name};`;
      // Made again as step 3 writes it, calling the function (and role) it calls now if it is a
      // statement trigger after the write (a row or BEFORE trigger's function is no recheck).
      const execute = (bad.row.type & 3 ? undefined : /EXECUTE FUNCTION (.+)$/.exec(bad.row.definition)?.[1]) ?? generic;
      return recheckTriggerStatement(table, name, execute);
    });
    return `${table}: its writes into a list are not judged again by the writer's role after the locks they waited for ` +
      `(${what}), so a member removed from the list while his write waited (an insert's foreign-key check ` +
      `waits for the removal) still writes into it. In a migration, ` +
      (absent.length > 0
        ? `add docs/security-model.md's step 3 triggers, each with the role of its command's policy ('editor' below)`
        : `make them as docs/security-model.md's step 3 writes them`) +
      `:\n${statements.join("\n")}`;
  }).join("\n"));
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
