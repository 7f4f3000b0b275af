// Which schemas are tidesync's: every schema except Postgres' own and the
// platform's (Supabase's auth/storage/realtime/…, the CLI's migration history,
// extensions, the pgTAP helpers). The same list is written out in
// supabase/tests/database/002-rls-everywhere.test.sql.
import type postgres from "postgres";

export const PLATFORM_SCHEMAS = [
  "pg_catalog", "information_schema", "pg_toast",
  "auth", "storage", "realtime", "_realtime", "graphql", "graphql_public", "vault", "pgsodium", "pgsodium_masks",
  "pgbouncer", "net", "supabase_functions", "supabase_migrations", "cron", "_analytics", "pgtle", "extensions", "tests",
] as const;

/** Our schemas, sorted; `public` is always among them. */
export async function ourSchemas(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<{ nspname: string }[]>`
    select n.nspname
    from pg_catalog.pg_namespace n
    where n.nspname <> all (${PLATFORM_SCHEMAS as unknown as string[]})
      and n.nspname not like 'pg\\_%'
      and not exists (select 1 from pg_catalog.pg_depend d
                      where d.classid = 'pg_namespace'::regclass and d.objid = n.oid and d.deptype = 'e')
    order by n.nspname collate "C"`;
  return rows.map((r) => r.nspname);
}
