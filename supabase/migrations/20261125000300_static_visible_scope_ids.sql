-- What: app_private.visible_scope_ids() reads the scope tables with static SQL
-- that a trigger on the registry (app_private.sync_tables) writes into its
-- body whenever the registry changes (CREATE OR REPLACE: the same function,
-- so the policies that call it are unchanged); the dynamic read it did
-- before becomes app_private.read_visible_scope_ids(), its fallback for a
-- scope table renamed after the body was written.
-- Why: the dynamic read (EXECUTE) was parsed and planned again on every call,
-- ~0.4 ms, and a pull statement calls it two to four times (its scope list,
-- the sync tables' policies, the planner's estimates); static SQL keeps its
-- plan for the session, ~0.17 ms (docs/performance.md). The answer is the
-- same: the ids of every scope row the caller may read under the scope
-- tables' own RLS policies, read as the caller.
-- Rollback: supabase/rollbacks/20261125000300_static_visible_scope_ids.down.sql

create function app_private.read_visible_scope_ids()
returns uuid[]
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  v_table regclass;
  v_ids uuid[] := '{}';
  v_more uuid[];
begin
  for v_table in select t.relation from app_private.sync_tables t where t.scope_column = 'id' order by t.collection loop
    execute format('select coalesce(array_agg(s.id), ''{}'') from %s s', v_table) into v_more;
    v_ids := v_ids || v_more;
  end loop;
  return v_ids;
end;
$$;
comment on function app_private.read_visible_scope_ids() is
  'The ids of every scope row the caller can read, read table by table with dynamic SQL (planned on every call): what app_private.visible_scope_ids() falls back to when the static read written into its body names a table that is no longer there.';
revoke all on function app_private.read_visible_scope_ids() from public, anon, authenticated, service_role;
grant execute on function app_private.read_visible_scope_ids() to authenticated;

comment on function app_private.visible_scope_ids() is
  'The ids of every scope row (e.g. list) the caller can read under the scope tables'' own RLS policies. Used by the sync policies and pulls. Its body is written by app_private.write_visible_scope_ids() whenever app_private.sync_tables changes: static SQL, planned once per session.';

create function app_private.write_visible_scope_ids()
returns trigger
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_reads text;
begin
  -- A scope table is a synced table whose scope is its own id.
  select string_agg(format('select s.id from %s s', t.relation), ' union all ' order by t.collection)
    into v_reads
    from app_private.sync_tables t
   where t.scope_column = 'id';
  -- CREATE OR REPLACE keeps the function's oid, comment and grants (and so the
  -- policies that call it). A table renamed since (the text names it) raises
  -- undefined_table: the dynamic read answers instead.
  execute format(
    'create or replace function app_private.visible_scope_ids() returns uuid[] language plpgsql stable security invoker '
    'set search_path = '''' as %L',
    format(E'\nbegin\n  return array(%s);\nexception when undefined_table then\n  return app_private.read_visible_scope_ids();\nend;\n',
           coalesce(v_reads, 'select null::uuid where false')));
  return null;
end;
$$;
comment on function app_private.write_visible_scope_ids() is
  'Statement trigger of app_private.sync_tables: writes the reads of the scope tables into app_private.visible_scope_ids() as static SQL. Runs as the role that changes the registry (enable_sync/disable_sync in migrations: the owner).';
revoke all on function app_private.write_visible_scope_ids() from public, anon, authenticated, service_role;

create trigger write_visible_scope_ids
  after insert or update or delete or truncate on app_private.sync_tables
  for each statement execute function app_private.write_visible_scope_ids();

-- Write the body for the registry as it is now (a statement trigger fires for a statement that changes no row).
update app_private.sync_tables set collection = collection where false;
