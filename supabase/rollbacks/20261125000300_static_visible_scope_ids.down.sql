-- Down step of 20261125000300_static_visible_scope_ids.sql: visible_scope_ids()
-- reads the scope tables with dynamic SQL again, as 20261122010000_sync_engine.sql
-- made it (CREATE OR REPLACE: the function the sync policies call).
drop trigger write_visible_scope_ids on app_private.sync_tables;
drop function app_private.write_visible_scope_ids();
create or replace function app_private.visible_scope_ids()
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
  -- A scope table is a synced table whose scope is its own id. Read as the
  -- caller, so the scope table's own RLS policies decide.
  for v_table in select t.relation from app_private.sync_tables t where t.scope_column = 'id' order by t.collection loop
    execute format('select coalesce(array_agg(s.id), ''{}'') from %s s', v_table) into v_more;
    v_ids := v_ids || v_more;
  end loop;
  return v_ids;
end;
$$;
comment on function app_private.visible_scope_ids() is
  'The ids of every scope row (e.g. list) the caller can read under the scope tables'' own RLS policies. Used by the sync policies and pulls as an InitPlan: (select app_private.visible_scope_ids()).';
drop function app_private.read_visible_scope_ids();
