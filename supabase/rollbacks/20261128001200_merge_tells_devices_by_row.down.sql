-- Down step of 20261128001200_merge_tells_devices_by_row.sql: stamps name
-- installations again (a stamp naming a device row gets that row's
-- installation id; any other value stays, and a gone row's id matches no
-- installation: an unknown device, which the restored sweep forgets if it is
-- still queued); the queue's triggers, forget_queued_installations and the
-- comments as 20261127002200, 20261127002210 and 20261125000100 made them.
-- The queue keeps what it holds (row ids and installation ids alike).

do $$
begin
  lock table app_private.sync_records in exclusive mode;
  update app_private.sync_records r
     set field_versions = (
       select jsonb_object_agg(e.key, case when dv.id is null then e.value
                                           else jsonb_set(e.value, '{d}', to_jsonb(dv.installation_id::text)) end)
         from jsonb_each(r.field_versions) e
         left join app_private.devices dv on dv.id::text = e.value ->> 'd')
   where exists (select 1 from jsonb_each(r.field_versions) e
                   join app_private.devices dv on dv.id::text = e.value ->> 'd');
end
$$;

create or replace function app_private.queue_installations_of_deleted_devices()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into app_private.installations_to_forget (installation_id)
  select distinct g.installation_id from gone g
  on conflict (installation_id) do nothing;
  return null;
end;
$$;
comment on function app_private.queue_installations_of_deleted_devices() is
  'Trigger (after delete on app_private.devices, per statement): queues the deleted rows'' installation ids in app_private.installations_to_forget, whatever deleted them (the signed-out cap, the cascade of a user''s deletion). Not callable by any API role.';

create or replace function app_private.queue_installations_of_deleted_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- By devices_user_installation_key; a soft-deleted user keeps the rows.
  insert into app_private.installations_to_forget (installation_id)
  select d.installation_id from app_private.devices d where d.user_id = new.id
  on conflict (installation_id) do nothing;
  return null;
end;
$$;
comment on function app_private.queue_installations_of_deleted_user() is
  'Trigger (after update of deleted_at on auth.users when it is first set, per row): queues a soft-deleted user''s installation ids in app_private.installations_to_forget (a hard delete queues them through the devices it deletes: queue_installations_of_deleted_devices). Not callable by any API role.';

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
    -- A new sweep takes the queue. An id another user who can still sign in
    -- registered before it was queued (one phone, two accounts) stays theirs
    -- and leaves the queue; a device registered later is a new account on
    -- the phone, which must not inherit the writes. v_sweep.ids is an object:
    -- `?` finds a key by binary search, so a long queue costs each record a
    -- few comparisons, not one per id.
    with taken as (
      delete from app_private.installations_to_forget q
      returning q.installation_id, q.queued_at
    )
    select jsonb_object_agg(t.installation_id::text, t.queued_at) filter (
             where not exists (select 1 from app_private.devices d join auth.users u on u.id = d.user_id
                                where d.installation_id = t.installation_id and u.deleted_at is null
                                  and d.created_at <= t.queued_at))
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
  'Forgets the installation ids of app_private.installations_to_forget in the sync state: sets d (the writing device) to null in every sync_records.field_versions entry stamped by one that no other user who can still sign in registered before it was queued (the merge reads null as an unknown device). A sweep takes the queue and goes over every record by primary key, p_batch at a time, until p_time_budget is spent (at least one batch), keeping its place in app_private.installation_sweep for the next call; returns true when no sweep is left under way. Never waits: records a write holds are skipped (FOR UPDATE SKIP LOCKED) and the ids they name are queued again when the sweep ends. Run by run_account_deletions (the defaults) and purge_sync_retention (its budget and batch). Not callable by any API role.';

comment on table app_private.installations_to_forget is
  'Installation ids whose device row went (pruned, or deleted with its user) or whose user was soft-deleted, queued by triggers on app_private.devices and auth.users until a sweep of app_private.forget_queued_installations() takes them (app_private.installation_sweep) and nulls them in sync_records.field_versions (run by run_account_deletions and purge_sync_retention, each within a time budget); ids a write held a record of come back when the sweep ends. Read by no API role.';
comment on column app_private.installation_sweep.ids is
  'The installation ids being forgotten, as keys, each with when it was queued; null when no sweep is under way.';
comment on column app_private.installations_to_forget.installation_id is null;
comment on column app_private.devices.id is null;
comment on column app_private.sync_records.field_versions is
  'Per column {"v": version of its last change, "d": installation id of the device that wrote it, or null (direct write / unknown)}; key "*" stands for every column not listed (set by an insert and by a delete; an update adds the columns it changes). Drives field-level merge (functions/_shared/merge.ts).';
