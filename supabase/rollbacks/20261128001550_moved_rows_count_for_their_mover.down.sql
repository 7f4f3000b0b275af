-- Down step of 20261128001550_moved_rows_count_for_their_mover.sql:
-- track_sync_changes() as 20261128000300 made it (a moved row keeps its
-- creator). Rows already handed to their movers stay theirs (sync_records and
-- sync_usage agree either way).
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
    ), recorded as (
      update app_private.sync_records s
         set version = w.seq, scope_id = w.scope_id, updated_at = now(), txid = v_txid,
             field_versions = s.field_versions
               || (select jsonb_object_agg(f, jsonb_build_object('v', w.seq, 'd', v_device)) from unnest(w.fields) f)
        from written w
       where s.collection = v_collection and s.id = w.id
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
  'Trigger (after insert/update/delete, per statement, transition tables new_rows/old_rows) of every synced table: bumps versions and per-field versions (an insert stamps "*", an update each changed column; stamped with the device in tidesync.device_id, if any), moves change entries between scopes, writes tombstones and keeps the live-records usage (an insert counts for its writer; a membership table''s rows count for nobody). SECURITY DEFINER: users never write bookkeeping themselves.';
revoke execute on function app_private.track_sync_changes() from public;
