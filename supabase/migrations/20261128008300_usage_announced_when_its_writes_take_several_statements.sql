-- What: app_private.sync_apply announces the usage rows its write may change (tidesync.usage_rows)
-- whenever the usage-changing writes run as more than one statement: several groups (as before),
-- an edit group that moves rows and runs as one statement per set of changed columns (a trigger on
-- UPDATE OF one of its columns), and the rows of a group retried one by one after a refusal.
-- Why: unannounced, each statement's sync trigger locks only its own rows' creators, each set in
-- user_id order but the sets one after the other: a push moving B's task, then A's (a later
-- statement), took B's usage row before A's, and deadlocked (40P01) with any writer taking them in
-- user_id order, as every other writer does (hostile review of 20261128008000; the split is from
-- 20261128006900, the retry from 20261126002010). Announced, the first statement to change a usage
-- locks every row named, in order. The split's test is now app_private.sync_update_is_split, read
-- by both places that need it.
-- Tests: tests/integration/usage-lock-order.test.ts ("a push whose moves take several statements").
-- Rollback: supabase/rollbacks/20261128008300_usage_announced_when_its_writes_take_several_statements.down.sql.

create function app_private.sync_update_is_split(p_table regclass, p_columns jsonb)
returns boolean
language sql
stable
set search_path = ''
as $$
  select exists (
    select 1 from pg_catalog.pg_trigger tg
      join pg_catalog.pg_attribute a on a.attrelid = tg.tgrelid and a.attnum = any (tg.tgattr::smallint[])
     where tg.tgrelid = p_table and not tg.tgisinternal
       and tg.tgtype & 16 <> 0 -- TRIGGER_TYPE_UPDATE
       and p_columns ? a.attname::text)
$$;
comment on function app_private.sync_update_is_split(regclass, jsonb) is
  'Whether app_private.sync_apply writes an update group of this table that writes these columns as one statement per set of changed columns: a trigger on UPDATE OF some columns fires for every row of a statement that names one of them, so when one watches a column the group writes, each row is written by a statement naming only the columns it changes, as a direct write would.';
revoke all on function app_private.sync_update_is_split(regclass, jsonb) from public, anon, authenticated, service_role;
grant execute on function app_private.sync_update_is_split(regclass, jsonb) to authenticated;

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
  v_usage jsonb;
  v_usage_statements boolean := false;
begin
  -- p_writes: [{collection, kind: insert|update|delete, columns: [...], rows: [{id, ...}]}], planned by
  -- functions/api/sync/plan-batch.ts. Runs as the caller: the table's RLS policies, grants and
  -- constraints decide. An insert group's rows all carry its columns; an update group's rows each
  -- carry the columns they change (the group's columns are all of them). A group is written in one
  -- statement; when the database refuses it, its rows are retried one by one (each in its own
  -- subtransaction) so that only the rows it refuses fail, each with its SQLSTATE, constraint
  -- and column. Only the named columns are read from the rows (sync_record_columns). A delete
  -- row is {id} or {id, xmin}: the row version it was planned against.
  -- What this write may change of live-records usage, announced to the sync triggers, which
  -- lock every usage row it names, in user_id order, the first time one of its statements
  -- changes a usage (app_private.lock_sync_usage): the caller's, when it inserts or moves rows
  -- (an update of a scope column), and the creators' of the rows it deletes or moves, named by
  -- their write groups (the trigger reads their creators, under no policy: a read here, as the
  -- caller, paid the scope policy of sync_records once more). Without it each statement
  -- locked its own: a push that inserts, then deletes another member's row, took its user's
  -- usage, then theirs, and two such pushes crossed (40P01). A superset of what the triggers
  -- change (a move that keeps its creator, the other rows of a group of edits that moves one,
  -- a membership table's insert, counted for nobody) only locks a row more. The rows a
  -- scope's delete cascades to are not named: that statement locks their creators' itself, in
  -- order. A write with one group that may change usage (creates alone, deletes alone) is one
  -- statement, which orders its own;
  -- inserts alone change the caller's usage only: nothing to announce, and, unless the write
  -- deletes or edits, nothing read. An edit group that moves rows and is split (below) is
  -- several statements: announced too. So are a group's rows retried one by one (there).
  v_usage := null;
  if p_writes @? '$[*] ? (@.kind == "delete" || @.kind == "update")' then
    select jsonb_build_object(
             'caller', bool_or(g ->> 'kind' <> 'delete'),
             'groups', jsonb_agg(jsonb_build_object('collection', t.collection, 'rows', g -> 'rows')) filter (where g ->> 'kind' <> 'insert')),
           count(*) > 1 or bool_or(case when g ->> 'kind' = 'update' then app_private.sync_update_is_split(t.relation, g -> 'columns') else false end)
      into v_usage, v_usage_statements
      from jsonb_array_elements(p_writes) g
      join app_private.sync_tables t on t.collection = g ->> 'collection'
     where g ->> 'kind' in ('insert', 'delete')
        or (g ->> 'kind' = 'update' and t.scope_column <> 'id' and g -> 'columns' ? t.scope_column);
    if v_usage -> 'groups' = 'null' then
      v_usage := null; -- inserts alone: the caller's usage only
    end if;
  end if;
  perform set_config('tidesync.usage_rows', case when v_usage_statements and v_usage is not null then v_usage::text else '' end, true);

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
    -- them: when one watches a column the group writes, one statement per set of changed
    -- columns, as a direct write would. (One on other columns never fires: tidesync_ids_kept,
    -- on every synced table, watches id, which a push never sets.)
    if v_kind = 'update' and app_private.sync_update_is_split(v_table, v_group -> 'columns') then
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
        -- A delete row may carry the row version (xmin) the push planned it against: the row
        -- is deleted only as it was then. An edit committed meanwhile makes Postgres re-check
        -- the row it waited for (READ COMMITTED), which then matches nothing: the row is left,
        -- reported below as a row the delete left alone, and the push answers it.
        v_sql := format(
          -- The rows also named by id as a condition of the table's scan, evaluated before the
          -- policies' functions (sync_update_sql says why).
          'with w as (delete from %1$s t using jsonb_to_recordset($1) as v(id uuid, xmin xid) '
          'where t.id = v.id and t.id = any (array(select n.id from jsonb_to_recordset($1) as n(id uuid))) '
          'and (v.xmin is null or t.xmin = v.xmin) returning t.id) '
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
        -- Each row its own statement: announced (again: the refused statement's taking of the
        -- announcement was rolled back with it, or an earlier statement took it), the first row
        -- to change a usage locks every row named, in order.
        if v_usage is not null then
          perform set_config('tidesync.usage_rows', v_usage::text, true);
        end if;
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

