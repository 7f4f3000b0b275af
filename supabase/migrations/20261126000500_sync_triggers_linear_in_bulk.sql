-- What: the sync triggers' work per statement no longer grows with what a
-- bulk import's transaction already wrote.
--   1. app_private.track_sync_changes() returns at once for a statement that
--      wrote no row (a delete that matched nothing; the half of an INSERT …
--      ON CONFLICT that did nothing).
--   2. app_private.send_sync_pokes() remembers at most 16 KiB of topic names
--      per transaction for its "once per topic and transaction" (past them:
--      once per statement), and stores the list only when it changed.
--   3. app_private.forget_pokes_of_deleted_users() matches the messages
--      against the set of the deleted users' topics (a hashed lookup), not
--      against every deleted row (deleting 1,000 / 2,000 / 4,000 users in one
--      statement took 0.6 / 2.8 / 12.1 s).
-- Why: a bulk import of users into a fresh project (one INSERT into
-- auth.users; each new user's personal list and membership are inserted by
-- per-row triggers, so one transaction runs thousands of statements) took
-- 2.8 s for 2,000 users, 12.7 s for 4,000 and 54 s for 8,000: quadratic. Two
-- causes (docs/performance.md, "2026-11-26 (late morning)"): keep_a_list_owner's
-- delete that matches nothing fired the sync trigger's delete branch once per
-- new membership, whose cached plan, made while sync_records was small, read
-- every bookkeeping row of the collection; and each poke statement searched
-- and copied the transaction's whole list of poked topics. What the triggers
-- write and send is unchanged (pgTAP 100, 120, 121, 601;
-- tests/integration/sync-trigger-scale.test.ts).
-- Rollback: supabase/rollbacks/20261126000500_sync_triggers_linear_in_bulk.down.sql

create or replace function app_private.track_sync_changes()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_collection text;
  v_scope text;
  v_device text := nullif(current_setting('tidesync.device_id', true), '');
  v_actor uuid := auth.uid();
  v_txid xid8 := pg_current_xact_id();
  v_pairs integer;
  v_rows integer;
  v_ids uuid[];
  v_scopes uuid[];
begin
  select t.collection, t.scope_column into v_collection, v_scope
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
      select n.id, to_jsonb(n) - 'id' as new_data, to_jsonb(o) - 'id' as old_data
        from new_rows n join old_rows o on o.id = n.id
    ), changed as (
      select p.id, p.new_data, p.old_data,
             array(select e.key from jsonb_each(p.new_data) e where p.old_data -> e.key is distinct from e.value order by e.key) as fields
        from pairs p
    ), written as (
      select c.id, c.fields,
             (case when v_scope = 'id' then c.id::text else c.new_data ->> v_scope end)::uuid as scope_id,
             (case when v_scope = 'id' then c.id::text else c.old_data ->> v_scope end)::uuid as old_scope_id,
             nextval('app_private.sync_seq') as seq
        from changed c
       where cardinality(c.fields) > 0
    ), recorded as (
      update app_private.sync_records s
         set version = w.seq, scope_id = w.scope_id, updated_at = now(), txid = v_txid,
             field_versions = s.field_versions
               || (select jsonb_object_agg(f, jsonb_build_object('v', w.seq, 'd', v_device)) from unnest(w.fields) f)
        from written w
       where s.collection = v_collection and s.id = w.id
    ), departed as (
      update app_private.sync_changes c
         set present = false, seq = w.seq, txid = v_txid, changed_at = now()
        from written w
       where w.old_scope_id is distinct from w.scope_id
         and c.scope_id = w.old_scope_id and c.collection = v_collection and c.id = w.id
    ), arrived as (
      insert into app_private.sync_changes as c (scope_id, collection, id, present, seq, txid, since_seq, changed_at)
      select w.scope_id, v_collection, w.id, true, w.seq, v_txid, w.seq, now() from written w
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

create or replace function app_private.send_sync_pokes()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_topics text[];
  v_topic text;
  v_sent text := coalesce(current_setting('tidesync.pokes_sent', true), '');
  v_remembered text := v_sent;
begin
  -- (Two queries: each table's transition table has its own columns.)
  if tg_table_name = 'sync_changes' then
    select array_agg(distinct 'tidesync:scope:' || n.scope_id::text) into v_topics from new_rows n;
  else
    select array_agg(distinct 'tidesync:user:' || n.user_id::text) into v_topics from new_rows n;
  end if;
  foreach v_topic in array coalesce(v_topics, '{}')
  loop
    -- Once per topic and transaction, however many statements touch it, for
    -- the first ~300 topics of a transaction (16 KiB of names); past them,
    -- once per statement. Remembering every topic made a transaction of many
    -- statements quadratic (a bulk import of 8,000 users: 54 s), since each
    -- statement searched and copied the whole list.
    continue when position(' ' || v_topic || ' ' in v_sent) > 0;
    perform realtime.send('{}'::jsonb, 'poke', v_topic, true);
    if length(v_sent) < 16384 then
      v_sent := v_sent || ' ' || v_topic || ' ';
    end if;
  end loop;
  if v_sent <> v_remembered then
    perform set_config('tidesync.pokes_sent', v_sent, true);
  end if;
  return null;
end;
$$;
comment on function app_private.send_sync_pokes() is
  'Trigger (after insert/update on sync_changes and sync_access, per statement): posts a data-free poke to the private Realtime topic of every scope (or user) the statement touched, once per topic and transaction for the first ~300 topics of a transaction (16 KiB of names remembered), once per topic and statement past them. realtime.send never fails the write (it turns errors into warnings). SECURITY DEFINER: realtime.messages takes no insert from the API roles.';

create or replace function app_private.forget_pokes_of_deleted_users()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- The deleted users' topics as one set first: a join of the messages with
  -- the deleted rows compared every message with every deleted user
  -- (deleting 3,000 users in one statement: 3.7 s in this trigger alone).
  delete from realtime.messages m
   where m.topic in (select 'tidesync:user:' || o.id::text from old_rows o
                     union all
                     select 'tidesync:scope:' || o.id::text from old_rows o);
  return null;
end;
$$;
