-- What: the merge tells devices apart by their device row
-- (app_private.devices.id: one per user and installation), no longer by the
-- bare installation id. The push sets tidesync.device_id to the caller's
-- device row's id, so every stamp a push writes in
-- sync_records.field_versions ("d") names that row; the merge counts a field
-- as the pusher's own only when its stamp names the pusher's row
-- (functions/_shared/merge.ts). Forgetting follows: when a device row goes
-- (pruned, deleted with its user) or its user is soft-deleted, its row id is
-- queued in app_private.installations_to_forget (with its installation id,
-- for stamps the previous function writes during this deploy), and the sweep
-- forgets every queued id, with no exception for another account on the same
-- phone: nobody else's stamps name that row.
-- Existing stamps name installations. Each is converted once, here, to the
-- device row that wrote it, found through the op ledger (app_private.sync_ops:
-- the user whose applied op wrote that version of the record from that
-- installation; for a record's last write the op's time must be the write's,
-- so an op applied without a write, a delete of a tombstone, does not claim
-- another account's delete), when exactly one user's ops claim it and that
-- user's device row for the installation existed at the op and they can still
-- sign in. Any other stamp becomes null (an unknown device): one the ledger
-- no longer holds (older than retention_days), one a cascade or a trigger
-- wrote (no op of that record), one of a deleted user's, pruned or shared
-- installation left ambiguous. So no account keeps another's write as its
-- own (null conflicts; a wrong owner would overwrite silently), and a device
-- keeps its own writes of the last retention_days, which is what its queued
-- ops are based on. The queue and a sweep under way held installation ids,
-- all of whose stamps the conversion has just settled: they are emptied.
-- Why: two accounts on one phone (docs/devices-and-sessions.md: one device
-- row per user and installation; client/README.md: each with its own store)
-- were one device to the merge, so one's stale queued edit or delete silently
-- replaced the other's newer edit instead of conflicting. And forgetting a
-- deleted account's installation nulled the stamps a new account on the same
-- phone wrote since, so its later ops conflicted with its own writes.
-- Cost: pushes none (the device row is read where the installation id was,
-- by the same unique keys). The conversion reads every sync record and the
-- ledger once and rewrites every record with a stamped field, holding a lock
-- that makes pushes wait (pulls go on) until it commits: 200,000 records
-- with two stamps each, every write in the ledger, took 5.9 s, 500,000 took
-- 21 and 39 s in two runs, on a busy shared 2-vCPU machine.
-- Tests: integration tests/integration/shared-phone-merge.test.ts (also this
-- conversion); pgTAP 500, 507, 508, 509.
-- Down step: supabase/rollbacks/20261128001200_merge_tells_devices_by_row.down.sql.

-- One statement (the CLI wraps a migration in no transaction of its own), under
-- a lock that keeps writes out: the stamps are read and rewritten as one picture.
do $$
begin
  lock table app_private.sync_records in exclusive mode;
  with stamps as (
    select r.collection, r.id, e.value ->> 'v' as v, e.value ->> 'd' as d, r.version, r.updated_at
      from app_private.sync_records r
     cross join jsonb_each(r.field_versions) e
     where e.value ->> 'd' is not null
  ), writers as (
    select distinct s.collection, s.id, s.v, s.d, o.user_id, o.created_at
      from stamps s
      join app_private.sync_ops o
        on o.collection = s.collection and o.record_id = s.id and o.version::text = s.v
       and o.device_id::text = s.d and o.status = 'applied'
       and (o.version < s.version or o.created_at = s.updated_at)
  ), sole as (
    select w.collection, w.id, w.v, w.d, (array_agg(w.user_id))[1] as user_id, min(w.created_at) as written_at
      from writers w
     group by w.collection, w.id, w.v, w.d
    having count(distinct w.user_id) = 1
  ), owners as (
    select s.collection, s.id, s.v, s.d, dv.id as device
      from sole s
      join app_private.devices dv on dv.user_id = s.user_id and dv.installation_id::text = s.d and dv.created_at <= s.written_at
      join auth.users u on u.id = dv.user_id and u.deleted_at is null
  ), rewritten as (
    select r.collection, r.id,
           jsonb_object_agg(e.key, case when e.value ->> 'd' is null then e.value
                                        else jsonb_set(e.value, '{d}', coalesce(to_jsonb(o.device::text), 'null')) end) as field_versions
      from app_private.sync_records r
     cross join jsonb_each(r.field_versions) e
      left join owners o on o.collection = r.collection and o.id = r.id and o.v = e.value ->> 'v' and o.d = e.value ->> 'd'
     where exists (select 1 from jsonb_each(r.field_versions) x where x.value ->> 'd' is not null)
     group by r.collection, r.id
  )
  update app_private.sync_records r
     set field_versions = w.field_versions
    from rewritten w
   where r.collection = w.collection and r.id = w.id;
end
$$;

delete from app_private.installations_to_forget;
update app_private.installation_sweep
   set ids = null, left_ids = '{}', after_collection = '', after_id = '00000000-0000-0000-0000-000000000000';

create or replace function app_private.queue_installations_of_deleted_devices()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- The row's id is what its stamps name; the installation id, what the
  -- previous function stamps during a deploy (to the merge an unknown
  -- device either way, so forgetting it takes nothing from anyone).
  insert into app_private.installations_to_forget (installation_id)
  select g.id from gone g
  union
  select g.installation_id from gone g
  on conflict (installation_id) do nothing;
  return null;
end;
$$;
comment on function app_private.queue_installations_of_deleted_devices() is
  'Trigger (after delete on app_private.devices, per statement): queues the deleted rows'' ids (what their stamps in sync_records.field_versions name) and installation ids in app_private.installations_to_forget, whatever deleted them (the signed-out cap, the cascade of a user''s deletion). Not callable by any API role.';

create or replace function app_private.queue_installations_of_deleted_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- A soft-deleted user keeps the rows: their ids and installation ids, as
  -- queue_installations_of_deleted_devices queues them.
  insert into app_private.installations_to_forget (installation_id)
  select d.id from app_private.devices d where d.user_id = new.id
  union
  select d.installation_id from app_private.devices d where d.user_id = new.id
  on conflict (installation_id) do nothing;
  return null;
end;
$$;
comment on function app_private.queue_installations_of_deleted_user() is
  'Trigger (after update of deleted_at on auth.users when it is first set, per row): queues a soft-deleted user''s device rows'' ids and installation ids in app_private.installations_to_forget (a hard delete queues them through the devices it deletes: queue_installations_of_deleted_devices). Not callable by any API role.';

create or replace function app_private.forget_queued_installations(
  p_time_budget interval default '10 seconds',
  p_batch integer default 5000
)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_deadline timestamptz;
  v_sweep app_private.installation_sweep;
  v_count integer;
  v_last_collection text;
  v_last_id uuid;
  v_left jsonb;
begin
  if p_time_budget is null or p_time_budget < interval '0' or p_batch is null or p_batch < 1 then
    raise exception 'forget_queued_installations: p_time_budget must not be negative, p_batch must be positive'
      using errcode = 'invalid_parameter_value';
  end if;
  -- Wall clock (now() stands still in a transaction).
  v_deadline := clock_timestamp() + p_time_budget;

  -- One sweep at a time: a concurrent call leaves it to the one under way.
  select * into v_sweep from app_private.installation_sweep for update skip locked;
  if not found then
    return false;
  end if;

  if v_sweep.ids is null then
    -- A new sweep takes the queue, every id of it: a stamp names one user's
    -- device row, so no other account (one phone, two accounts) has a claim
    -- on it. v_sweep.ids is an object: `?` finds a key by binary search, so a
    -- long queue costs each record a few comparisons, not one per id.
    with taken as (
      delete from app_private.installations_to_forget q
      returning q.installation_id, q.queued_at
    )
    select jsonb_object_agg(t.installation_id::text, t.queued_at)
      into v_sweep.ids
      from taken t;
    if v_sweep.ids is null then
      return true;
    end if;
  end if;

  loop
    -- The next p_batch records by primary key. Records a write holds are
    -- skipped, never waited on (a push writes in its own order: waiting could
    -- deadlock with it); the ids they still name are queued again at the end.
    with batch as materialized (
      select r.collection, r.id, r.field_versions
        from app_private.sync_records r
       where (r.collection, r.id) > (v_sweep.after_collection, v_sweep.after_id)
       order by r.collection, r.id
       limit p_batch
    ), matching as materialized (
      select b.collection, b.id, b.field_versions
        from batch b
       where exists (select 1 from jsonb_each(b.field_versions) e where v_sweep.ids ? (e.value ->> 'd'))
    ), forgotten as (
      update app_private.sync_records s
         set field_versions = (
           select jsonb_object_agg(e.key, case when v_sweep.ids ? (e.value ->> 'd') then jsonb_set(e.value, '{d}', 'null') else e.value end)
             from jsonb_each(s.field_versions) e)
        from (select l.collection, l.id
                from app_private.sync_records l
                join matching m on m.collection = l.collection and m.id = l.id
               -- Checked again on the version locked (a write may have committed since).
               where exists (select 1 from jsonb_each(l.field_versions) e where v_sweep.ids ? (e.value ->> 'd'))
               order by l.collection, l.id
                 for update of l skip locked) locked
       where s.collection = locked.collection and s.id = locked.id
      returning s.collection, s.id
    )
    select (select count(*)::integer from batch),
           last.collection, last.id,
           (select coalesce(jsonb_object_agg(e.value ->> 'd', v_sweep.ids -> (e.value ->> 'd')), '{}')
              from matching m
             cross join jsonb_each(m.field_versions) e
             where v_sweep.ids ? (e.value ->> 'd')
               and not exists (select 1 from forgotten f where f.collection = m.collection and f.id = m.id))
      into v_count, v_last_collection, v_last_id, v_left
      from (select 1) one
      left join lateral (select b.collection, b.id from batch b order by b.collection desc, b.id desc limit 1) last on true;
    v_sweep.left_ids := v_sweep.left_ids || v_left;

    if v_count < p_batch then
      -- The end: the ids skipped in a held record wait for the next sweep.
      insert into app_private.installations_to_forget (installation_id, queued_at)
      select l.key::uuid, (l.value #>> '{}')::timestamptz from jsonb_each(v_sweep.left_ids) l
      on conflict (installation_id) do nothing;
      update app_private.installation_sweep
         set ids = null, left_ids = '{}', after_collection = '', after_id = '00000000-0000-0000-0000-000000000000';
      return true;
    end if;
    v_sweep.after_collection := v_last_collection;
    v_sweep.after_id := v_last_id;
    exit when clock_timestamp() >= v_deadline;
  end loop;

  update app_private.installation_sweep
     set ids = v_sweep.ids, left_ids = v_sweep.left_ids,
         after_collection = v_sweep.after_collection, after_id = v_sweep.after_id;
  return false;
end
$$;
comment on function app_private.forget_queued_installations(interval, integer) is
  'Forgets the ids of app_private.installations_to_forget in the sync state: sets d (the writing device) to null in every sync_records.field_versions entry stamped with one (the merge reads null as an unknown device). A sweep takes the queue and goes over every record by primary key, p_batch at a time, until p_time_budget is spent (at least one batch), keeping its place in app_private.installation_sweep for the next call; returns true when no sweep is left under way. Never waits: records a write holds are skipped (FOR UPDATE SKIP LOCKED) and the ids they name are queued again when the sweep ends. Run by run_account_deletions (the defaults) and purge_sync_retention (its budget and batch). Not callable by any API role.';

comment on table app_private.installations_to_forget is
  'Ids of devices that went (pruned, or deleted with their user) or whose user was soft-deleted, queued by triggers on app_private.devices and auth.users until a sweep of app_private.forget_queued_installations() takes them (app_private.installation_sweep) and nulls them in sync_records.field_versions (run by run_account_deletions and purge_sync_retention, each within a time budget); ids a write held a record of come back when the sweep ends. Read by no API role.';
comment on column app_private.installations_to_forget.installation_id is
  'A device row''s id (app_private.devices.id: what sync_records.field_versions stamps name) or its installation id (what stamps named before migration 20261128001200, and what the previous function stamps during a deploy).';
comment on column app_private.installation_sweep.ids is
  'The ids being forgotten (as app_private.installations_to_forget holds them), as keys, each with when it was queued; null when no sweep is under way.';
comment on column app_private.devices.id is
  'The device: one per user and installation. Also what the sync triggers stamp a field a push of this device changed with (sync_records.field_versions "d", set in tidesync.device_id), by which the merge tells this device''s own writes.';
comment on column app_private.sync_records.field_versions is
  'Per column {"v": version of its last change, "d": id of the device row (app_private.devices.id: one per user and installation) that wrote it, or null (direct write / unknown / forgotten)}; key "*" stands for every column not listed (set by an insert and by a delete; an update adds the columns it changes). Drives field-level merge (functions/_shared/merge.ts).';
