-- Down step of 20261126000800_sync_apply_one_update_per_table.sql: sync_apply
-- as 20261126000300_sync_apply_set_based_checks.sql made it (one statement per
-- set of changed columns, the planner's groups as they come), without the
-- UPDATE builder it used.
create or replace function app_private.sync_apply(p_writes jsonb)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_group jsonb;
  v_rows jsonb;
  v_row jsonb;
  v_kind text;
  v_collection text;
  v_table regclass;
  v_columns text[];
  v_sql text;
  v_done jsonb;
  v_failed jsonb := '[]'::jsonb;
  v_part jsonb;
  v_state text;
  v_constraint text;
  v_column text;
  v_message text;
begin
  -- p_writes: [{collection, kind: insert|update|delete, columns: [...], rows: [{id, ...}]}], planned by
  -- functions/api/sync/plan-batch.ts. Runs as the caller: the table's RLS policies, grants and
  -- constraints decide. A group is written in one statement; when the database refuses it, its rows
  -- are retried one by one (each in its own subtransaction) so that only the rows it refuses fail.
  for v_group in select g from jsonb_array_elements(p_writes) g loop
    v_kind := v_group ->> 'kind';
    v_collection := v_group ->> 'collection';
    v_rows := v_group -> 'rows';
    select t.relation into v_table from app_private.sync_tables t where t.collection = v_collection;
    if v_table is null then
      raise exception 'sync_apply: unknown collection %', v_collection using errcode = 'invalid_parameter_value';
    end if;
    select coalesce(array_agg(c), '{}') into v_columns from jsonb_array_elements_text(coalesce(v_group -> 'columns', '[]'::jsonb)) c;

    if v_kind = 'insert' then
      v_sql := format(
        -- no RETURNING: it would apply the SELECT policies to a row whose access rows an AFTER trigger adds
        'insert into %1$s (id%2$s) select id%2$s from jsonb_populate_recordset(null::%1$s, $1)',
        v_table, (select coalesce(string_agg(', ' || quote_ident(c), ''), '') from unnest(v_columns) c));
    elsif v_kind = 'update' then
      v_sql := format(
        'with w as (update %1$s t set %2$s from jsonb_populate_recordset(null::%1$s, $1) v where t.id = v.id returning t.id) '
        'select coalesce(jsonb_agg(w.id), ''[]'') from w',
        v_table, (select string_agg(format('%1$I = v.%1$I', c), ', ') from unnest(v_columns) c));
    elsif v_kind = 'delete' then
      v_sql := format(
        'with w as (delete from %1$s t using jsonb_to_recordset($1) as v(id uuid) where t.id = v.id returning t.id) '
        'select coalesce(jsonb_agg(w.id), ''[]'') from w',
        v_table);
    else
      raise exception 'sync_apply: unknown kind %', v_kind using errcode = 'invalid_parameter_value';
    end if;

    begin
      if v_kind = 'insert' then
        execute v_sql using v_rows;
      else
        execute v_sql using v_rows into v_done;
      end if;
    -- What a row may be refused for; anything else (timeouts, deadlocks, bugs) aborts the batch.
    exception when integrity_constraint_violation or data_exception or insufficient_privilege or raise_exception then
      v_done := '[]'::jsonb;
      for v_row in select r from jsonb_array_elements(v_rows) r loop
        begin
          if v_kind = 'insert' then
            execute v_sql using jsonb_build_array(v_row);
          else
            execute v_sql using jsonb_build_array(v_row) into v_part;
            v_done := v_done || coalesce(v_part, '[]'::jsonb);
          end if;
        exception when integrity_constraint_violation or data_exception or insufficient_privilege or raise_exception then
          get stacked diagnostics v_state = returned_sqlstate, v_constraint = constraint_name,
                                  v_column = column_name, v_message = message_text;
          v_failed := v_failed || jsonb_build_object(
            'collection', v_collection, 'id', v_row ->> 'id', 'kind', v_kind, 'sqlstate', v_state,
            'constraint', nullif(v_constraint, ''), 'column', nullif(v_column, ''), 'message', left(v_message, 200));
        end;
      end loop;
    end;
    -- Rows an update or delete left alone: the caller can see them but the
    -- policies do not let them write (e.g. a viewer). (An insert the policies
    -- refuse raises, and was isolated above.) NOT IN over the variables: one
    -- hashed lookup per row.
    if v_kind <> 'insert' then
      v_failed := v_failed || coalesce((
        select jsonb_agg(jsonb_build_object('collection', v_collection, 'id', r ->> 'id', 'kind', v_kind, 'sqlstate', 'not_permitted'))
          from jsonb_array_elements(v_rows) r
         where (r ->> 'id') not in (select jsonb_array_elements_text(v_done))
           and (r ->> 'id') not in (select f ->> 'id' from jsonb_array_elements(v_failed) f where f ->> 'collection' = v_collection)), '[]'::jsonb);
    end if;
  end loop;

  return jsonb_build_object('failed', v_failed);
end;
$$;

drop function app_private.sync_update_sql(regclass, text[]);
