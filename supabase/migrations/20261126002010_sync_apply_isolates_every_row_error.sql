-- What: app_private.sync_apply() isolates every error a row raises, not only
-- the classes it expected (22 data exception, 23 integrity, 42501, P0001):
-- a statement that fails is retried row by row, and a row that fails is that
-- row's refusal whatever the SQLSTATE, except the errors that end the
-- transaction (app_private.sync_error_aborts: serialization failure,
-- deadlock, lock timeout, read-only transaction, out of memory, disk full,
-- shutdown, internal errors; a statement timeout or cancel is never caught).
-- And a refused row names its column where Postgres names none
-- (app_private.sync_refused_column, run for refused rows only): for a value
-- its type or domain refuses (numeric overflow, a date or real out of range,
-- a value not in the enum, "abc" for text[], "not a time" for a timestamp, a
-- domain's NOT NULL or CHECK) it converts the row's named columns one by
-- one as the write does, and names the first that fails (one with the
-- refusal's SQLSTATE first); for a generated or identity-always column
-- written (428C9) it names that column.
-- Why: a synced table with a generated column (or an identity-always one)
-- that has a column grant: a push writing it raised 428C9, which escaped
-- sync_apply and answered the whole batch 500; any unforeseen per-row error
-- did the same. And a type or domain refusal was answered on /ops/i/data
-- with no column, so a client could not tell which field to fix.
-- The happy path is unchanged: the handlers run only when a statement fails.
-- pgTAP 102 (a generated column, an identity column, a trigger's own
-- SQLSTATE, the column of each type and domain refusal, errors that end the
-- transaction still end it); functions/api/sync/db-refusal.ts answers them
-- (tests/unit/db-refusal.unit.test.ts).
-- Rollback: supabase/rollbacks/20261126002010_sync_apply_isolates_every_row_error.down.sql

-- Whether an error must end the push's transaction rather than refuse one row:
-- it says nothing about the row (the transaction is doomed, or the server is
-- in trouble) and the batch is answered 503 or 500 as a whole. PL/pgSQL's
-- `when others` never catches a cancel or a statement timeout (57014) anyway.
create function app_private.sync_error_aborts(p_sqlstate text)
returns boolean
language sql
immutable
set search_path = ''
as $$
  select left(p_sqlstate, 2) in (
           '08', -- connection exception
           '0B', '25', '2D', '3B', -- transaction state (a read-only transaction: 25006)
           '40', -- transaction rollback: serialization failure 40001, deadlock 40P01
           '53', -- insufficient resources: disk full, out of memory, too many connections
           '57', -- operator intervention: cancel, statement timeout, shutdown
           '58', -- system error (I/O)
           '72', -- snapshot too old
           'F0', -- configuration file error
           'XX') -- internal error, data or index corrupted
      or p_sqlstate = '55P03'; -- lock timeout
$$;
comment on function app_private.sync_error_aborts(text) is
  'Whether an error (SQLSTATE) must end app_private.sync_apply''s transaction instead of refusing the one row that raised it: transaction rollbacks (serialization, deadlock), lock timeouts, resources, shutdowns, internal errors.';
revoke all on function app_private.sync_error_aborts(text) from public, anon, authenticated, service_role;
grant execute on function app_private.sync_error_aborts(text) to authenticated;

-- The column of a refused row that Postgres named none for: for 428C9 the
-- generated or identity-always column the row writes; for a data exception
-- (22xxx) or a domain's NOT NULL or CHECK (23502 / 23514 with no constraint of
-- the table), the first of the row's named columns whose value its column
-- refuses, converted as sync_apply's write converts it (jsonb_to_record with
-- sync_record_columns, then assigned to the column's type), one with the
-- refusal's SQLSTATE first. Null when no column alone explains it (a trigger,
-- a check of the table). Runs only for a refused row, as the caller.
create function app_private.sync_refused_column(p_table regclass, p_row jsonb, p_sqlstate text, p_constraint text)
returns text
language plpgsql
stable
set search_path = ''
as $$
declare
  v_column text;
  v_type text;
  v_state text;
  v_first text;
begin
  if p_sqlstate = '428C9' then
    return (select a.attname::text from jsonb_object_keys(p_row) k
              join pg_catalog.pg_attribute a on a.attrelid = p_table and a.attname = k and a.attnum > 0 and not a.attisdropped
             where a.attgenerated <> '' or a.attidentity = 'a'
             order by a.attnum limit 1);
  end if;
  if not (left(p_sqlstate, 2) = '22'
          or (p_sqlstate in ('23502', '23514')
              and not exists (select 1 from pg_catalog.pg_constraint c where c.conrelid = p_table and c.conname = p_constraint))) then
    return null;
  end if;
  for v_column, v_type in
    select a.attname::text, pg_catalog.format_type(a.atttypid, a.atttypmod) from jsonb_object_keys(p_row) k
      join pg_catalog.pg_attribute a on a.attrelid = p_table and a.attname = k and a.attnum > 0 and not a.attisdropped
     where k <> 'id'
     order by a.attnum
  loop
    begin
      execute format('select v.%1$I::%2$s from jsonb_to_record($1) as v(%3$s)', v_column, v_type,
                     app_private.sync_record_columns(p_table, array[v_column]))
        using p_row;
    exception when others then
      get stacked diagnostics v_state = returned_sqlstate;
      if app_private.sync_error_aborts(v_state) then
        raise;
      end if;
      if v_state = p_sqlstate then
        return v_column;
      end if;
      v_first := coalesce(v_first, v_column);
    end;
  end loop;
  return v_first;
end;
$$;
comment on function app_private.sync_refused_column(regclass, jsonb, text, text) is
  'The column of a row app_private.sync_apply could not write, where Postgres named none: the generated or identity-always column it writes (428C9), or the first named column whose value its type or domain refuses (22xxx, a domain''s NOT NULL or CHECK). Null when no column alone explains the refusal. Refused rows only.';
revoke all on function app_private.sync_refused_column(regclass, jsonb, text, text) from public, anon, authenticated, service_role;
grant execute on function app_private.sync_refused_column(regclass, jsonb, text, text) to authenticated;

-- sync_apply as 20261126002000 made it, with the handlers above.
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
  -- subtransaction) so that only the rows it refuses fail, each with its SQLSTATE, constraint
  -- and column. Only the named columns are read from the rows (sync_record_columns).
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
      -- Any error of the statement but those that end the transaction (app_private.sync_error_aborts:
      -- serialization failures, deadlocks, lock timeouts, shutdowns, out of memory, …): its rows
      -- are retried one by one.
      exception when others then
        get stacked diagnostics v_state = returned_sqlstate;
        if app_private.sync_error_aborts(v_state) then
          raise;
        end if;
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
          -- A row is refused for whatever error it alone raises (a check, a type, a trigger, a
          -- generated column, …), never the batch; an error that ends the transaction ends it.
          exception when others then
            get stacked diagnostics v_state = returned_sqlstate, v_constraint = constraint_name,
                                    v_column = column_name, v_message = message_text;
            if app_private.sync_error_aborts(v_state) then
              raise;
            end if;
            -- Postgres names no column for a value its type or domain refuses: found here, on
            -- this refused row only.
            if coalesce(v_column, '') = '' then
              v_column := app_private.sync_refused_column(v_table, v_row, v_state, v_constraint);
            end if;
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
