-- What: app_private.visible_scope_ids() (the body app_private.write_visible_scope_ids() writes)
-- and its fallback app_private.read_visible_scope_ids() plan their read of the scope tables with
-- bitmap scans allowed (`set enable_bitmapscan = on`), whatever the calling transaction set.
-- Why: a pull's page turns bitmap scans off for its own transaction (functions/api/sync/
-- pull-store.ts, PAGE_SETTINGS_SQL: the change entries' scans must walk one scope's index in
-- order). The read of the caller's scopes ran under that setting too, and public.lists' read
-- policy is an OR (a member's lists, or a new list of its creator's) that Postgres answers from
-- two indexes only with a BitmapOr: without it, a sequential scan of every list in the
-- database, two to four times a page. With 100,000 users an incremental page took 5× its time
-- (scope-cost bench, docs/performance.md); the cost grew with the app's users, not the caller's
-- lists. A function's SET also holds while its plan is made, so the cached plan is the indexed one.
-- Tests: tests/integration/pull-page-reads.test.ts ("a pull page among many other users' lists").
-- Rollback: supabase/rollbacks/20261128007700_visible_scopes_read_by_index_in_a_pull.down.sql

alter function app_private.read_visible_scope_ids() set enable_bitmapscan = on;

create or replace function app_private.write_visible_scope_ids()
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
  -- undefined_table: the dynamic read answers instead. Bitmap scans on: a
  -- scope table's policies may need a BitmapOr to read by index, and a pull's
  -- page turns them off for its transaction (migration 20261128007700).
  execute format(
    'create or replace function app_private.visible_scope_ids() returns uuid[] language plpgsql stable security invoker '
    'set search_path = '''' set enable_bitmapscan = on as %L',
    format(E'\nbegin\n  return array(%s);\nexception when undefined_table then\n  return app_private.read_visible_scope_ids();\nend;\n',
           coalesce(v_reads, 'select null::uuid where false')));
  return null;
end;
$$;

-- Write the body for the registry as it is now (a statement trigger fires for a statement that changes no row).
update app_private.sync_tables set collection = collection where false;
