// A comparable picture of a database's schema: one sorted line per object
// (schemas, relations and their columns, indexes, functions, types, policies,
// triggers, comments, grants and default privileges), without OIDs, so two
// databases — or one database at two moments — can be compared line by line.
// The CLI's own history (supabase_migrations) and Postgres' catalogs are left out.
import type postgres from "postgres";

const LEFT_OUT = ["pg_catalog", "information_schema", "pg_toast", "supabase_migrations"];

export async function catalogSnapshot(sql: postgres.Sql): Promise<string[]> {
  return await sql.begin(async (tx) => {
    // Names print schema-qualified whatever the caller's search_path.
    await tx`set local search_path = ''`;
    const rows = await tx<{ line: string }[]>`
      with ns as (
        select oid, nspname from pg_catalog.pg_namespace
        where nspname <> all (${LEFT_OUT}) and nspname not like 'pg\\_temp%' and nspname not like 'pg\\_toast%'
      )
      select 'schema ' || ns.nspname || ' owner=' || pg_catalog.pg_get_userbyid(n.nspowner) || ' acl=' || coalesce(n.nspacl::text, '')
        || ' comment=' || coalesce(pg_catalog.obj_description(n.oid, 'pg_namespace'), '') as line
      from pg_catalog.pg_namespace n join ns using (oid)
      union all
      select 'relation ' || c.oid::regclass::text || ' kind=' || c.relkind::text || ' persistence=' || c.relpersistence::text
        || ' rls=' || c.relrowsecurity || ' acl=' || coalesce(c.relacl::text, '')
        || ' comment=' || coalesce(pg_catalog.obj_description(c.oid, 'pg_class'), '')
      from pg_catalog.pg_class c join ns on ns.oid = c.relnamespace
      union all
      select 'column ' || c.oid::regclass::text || '.' || a.attname || ' ' || pg_catalog.format_type(a.atttypid, a.atttypmod)
        || ' notnull=' || a.attnotnull || ' default=' || coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid), '')
        || ' identity=' || a.attidentity::text || ' generated=' || a.attgenerated::text || ' acl=' || coalesce(a.attacl::text, '')
      from pg_catalog.pg_attribute a
      join pg_catalog.pg_class c on c.oid = a.attrelid
      join ns on ns.oid = c.relnamespace
      left join pg_catalog.pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where a.attnum > 0 and not a.attisdropped
      union all
      select 'index ' || pg_catalog.pg_get_indexdef(i.indexrelid)
      from pg_catalog.pg_index i join pg_catalog.pg_class c on c.oid = i.indexrelid join ns on ns.oid = c.relnamespace
      union all
      select 'constraint ' || con.conrelid::regclass::text || ' ' || con.conname || ' ' || pg_catalog.pg_get_constraintdef(con.oid)
      from pg_catalog.pg_constraint con join ns on ns.oid = con.connamespace
      union all
      select 'function ' || p.oid::regprocedure::text || ' returns ' || pg_catalog.pg_get_function_result(p.oid)
        || ' secdef=' || p.prosecdef || ' volatile=' || p.provolatile::text || ' config=' || coalesce(p.proconfig::text, '')
        || ' acl=' || coalesce(p.proacl::text, '') || ' body=' || pg_catalog.md5(coalesce(p.prosrc, ''))
        || ' comment=' || coalesce(pg_catalog.obj_description(p.oid, 'pg_proc'), '')
      from pg_catalog.pg_proc p join ns on ns.oid = p.pronamespace
      union all
      select 'type ' || t.oid::regtype::text || ' kind=' || t.typtype::text
        || ' labels=' || coalesce((select string_agg(e.enumlabel, ',' order by e.enumsortorder) from pg_catalog.pg_enum e where e.enumtypid = t.oid), '')
      from pg_catalog.pg_type t join ns on ns.oid = t.typnamespace
      union all
      select 'policy ' || p.schemaname || '.' || p.tablename || ' "' || p.policyname || '" ' || p.permissive || ' ' || p.cmd
        || ' to ' || p.roles::text || ' using ' || coalesce(p.qual, '') || ' check ' || coalesce(p.with_check, '')
      from pg_catalog.pg_policies p
      where p.schemaname <> all (${LEFT_OUT})
      union all
      select 'trigger ' || pg_catalog.pg_get_triggerdef(t.oid) || ' enabled=' || t.tgenabled::text
        || ' comment=' || coalesce(pg_catalog.obj_description(t.oid, 'pg_trigger'), '')
      from pg_catalog.pg_trigger t join pg_catalog.pg_class c on c.oid = t.tgrelid join ns on ns.oid = c.relnamespace
      where not t.tgisinternal
      union all
      select 'default privileges for ' || pg_catalog.pg_get_userbyid(d.defaclrole) || ' in ' || coalesce(d.defaclnamespace::regnamespace::text, '*')
        || ' on ' || d.defaclobjtype::text || ' ' || d.defaclacl::text
      from pg_catalog.pg_default_acl d
      union all
      select 'extension ' || e.extname || ' in ' || e.extnamespace::regnamespace::text
      from pg_catalog.pg_extension e
      union all
      select 'event trigger ' || evtname || ' ' || evtevent || ' ' || evtfoid::regprocedure::text
      from pg_catalog.pg_event_trigger`;
    return rows.map((r) => r.line).sort();
  });
}

/** Lines only in `expected` (missing) and only in `actual` (extra). */
export function snapshotDiff(expected: string[], actual: string[]): { missing: string[]; extra: string[] } {
  const inActual = new Set(actual);
  const inExpected = new Set(expected);
  return { missing: expected.filter((l) => !inActual.has(l)), extra: actual.filter((l) => !inExpected.has(l)) };
}
