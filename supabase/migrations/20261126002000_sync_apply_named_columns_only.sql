-- What: app_private.sync_apply() builds the values it writes from the
-- columns the rows name only: jsonb_to_recordset / jsonb_to_record with an
-- explicit column list (app_private.sync_record_columns: id and the named
-- columns, a domain column as the domain's base type), where it built a whole
-- row of the table (jsonb_populate_recordset(null::table, …) and
-- jsonb_populate_record(null::table, …)). An insert still names only the
-- rows' columns (the table's defaults fill the others); an update still sets a
-- column a row leaves out to its own value.
-- Why: building a whole row runs every column's input, and a domain's NOT NULL
-- on every column the row does not carry (populate_record checks a domain on
-- null). A column typed `label public.nonblank default 'unnamed'`
-- (`nonblank` = text not null check (value <> '')) made such a table
-- impossible to push: every update that does not touch `label`, and every
-- create without it, was refused "a required field is missing" (23502),
-- though the same writes in SQL as `authenticated` are accepted. A domain
-- column is read as its base type and checked by the write's own assignment,
-- for the values written only.
-- No slower: the builders read the catalog once per statement (~35 µs, where
-- the UPDATE builder took ~10), and reading only the named columns costs no
-- more per row; through sync_apply as the caller, a 500-op create push took
-- 15.1 ms before and 15.2 after, a 500-op edit push (8 column shapes) 21.1
-- and 21.1 (medians of 100 rounds, side by side).
-- pgTAP 102 (a domain NOT NULL column with a default, left out of a create
-- and an update).
-- Rollback: supabase/rollbacks/20261126002000_sync_apply_named_columns_only.down.sql

-- The type a domain stands on (a domain over a domain followed to the end),
-- with its type modifier. Text only.
create function app_private.sync_base_type(p_type oid, p_typmod integer)
returns text
language sql
stable
set search_path = ''
as $$
  with recursive d(type_id, type_mod, depth) as (
    select p_type, p_typmod, 0
    union all
    select b.typbasetype, b.typtypmod, d.depth + 1
      from d join pg_catalog.pg_type b on b.oid = d.type_id and b.typtype = 'd')
  select pg_catalog.format_type(d.type_id, d.type_mod) from d order by d.depth desc limit 1;
$$;
comment on function app_private.sync_base_type(oid, integer) is
  'The type (with its modifier) a domain stands on, a domain over a domain followed to the end; for app_private.sync_record_columns. Text only.';
revoke all on function app_private.sync_base_type(oid, integer) from public, anon, authenticated, service_role;
grant execute on function app_private.sync_base_type(oid, integer) to authenticated;

-- The column definition list of the rows sync_apply writes: `id uuid` and each
-- named column with its type, a domain as its base type, so that a row leaving
-- the column out reads it as null without running the domain's NOT NULL or
-- CHECK; the write assigns each value to its column, and the domain checks the
-- values written. Columns the table does not have are left out (the write
-- names them, and fails). PL/pgSQL, as the two builders below, so that its
-- query is planned once per connection, not per call (as SQL functions nested
-- in each other it cost ~190 µs a statement; so ~35 µs, against ~10 µs for
-- the builder it replaces); the recursion only for a domain. Text only.
create function app_private.sync_record_columns(p_table regclass, p_columns text[])
returns text
language plpgsql
stable
set search_path = ''
as $$
begin
  return (
    select 'id uuid' || coalesce(string_agg(format(', %I %s', a.attname,
             case when ty.typtype = 'd' then app_private.sync_base_type(a.atttypid, a.atttypmod)
                  else pg_catalog.format_type(a.atttypid, a.atttypmod) end), '' order by u.ord), '')
      from unnest(p_columns) with ordinality as u(name, ord)
      join pg_catalog.pg_attribute a on a.attrelid = p_table and a.attname = u.name and a.attnum > 0 and not a.attisdropped
      join pg_catalog.pg_type ty on ty.oid = a.atttypid);
end;
$$;
comment on function app_private.sync_record_columns(regclass, text[]) is
  'Column definition list (id uuid, then each named column with its type, a domain as its base type) with which app_private.sync_apply reads the rows it writes: only the named columns, and no domain check on a column a row leaves out. Builds text only.';
revoke all on function app_private.sync_record_columns(regclass, text[]) from public, anon, authenticated, service_role;
grant execute on function app_private.sync_record_columns(regclass, text[]) to authenticated;

-- The UPDATE of sync_apply: as before, each of `p_columns` is set to the row's
-- value where the row carries it, else to its own value; the values are read
-- with sync_record_columns (no whole row of the table).
create or replace function app_private.sync_update_sql(p_table regclass, p_columns text[])
returns text
language plpgsql
stable
set search_path = ''
as $$
begin
  return format(
    'with w as (update %1$s t set %2$s from jsonb_array_elements($1) e(doc) '
    'cross join lateral jsonb_to_record(e.doc) as v(%3$s) where t.id = v.id returning t.id) '
    'select coalesce(jsonb_agg(w.id), ''[]'') from w',
    p_table,
    (select string_agg(format('%1$I = case when e.doc ? %1$L then v.%1$I else t.%1$I end', c), ', ' order by c) from unnest(p_columns) c),
    app_private.sync_record_columns(p_table, p_columns));
