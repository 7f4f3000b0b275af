-- Down step of 20261128002600_usage_rows_locked_in_user_order.sql:
-- track_sync_changes() as 20261128001550 made it and sync_apply() as
-- 20261128001100 made it (each statement locks the usage rows it changes when
-- it changes them, in its plan's order; nothing is announced), and no
-- lock_sync_usage().
create or replace function app_private.track_sync_changes()
returns trigger
language plpgsql
security definer
set search_path = ''
set jit = off
as $$
declare
  v_collection text;
  v_scope text;
  v_device text := nullif(current_setting('tidesync.device_id', true), '');
  v_actor uuid;
  v_txid xid8 := pg_current_xact_id();
  v_pairs integer;
  v_rows integer;
  v_ids uuid[];
  v_scopes uuid[];
begin
  -- An insert's creator is its writer, except in a membership table: a
  -- membership is made by an invite or a list's creation, in nobody's usage.
  select t.collection, t.scope_column,
         case when not exists (select 1 from app_private.sync_memberships m where m.relation = t.relation) then auth.uid() end
    into v_collection, v_scope, v_actor
    from app_private.sync_tables t where t.relation = tg_relid;
  if v_collection is null then
    return null;
  end if;

  if tg_op = 'INSERT' then
    -- Every synced table has a uuid primary key named id (enable_sync checks it), read as
    -- such; the scope column's name varies, so it is read by one small dynamic statement
    -- (never a JSON copy of every row: that was ~12% of a 500-row insert).
    if v_scope = 'id' then
      select array_agg(n.id), array_agg(n.id) into v_ids, v_scopes from new_rows n;
    else
      execute format('select array_agg(n.id), array_agg(n.%I) from new_rows n', v_scope) into v_ids, v_scopes;
    end if;
    if v_ids is null then
      return null; -- no row (e.g. the insert half of an INSERT … ON CONFLICT that only updated)
    end if;
    with written as (
      select w.id, w.scope_id, nextval('app_private.sync_seq') as seq
        from unnest(v_ids, v_scopes) as w(id, scope_id)
    ), recorded as (
      insert into app_private.sync_records as s (collection, id, scope_id, version, field_versions, deleted, created_by, created_at, updated_at, deleted_at, txid)
      select v_collection, w.id, w.scope_id, w.seq,
             jsonb_build_object('*', jsonb_build_object('v', w.seq, 'd', v_device)),
             false, v_actor, now(), now(), null, v_txid
        from written w
      on conflict (collection, id) do update
        set txid = excluded.txid, scope_id = excluded.scope_id, version = excluded.version, field_versions = excluded.field_versions,
            deleted = false, deleted_at = null, created_by = excluded.created_by, updated_at = excluded.updated_at
      returning s.created_by
    ), counted as (
      insert into app_private.sync_usage as u (user_id, live_records)
      select r.created_by, count(*) from recorded r where r.created_by is not null group by r.created_by
      on conflict (user_id) do update set live_records = u.live_records + excluded.live_records
    )
    insert into app_private.sync_changes as c (scope_id, collection, id, present, seq, txid, since_seq, changed_at)
    select w.scope_id, v_collection, w.id, true, w.seq, v_txid, w.seq, now() from written w
    -- since_seq stays where the row FIRST entered the scope (a row that left and came back
    -- was there before a later revocation, and a former member's device may still hold it)
    on conflict (scope_id, collection, id) do update
      set present = true, seq = excluded.seq, txid = excluded.txid, changed_at = excluded.changed_at;

  elsif tg_op = 'UPDATE' then
    select count(*) into v_rows from new_rows;
    if v_rows = 0 then
      return null; -- no row (e.g. the update half of an INSERT … ON CONFLICT that only inserted)
    end if;
    with pairs as (
      -- Each row becomes jsonb once (offset 0: not once per use below) and its
      -- changed columns are listed once, in no particular order (they become
      -- keys of field_versions).
      select d.id, d.new_data ->> v_scope as new_scope, d.old_data ->> v_scope as old_scope,
             array(select e.key from jsonb_each(d.new_data) e where d.old_data -> e.key is distinct from e.value) as fields
        from (select n.id, to_jsonb(n) - 'id' as new_data, to_jsonb(o) - 'id' as old_data
                from new_rows n join old_rows o on o.id = n.id offset 0) d
    ), written as (
      select p.id, p.fields,
             (case when v_scope = 'id' then p.id::text else p.new_scope end)::uuid as scope_id,
             (case when v_scope = 'id' then p.id::text else p.old_scope end)::uuid as old_scope_id,
             nextval('app_private.sync_seq') as seq
        from pairs p
       where cardinality(p.fields) > 0
    ), handed as (
      -- A row a user moves into a scope its creator is no member of (the creator can no longer
      -- read it, nor delete it) becomes the mover's, in sync_records and in both usages: else
      -- it would count against someone who cannot free it. Membership is read from sync_access
      -- (kept by the membership table's triggers, same transaction): the mover's grant there
      -- says the scope's readers are its members; a scope no membership table gives, a move by
      -- the owner or the service role (no uid) and a row nobody counts keep their creator.
      select w.id, s.created_by as creator
        from written w
        join app_private.sync_records s on s.collection = v_collection and s.id = w.id
       where v_actor is not null
         and w.old_scope_id is distinct from w.scope_id
         and not s.deleted and s.created_by is not null and s.created_by <> v_actor
         and exists (select 1 from app_private.sync_access a where a.user_id = v_actor and a.scope_id = w.scope_id and a.granted)
         and not exists (select 1 from app_private.sync_access a where a.user_id = s.created_by and a.scope_id = w.scope_id and a.granted)
    ), recorded as (
      update app_private.sync_records s
         set version = w.seq, scope_id = w.scope_id, updated_at = now(), txid = v_txid,
             created_by = case when h.id is null then s.created_by else v_actor end,
             field_versions = s.field_versions
               || (select jsonb_object_agg(f, jsonb_build_object('v', w.seq, 'd', v_device)) from unnest(w.fields) f)
        from written w left join handed h on h.id = w.id
       where s.collection = v_collection and s.id = w.id
    ), taken as (
      -- The mover's usage grows like a create's: at the quota the move is refused (23514).
      insert into app_private.sync_usage as u (user_id, live_records)
      select v_actor, count(*) from handed having count(*) > 0
      on conflict (user_id) do update set live_records = u.live_records + excluded.live_records
    ), given as (
      update app_private.sync_usage u
         set live_records = greatest(0, u.live_records - r.n)
        from (select h.creator, count(*) as n from handed h group by h.creator) r
       where u.user_id = r.creator
    ), stayed as (
      -- A row that stays in its scope: its entry there is updated in place.
      update app_private.sync_changes c
         set present = true, seq = w.seq, txid = v_txid, changed_at = now()
        from written w
       where w.old_scope_id is not distinct from w.scope_id
         and c.scope_id = w.scope_id and c.collection = v_collection and c.id = w.id
      returning c.id
    ), departed as (
      update app_private.sync_changes c
         set present = false, seq = w.seq, txid = v_txid, changed_at = now()
        from written w
       where w.old_scope_id is distinct from w.scope_id
         and c.scope_id = w.old_scope_id and c.collection = v_collection and c.id = w.id
    ), arrived as (
      -- A row that moved arrives in its new scope; so does any row whose entry
      -- was not found above (never the case while the triggers keep them).
      insert into app_private.sync_changes as c (scope_id, collection, id, present, seq, txid, since_seq, changed_at)
      select w.scope_id, v_collection, w.id, true, w.seq, v_txid, w.seq, now() from written w
       where w.id not in (select stayed.id from stayed)
      on conflict (scope_id, collection, id) do update
        set present = true, seq = excluded.seq, txid = excluded.txid, changed_at = excluded.changed_at
    )
    select count(*) into v_pairs from pairs;
    if v_pairs <> v_rows then
      raise exception 'the id of a synced row cannot change (table %)', tg_relid::regclass using errcode = 'check_violation';
    end if;

  elsif tg_op = 'DELETE' then
    if v_scope = 'id' then
      select array_agg(o.id), array_agg(o.id) into v_ids, v_scopes from old_rows o;
    else
      execute format('select array_agg(o.id), array_agg(o.%I) from old_rows o', v_scope) into v_ids, v_scopes;
    end if;
    if v_ids is null then
      -- A delete that deleted nothing: keep_a_list_owner's, for instance, once
      -- per new membership. Its statements below have a cached plan that may
      -- scan the whole collection's bookkeeping (made while it was small).
      return null;
    end if;
    with written as (
      select w.id, w.scope_id, nextval('app_private.sync_seq') as seq
        from unnest(v_ids, v_scopes) as w(id, scope_id)
    ), recorded as (
      update app_private.sync_records s
         set deleted = true, version = w.seq, scope_id = w.scope_id, updated_at = now(), deleted_at = now(), txid = v_txid,
             field_versions = jsonb_build_object('*', jsonb_build_object('v', w.seq, 'd', v_device))
        from written w
       where s.collection = v_collection and s.id = w.id and not s.deleted
      returning s.created_by
    ), counted as (
      update app_private.sync_usage u
         set live_records = greatest(0, u.live_records - r.n)
        from (select r.created_by, count(*) as n from recorded r where r.created_by is not null group by r.created_by) r
       where u.user_id = r.created_by
    )
    update app_private.sync_changes c
       set present = false, seq = w.seq, txid = v_txid, changed_at = now()
      from written w
     where c.scope_id = w.scope_id and c.collection = v_collection and c.id = w.id;
  end if;
  return null;
end;
$$;
comment on function app_private.track_sync_changes() is
  'Trigger (after insert/update/delete, per statement, transition tables new_rows/old_rows) of every synced table: bumps versions and per-field versions (an insert stamps "*", an update each changed column; stamped with the device in tidesync.device_id, if any), moves change entries between scopes, writes tombstones and keeps the live-records usage (an insert counts for its writer; a membership table''s rows count for nobody; a row a user moves into a scope its creator is no member of, per sync_access, becomes the mover''s, and counts for them like a create). SECURITY DEFINER: users never write bookkeeping themselves.';
revoke execute on function app_private.track_sync_changes() from public;

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
  -- and column. Only the named columns are read from the rows (sync_record_columns). A delete
  -- row is {id} or {id, xmin}: the row version it was planned against.
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
        -- A delete row may carry the row version (xmin) the push planned it against: the row
        -- is deleted only as it was then. An edit committed meanwhile makes Postgres re-check
        -- the row it waited for (READ COMMITTED), which then matches nothing: the row is left,
        -- reported below as a row the delete left alone, and the push answers it.
        v_sql := format(
          'with w as (delete from %1$s t using jsonb_to_recordset($1) as v(id uuid, xmin xid) '
          'where t.id = v.id and (v.xmin is null or t.xmin = v.xmin) returning t.id) '
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
comment on function app_private.sync_apply(p_writes jsonb) is 'The write of POST /v1/sync/batch: inserts, updates and deletes the planned rows of synced tables as the caller (RLS, grants and constraints decide), isolating rows the database refuses (each reported with its SQLSTATE, constraint and column) and rows the policies leave unwritten; returns those failures as {"failed": [...]}. The push reads the written rows back itself.';

drop function app_private.lock_sync_usage(uuid[]);
