-- What: the update branch of app_private.track_sync_changes (the trigger of every synced
-- table) pairs each row's old and new versions by a statement planned for each call
-- (EXECUTE, into arrays), and its main statement reads the pairs from those arrays, as the
-- insert and delete branches read their rows.
-- Why: a statement of a plpgsql function is analysed once per connection, and the
-- transition tables' sizes of that first call stay in its query tree (re-planning does not
-- refresh them). After a small update on a connection (a one-row edit through the Data API,
-- a one-op push), the pairing join stayed planned for one row: a nested loop comparing every
-- new row with every old one. A 10,000-row update then took ~18 s on that connection against
-- 0.4 s on a fresh one (a 3,000-row one ~2 s: 9 million comparisons); a 500-op push's edits
-- paid ~250,000. PostgREST and the function keep their connections.
-- Tests: tests/integration/bulk-update-after-small-one.test.ts.
-- Down step: supabase/rollbacks/20261128008700_update_pairs_planned_per_call.down.sql

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
  v_created integer;
  v_ids uuid[];
  v_scopes uuid[];
  v_users uuid[];
  v_counts bigint[];
  v_cascaded uuid[];
  v_new_data jsonb[];
  v_old_data jsonb[];
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
    -- Its rows count for one user, the writer: nothing to order, unless the write announced
    -- more (sync_apply). (The call costs ~13 µs; the setting's read, ~1.)
    if v_actor is not null and current_setting('tidesync.usage_rows', true) <> '' then
      perform app_private.lock_sync_usage(array[v_actor]);
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
    -- Each row's old and new versions, paired by id, each as jsonb once, by a statement planned
    -- for this call (EXECUTE): a statement of the function keeps the transition tables' sizes
    -- of its first call on the connection in its query tree, and its join planned for one row
    -- compared every new row with every old one (10,000 rows after a one-row update on the same
    -- connection: ~18 s, against 0.4 s on a fresh one). The statement below reads the pairs as
    -- arrays, as the insert and delete branches read theirs: one plan for any size.
    execute 'select array_agg(n.id), array_agg(to_jsonb(n) - ''id''), array_agg(to_jsonb(o) - ''id'')
               from new_rows n join old_rows o on o.id = n.id'
      into v_ids, v_new_data, v_old_data;
    v_pairs := coalesce(cardinality(v_ids), 0);
    with pairs as materialized (
      -- Its changed columns are listed once (materialized: not once per use below), in no
      -- particular order (they become keys of field_versions).
      select d.id, d.new_data ->> v_scope as new_scope, d.old_data ->> v_scope as old_scope,
             array(select e.key from jsonb_each(d.new_data) e where d.old_data -> e.key is distinct from e.value) as fields
        from unnest(v_ids, v_new_data, v_old_data) as d(id, new_data, old_data)
    ), written as (
      select p.id, p.fields,
             (case when v_scope = 'id' then p.id::text else p.new_scope end)::uuid as scope_id,
             (case when v_scope = 'id' then p.id::text else p.old_scope end)::uuid as old_scope_id,
             nextval('app_private.sync_seq') as seq
        from pairs p
       -- A row with no sync state (loaded with the triggers off) is written even unchanged:
       -- an update that touches such rows gives them theirs (recorded below). A lookup for
       -- unchanged rows only.
       where cardinality(p.fields) > 0
          or not exists (select 1 from app_private.sync_records s where s.collection = v_collection and s.id = p.id and not s.deleted)
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
       where s.collection = v_collection and s.id = w.id and not s.deleted
      returning s.id
    ), created as (
      -- A row with no live sync state (written with the triggers off: no state, or a tombstone
      -- when it was deleted with them on) gets what its insert would have given it: the
      -- whole-record stamp, its writer as creator (counted below). Else its change entry (below)
      -- listed it live in every pull while reads and pushes answered NOT_FOUND.
      insert into app_private.sync_records as s (collection, id, scope_id, version, field_versions, deleted, created_by, created_at, updated_at, deleted_at, txid)
      select v_collection, w.id, w.scope_id, w.seq,
             jsonb_build_object('*', jsonb_build_object('v', w.seq, 'd', v_device)),
             false, v_actor, now(), now(), null, v_txid
        from written w
       where w.id not in (select r.id from recorded r)
      on conflict (collection, id) do update
        set txid = excluded.txid, scope_id = excluded.scope_id, version = excluded.version, field_versions = excluded.field_versions,
            deleted = false, deleted_at = null, created_by = excluded.created_by, updated_at = excluded.updated_at
      returning s.created_by
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
      -- was not found above (one given its sync state above).
      insert into app_private.sync_changes as c (scope_id, collection, id, present, seq, txid, since_seq, changed_at)
      select w.scope_id, v_collection, w.id, true, w.seq, v_txid, w.seq, now() from written w
       where w.id not in (select stayed.id from stayed)
      on conflict (scope_id, collection, id) do update
        set present = true, seq = excluded.seq, txid = excluded.txid, changed_at = excluded.changed_at
    )
    -- The rows handed over, per creator, and those given sync state: their usage and the
    -- writer's change below, once locked.
    select (select count(*) from created c where c.created_by is not null), g.creators, g.counts
      into v_created, v_users, v_counts
      from (select array_agg(r.creator order by r.creator) as creators, array_agg(r.n order by r.creator) as counts
              from (select h.creator, count(*) as n from handed h group by h.creator) r) g;
    if v_pairs <> v_rows then
      raise exception 'the id of a synced row cannot change (table %)', tg_relid::regclass using errcode = 'check_violation';
    end if;
    if v_users is not null or v_created > 0 then
      -- The writer's rows alone (those given sync state): ordered as an insert's.
      if v_users is not null or current_setting('tidesync.usage_rows', true) <> '' then
        perform app_private.lock_sync_usage(coalesce(v_users, '{}') || v_actor);
      end if;
      -- The mover's usage grows like a create's, and so does the writer's for the rows given
      -- sync state: at the quota the update is refused (23514).
      insert into app_private.sync_usage as u (user_id, live_records)
      select v_actor, v_created + coalesce((select sum(n) from unnest(v_counts) n), 0)::integer
      on conflict (user_id) do update set live_records = u.live_records + excluded.live_records;
      if v_users is not null then
        update app_private.sync_usage u
           set live_records = greatest(0, u.live_records - r.n)
          from unnest(v_users, v_counts) as r(creator, n)
         where u.user_id = r.creator;
      end if;
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
    ), departed as (
      update app_private.sync_changes c
         set present = false, seq = w.seq, txid = v_txid, changed_at = now()
        from written w
       where c.scope_id = w.scope_id and c.collection = v_collection and c.id = w.id
    )
    -- The live rows deleted, per creator: their usage drops below, once locked.
    select array_agg(r.created_by order by r.created_by), array_agg(r.n order by r.created_by)
      into v_users, v_counts
      from (select r.created_by, count(*) as n from recorded r where r.created_by is not null group by r.created_by) r;
    -- A scope's delete (a list's) cascades to the scope's rows in statements of their own,
    -- whose sync triggers run after this one (queued behind it) and lock their creators'
    -- rows: those creators are locked here, with the scope's, in one order. Read from the
    -- bookkeeping, where the cascaded rows are live until their triggers run: the scopes'
    -- entries, then each live one's sync state by its key (a subquery, not a join: the
    -- cached generic plan of a join hashed all of sync_records, ~40 ms for an empty list).
    if v_scope = 'id' then
      v_cascaded := array_remove(array(
        select distinct (select s.created_by from app_private.sync_records s
                          where s.collection = c.collection and s.id = c.id and not s.deleted)
          from app_private.sync_changes c
         where c.scope_id = any (v_ids) and c.present and c.collection <> v_collection), null);
    end if;
    if coalesce(cardinality(v_users), 0) + coalesce(cardinality(v_cascaded), 0) > 1
       or (v_users is not null and current_setting('tidesync.usage_rows', true) <> '') then
      perform app_private.lock_sync_usage(coalesce(v_users, '{}') || coalesce(v_cascaded, '{}'));
    end if;
    if v_users is not null then
      update app_private.sync_usage u
         set live_records = greatest(0, u.live_records - r.n)
        from unnest(v_users, v_counts) as r(creator, n)
       where u.user_id = r.creator;
    end if;
  end if;
  return null;
end;
$$;
comment on function app_private.track_sync_changes() is
  'Trigger (after insert/update/delete, per statement, transition tables new_rows/old_rows) of every synced table: bumps versions and per-field versions (an insert stamps "*", an update each changed column, and gives a row with no live sync state, written with the triggers off, what its insert would have, changed or not; stamped with the device in tidesync.device_id, if any), moves change entries between scopes, writes tombstones and keeps the live-records usage (an insert counts for its writer; a membership table''s rows count for nobody; a row a user moves into a scope its creator is no member of, per sync_access, becomes the mover''s, and counts for them like a create), locking the usage rows it changes, and those the transaction announced, in user_id order first (lock_sync_usage); a scope row''s delete locks those of the creators of the scope''s live rows, which its cascade deletes, with them. SECURITY DEFINER: users never write bookkeeping themselves.';
revoke execute on function app_private.track_sync_changes() from public;