end;
$$;
comment on function app_private.sync_update_sql(regclass, text[]) is
  'Text of the UPDATE app_private.sync_apply runs for rows that each carry the columns they change: each column is set to the row''s value where the row carries it, else to its own value; values read with sync_record_columns (the named columns only). Builds text only.';

-- The INSERT of sync_apply for rows that all carry `p_columns` ($1: a JSON
-- array of such rows). No RETURNING: it would apply the SELECT policies to a
-- row whose access rows an AFTER trigger adds. Text only.
create function app_private.sync_insert_sql(p_table regclass, p_columns text[])
returns text
language plpgsql
stable
set search_path = ''
as $$
begin
  return format(
    'insert into %1$s (id%2$s) select v.id%3$s from jsonb_to_recordset($1) as v(%4$s)',
    p_table,
    (select coalesce(string_agg(', ' || quote_ident(c), '' order by o), '') from unnest(p_columns) with ordinality x(c, o)),
    (select coalesce(string_agg(', v.' || quote_ident(c), '' order by o), '') from unnest(p_columns) with ordinality x(c, o)),
    app_private.sync_record_columns(p_table, p_columns));
end;
$$;
comment on function app_private.sync_insert_sql(regclass, text[]) is
  'Text of the INSERT app_private.sync_apply runs for rows that all carry the named columns: only those columns (the table''s defaults fill the others), values read with sync_record_columns. Builds text only.';
revoke all on function app_private.sync_insert_sql(regclass, text[]) from public, anon, authenticated, service_role;
grant execute on function app_private.sync_insert_sql(regclass, text[]) to authenticated;

-- sync_apply as 20261126000800 made it, its INSERT from sync_insert_sql.
create or replace function app_private.sync_apply(p_writes jsonb)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_group jsonb;
  v_statement jsonb;
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
  -- constraints decide. An insert group's rows all carry its columns; an update group's rows each
  -- carry the columns they change (the group's columns are all of them). A group is written in one
  -- statement; when the database refuses it, its rows are retried one by one (each in its own
  -- subtransaction) so that only the rows it refuses fail. Only the named columns are read from
  -- the rows (sync_record_columns).
  for v_group in select g from jsonb_array_elements(p_writes) g loop
    v_kind := v_group ->> 'kind';
    v_collection := v_group ->> 'collection';
    select t.relation into v_table from app_private.sync_tables t where t.collection = v_collection;
    if v_table is null then
      raise exception 'sync_apply: unknown collection %', v_collection using errcode = 'invalid_parameter_value';
    end if;
    if v_kind is null or v_kind not in ('insert', 'update', 'delete') then
      raise exception 'sync_apply: unknown kind %', v_kind using errcode = 'invalid_parameter_value';
    end if;

    -- A trigger on UPDATE OF some columns fires for every row of a statement that names one of
    -- them: for such a table, one statement per set of changed columns, as a direct write would.
    if v_kind = 'update' and exists (
      select 1 from pg_catalog.pg_trigger tg
       where tg.tgrelid = v_table and not tg.tgisinternal
         and tg.tgtype & 16 <> 0 -- TRIGGER_TYPE_UPDATE
         and cardinality(tg.tgattr::smallint[]) > 0) then
      select jsonb_agg(jsonb_build_object('columns', s.columns, 'rows', s.rows)) into v_group
        from (select x.columns, jsonb_agg(x.r) as rows
                from (select r, (select coalesce(jsonb_agg(k order by k), '[]'::jsonb) from jsonb_object_keys(r) k where k <> 'id') as columns
                        from jsonb_array_elements(v_group -> 'rows') r) x
               group by x.columns) s;
    else
      v_group := jsonb_build_array(v_group);
    end if;

    for v_statement in select s from jsonb_array_elements(coalesce(v_group, '[]'::jsonb)) s loop
      v_rows := v_statement -> 'rows';
      v_columns := array(select jsonb_array_elements_text(coalesce(v_statement -> 'columns', '[]'::jsonb)));
      if v_kind = 'insert' then
        v_sql := app_private.sync_insert_sql(v_table, v_columns);
      elsif v_kind = 'update' then
        v_sql := app_private.sync_update_sql(v_table, v_columns);
      else
        v_sql := format(
          'with w as (delete from %1$s t using jsonb_to_recordset($1) as v(id uuid) where t.id = v.id returning t.id) '
          'select coalesce(jsonb_agg(w.id), ''[]'') from w',
          v_table);
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
              -- An update row alone names only its own columns.
              execute case when v_kind = 'update'
                           then app_private.sync_update_sql(v_table, array(select k from jsonb_object_keys(v_row) k where k <> 'id'))
                           else v_sql end
                using jsonb_build_array(v_row) into v_part;
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
  end loop;

  return jsonb_build_object('failed', v_failed);
end;
$$;
