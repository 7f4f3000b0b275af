-- Down step of 20261128007700_visible_scopes_read_by_index_in_a_pull.sql: the scope reads plan
-- under the caller's settings again, as migration 20261125000300 wrote them.
alter function app_private.read_visible_scope_ids() reset enable_bitmapscan;

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
  -- undefined_table: the dynamic read answers instead.
  execute format(
    'create or replace function app_private.visible_scope_ids() returns uuid[] language plpgsql stable security invoker '
    'set search_path = '''' as %L',
    format(E'\nbegin\n  return array(%s);\nexception when undefined_table then\n  return app_private.read_visible_scope_ids();\nend;\n',
           coalesce(v_reads, 'select null::uuid where false')));
  return null;
end;
$$;

update app_private.sync_tables set collection = collection where false;
