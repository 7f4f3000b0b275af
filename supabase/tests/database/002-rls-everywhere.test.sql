-- Every table in every schema we own has RLS enabled and at least one policy,
-- and the policy rules of the project hold. Written over the catalog, so it
-- covers every table a later migration adds without being edited.
--
-- "Schemas we own" = every schema except Postgres' own and the platform's
-- (Supabase's auth/storage/realtime/… and the CLI's migration history), the
-- extensions schema and the pgTAP helpers. Tables that belong to an extension
-- are not ours either.
begin;
select plan(10);

create temporary view our_tables as
select n.nspname as schema_name, c.relname as table_name, c.oid as relid, c.relrowsecurity as rls
from pg_catalog.pg_class c
join pg_catalog.pg_namespace n on n.oid = c.relnamespace
where c.relkind in ('r', 'p')
  and n.nspname not in (
    'pg_catalog', 'information_schema', 'pg_toast',
    -- the platform's (supabase/postgres and the CLI) and ours-but-not-data
    'auth', 'storage', 'realtime', '_realtime', 'graphql', 'graphql_public', 'vault', 'pgsodium', 'pgsodium_masks',
    'pgbouncer', 'net', 'supabase_functions', 'supabase_migrations', 'cron', '_analytics', 'pgtle', 'extensions', 'tests'
  )
  and n.nspname not like 'pg\_%'
  and not exists (select 1 from pg_catalog.pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e');

select isnt_empty($$ select * from our_tables $$, 'the check sees our tables (it is not vacuous)');
select ok((select count(*) from our_tables where schema_name = 'app_private') > 0, 'app_private is among the schemas checked');

select is_empty($$ select schema_name || '.' || table_name from our_tables where not rls $$,
  'every table in every schema we own has row level security enabled');
select is_empty($$ select schema_name || '.' || table_name from our_tables t
                  where not exists (select 1 from pg_catalog.pg_policy p where p.polrelid = t.relid) $$,
  'every table in every schema we own has at least one policy');
select is_empty($$ select schema_name || '.' || table_name from our_tables t
                  where not exists (select 1 from pg_catalog.pg_constraint k where k.conrelid = t.relid and k.contype = 'p') $$,
  'every table in every schema we own has a primary key');

-- The policy rules of the brief: one policy per command, for an exact role,
-- and UPDATE policies with both USING and WITH CHECK.
select is_empty($$ select schema_name || '.' || table_name || ': ' || p.polname from our_tables t
                  join pg_catalog.pg_policy p on p.polrelid = t.relid where p.polcmd = '*' $$,
  'no policy is FOR ALL (one policy per command)');
select is_empty($$ select schema_name || '.' || table_name || ': ' || p.polname from our_tables t
                  join pg_catalog.pg_policy p on p.polrelid = t.relid where 0::oid = any (p.polroles) $$,
  'every policy names its role (none is TO public)');
select is_empty($$ select schema_name || '.' || table_name || ': ' || p.polname from our_tables t
                  join pg_catalog.pg_policy p on p.polrelid = t.relid
                  where p.polcmd = 'w' and (p.polqual is null or p.polwithcheck is null) $$,
  'every UPDATE policy has both USING and WITH CHECK');

-- The helper agrees, schema by schema.
select tests.rls_enabled('app_private');
select tests.rls_enabled('public');

select * from finish();
rollback;
