// A comparable picture of a database's schema: one sorted line per object
// (schemas, relations and their columns, indexes, views' definitions,
// functions, types, policies, triggers, publications, comments, owners,
// grants and default privileges) and the rows of the sync registry, without
// OIDs, so two databases — or one database at two moments — can be compared
// line by line. Each line starts with what the object is and its name, so a
// difference names it. Bodies and view definitions print as their md5.
// The CLI's own history (supabase_migrations) and Postgres' catalogs are left out.
import type postgres from "postgres";

const LEFT_OUT = ["pg_catalog", "information_schema", "pg_toast", "supabase_migrations"];

/**
 * Tables whose rows are schema: app_private.enable_sync() and enable_sync_membership() register a
 * table in them, so a down step that drops a synced table or undoes an enable_sync must leave them
 * as they were. Columns set by the clock are left out.
 */
const REGISTRY_TABLES: { table: string; leaveOut: string[] }[] = [
  { table: "app_private.sync_tables", leaveOut: ["created_at"] },
  { table: "app_private.sync_memberships", leaveOut: [] },
];

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
        || ' owner=' || pg_catalog.pg_get_userbyid(c.relowner)
        || ' rls=' || c.relrowsecurity || ' force_rls=' || c.relforcerowsecurity || ' options=' || coalesce(c.reloptions::text, '')
        || ' definition=' || case when c.relkind in ('v', 'm') then pg_catalog.md5(pg_catalog.pg_get_viewdef(c.oid)) else '' end
        || ' acl=' || coalesce(c.relacl::text, '')
        || ' comment=' || coalesce(pg_catalog.obj_description(c.oid, 'pg_class'), '')
      from pg_catalog.pg_class c join ns on ns.oid = c.relnamespace
      union all
      select 'column ' || c.oid::regclass::text || '.' || a.attname || ' ' || pg_catalog.format_type(a.atttypid, a.atttypmod)
        || ' notnull=' || a.attnotnull || ' default=' || coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid), '')
        || ' identity=' || a.attidentity::text || ' generated=' || a.attgenerated::text || ' acl=' || coalesce(a.attacl::text, '')
        || ' comment=' || coalesce(pg_catalog.col_description(c.oid, a.attnum), '')
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
        || ' comment=' || coalesce(pg_catalog.obj_description(con.oid, 'pg_constraint'), '')
      from pg_catalog.pg_constraint con join ns on ns.oid = con.connamespace
      union all
      select 'function ' || p.oid::regprocedure::text || ' (' || pg_catalog.pg_get_function_arguments(p.oid) || ')'
        || ' returns ' || pg_catalog.pg_get_function_result(p.oid)
        || ' kind=' || p.prokind::text || ' language=' || l.lanname || ' owner=' || pg_catalog.pg_get_userbyid(p.proowner)
        || ' secdef=' || p.prosecdef || ' strict=' || p.proisstrict || ' volatile=' || p.provolatile::text
        || ' parallel=' || p.proparallel::text || ' leakproof=' || p.proleakproof || ' cost=' || p.procost || ' rows=' || p.prorows
        || ' config=' || coalesce(p.proconfig::text, '') || ' acl=' || coalesce(p.proacl::text, '')
        || ' body=' || pg_catalog.md5(coalesce(p.prosrc, '') || coalesce(pg_catalog.pg_get_function_sqlbody(p.oid), ''))
        || ' comment=' || coalesce(pg_catalog.obj_description(p.oid, 'pg_proc'), '')
      from pg_catalog.pg_proc p join ns on ns.oid = p.pronamespace join pg_catalog.pg_language l on l.oid = p.prolang
      union all
      select 'type ' || t.oid::regtype::text || ' kind=' || t.typtype::text || ' owner=' || pg_catalog.pg_get_userbyid(t.typowner)
        || ' comment=' || coalesce(pg_catalog.obj_description(t.oid, 'pg_type'), '')
        || ' labels=' || coalesce((select string_agg(e.enumlabel, ',' order by e.enumsortorder) from pg_catalog.pg_enum e where e.enumtypid = t.oid), '')
      from pg_catalog.pg_type t join ns on ns.oid = t.typnamespace
      union all
      select 'policy ' || pol.polrelid::regclass::text || ' "' || pol.polname || '" '
        || case when pol.polpermissive then 'PERMISSIVE' else 'RESTRICTIVE' end || ' ' || pol.polcmd::text
        || ' to ' || (select pg_catalog.string_agg(role, ',' order by role)
                      from (select case when r = 0 then 'public' else pg_catalog.pg_get_userbyid(r)::text end as role
                            from pg_catalog.unnest(pol.polroles) r) roles)
        || ' using ' || coalesce(pg_catalog.pg_get_expr(pol.polqual, pol.polrelid), '')
        || ' check ' || coalesce(pg_catalog.pg_get_expr(pol.polwithcheck, pol.polrelid), '')
        || ' comment=' || coalesce(pg_catalog.obj_description(pol.oid, 'pg_policy'), '')
      from pg_catalog.pg_policy pol join pg_catalog.pg_class c on c.oid = pol.polrelid join ns on ns.oid = c.relnamespace
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
      from pg_catalog.pg_event_trigger
      union all
      select 'publication ' || pub.pubname || ' owner=' || pg_catalog.pg_get_userbyid(pub.pubowner) || ' all_tables=' || pub.puballtables
        || ' insert=' || pub.pubinsert || ' update=' || pub.pubupdate || ' delete=' || pub.pubdelete || ' truncate=' || pub.pubtruncate
        || ' via_root=' || pub.pubviaroot
      from pg_catalog.pg_publication pub
      union all
      select 'publication ' || pub.pubname || ' table ' || pr.prrelid::regclass::text || ' columns=' || coalesce(pr.prattrs::text, '')
        || ' where=' || coalesce(pg_catalog.pg_get_expr(pr.prqual, pr.prrelid), '')
      from pg_catalog.pg_publication_rel pr join pg_catalog.pg_publication pub on pub.oid = pr.prpubid
      union all
      select 'publication ' || pub.pubname || ' schema ' || pn.pnnspid::regnamespace::text
      from pg_catalog.pg_publication_namespace pn join pg_catalog.pg_publication pub on pub.oid = pn.pnpubid`;
    const lines = rows.map((r) => r.line);
    for (const { table, leaveOut } of REGISTRY_TABLES) {
      const [{ exists }] = await tx<{ exists: boolean }[]>`select pg_catalog.to_regclass(${table}) is not null as exists`;
      if (!exists) continue;
      // A regclass column prints schema-qualified (search_path is empty).
      const registered = await tx.unsafe<{ line: string }[]>(
        `select 'row ${table} ' || (pg_catalog.to_jsonb(r) operator(pg_catalog.-) $1::text[])::text as line from ${table} r`,
        [leaveOut],
      );
      lines.push(...registered.map((r) => r.line));
    }
    return lines.sort();
  });
}

/** Lines only in `expected` (missing) and only in `actual` (extra). */
export function snapshotDiff(expected: string[], actual: string[]): { missing: string[]; extra: string[] } {
  const inActual = new Set(actual);
  const inExpected = new Set(expected);
  return { missing: expected.filter((l) => !inActual.has(l)), extra: actual.filter((l) => !inExpected.has(l)) };
}

/**
 * Which down step left each difference found re-applying the migrations. diffs[k]: the catalog
 * after re-applying the first k migrations against the one the rollback to that point left, when
 * down step migrations[k] had just run. A difference a down step leaves stays at the points below
 * it (re-applying an older migration does not mend it), so it is named by the newest point where it shows.
 */
export function leftBy(migrations: string[], diffs: string[][]): Map<string, { line: string; firstAt: string }[]> {
  const byStep = new Map<string, { line: string; firstAt: string }[]>();
  let carried = new Map<string, string>();
  for (let k = migrations.length - 1; k >= 1; k--) {
    const next = new Map<string, string>();
    for (const line of diffs[k]) {
      const step = carried.get(line) ?? migrations[k];
      next.set(line, step);
      if (!carried.has(line)) byStep.set(step, [...(byStep.get(step) ?? []), { line, firstAt: migrations[k - 1] }]);
    }
    carried = next;
  }
  return byStep;
}
