-- What: forgetting queued installation ids is bounded like the rest of the
-- retention purge. app_private.forget_queued_installations(p_time_budget,
-- p_batch) sweeps app_private.sync_records in primary-key order, p_batch
-- records at a time, until the sweep reaches the end or the budget is spent
-- (at least one batch a call), and keeps where it stopped in
-- app_private.installation_sweep (one row: the ids being forgotten, with
-- when each was queued, and the last record done); the next call goes on from
-- there. A sweep takes the queue as it starts; ids queued meanwhile wait for
-- the next sweep, and ids a write held a record of (skipped, never waited on)
-- are queued again when the sweep ends. purge_sync_retention gives it what is
-- left of its own budget and its p_batch; run_account_deletions calls it with
-- the defaults (10 s, 5,000 records).
-- Why: the pass read and rewrote every sync record in one statement, however
-- long that took: with a large sync state (or many stamps to rewrite) it ran
-- past the retention purge's time budget, inside a run scheduled every 5
-- minutes, holding its locks to the end.
-- Cost: the same one read of every record per sweep, now by the primary key
-- in batches instead of one scan; pushes pay nothing.
-- pgTAP 509.
--
-- Down step: supabase/rollbacks/20261127002210_forget_installations_within_budget.down.sql.

create table app_private.installation_sweep (
  singleton boolean primary key default true,
  ids jsonb,
  left_ids jsonb not null default '{}',
  after_collection text not null default '',
  after_id uuid not null default '00000000-0000-0000-0000-000000000000',
  constraint installation_sweep_one_row check (singleton)
);
comment on table app_private.installation_sweep is
  'The sweep of app_private.forget_queued_installations() under way (one row): the ids it forgets and where it stopped, so a sweep of a large sync state goes over several runs, each within its time budget. Read by no API role.';
comment on column app_private.installation_sweep.ids is
  'The installation ids being forgotten, as keys, each with when it was queued; null when no sweep is under way.';
comment on column app_private.installation_sweep.left_ids is
  'Ids found in records a write held (skipped): queued again, with their queued_at, when the sweep ends.';
comment on column app_private.installation_sweep.after_collection is
  'With after_id: the primary key of the last sync record swept ('''' and the nil uuid: none yet).';
insert into app_private.installation_sweep default values;
alter table app_private.installation_sweep enable row level security;
create policy "Nobody reads the installation sweep"
  on app_private.installation_sweep
  as restrictive
  for select
  to anon, authenticated, service_role
  using (false);
comment on policy "Nobody reads the installation sweep" on app_private.installation_sweep is
  'Bookkeeping of the account deletion: only the owner''s functions touch it (no role holds a grant either).';
revoke all on table app_private.installation_sweep from public, anon, authenticated, service_role;

drop function app_private.forget_queued_installations();

create function app_private.forget_queued_installations(
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
revoke all on function app_private.forget_queued_installations(interval, integer) from public, anon, authenticated, service_role;

comment on function app_private.run_account_deletions(timestamptz, integer) is
  'The account purge: deletes up to p_batch accounts whose deletion was scheduled at or before p_now, trying the due requests oldest first, each once per run, until p_batch are deleted or none is left (hand-over of shared lists, the before_account_purge hook, the Storage check refuse_purge_while_storage_objects_remain, then the auth.users row and its cascades), records each in account_deletion_audit, then goes on forgetting the queued installation ids in the sync state (forget_queued_installations with its default budget, 10 s: these users'' and those of anyone deleted otherwise; a sweep the budget cuts short goes on in the next run of either purge). An account that fails (the hook or the Storage check refuses) is rolled back alone, logged by request id and retried next run; the run goes on past it. Idempotent; concurrent runs never take the same request (FOR UPDATE SKIP LOCKED). Runs as the owner (no superuser needed): pg_cron where available, else service_role; tests pass p_now.';

create or replace function app_private.purge_sync_retention(
  p_now timestamptz default now(),
  p_batch integer default 5000,
  p_retention_days integer default 30,
  p_time_budget interval default '10 seconds'
)
returns table (ops_purged integer, tombstones_purged integer, changes_purged integer, rate_limit_counters_purged integer)
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_cutoff timestamptz;
  v_deadline timestamptz;
  v_horizon xid8;
  v_txid xid8;
  v_count integer;
begin
  if p_now is null or p_batch is null or p_batch < 1 or p_retention_days is null or p_retention_days < 1
     or p_time_budget is null or p_time_budget < interval '0' then
    raise exception 'purge_sync_retention: p_now and p_time_budget are required (p_time_budget not negative), p_batch and p_retention_days must be positive'
      using errcode = 'invalid_parameter_value';
  end if;
  v_cutoff := p_now - make_interval(days => p_retention_days);
  -- Wall clock (now() stands still in a transaction): a zero budget is one pass per table.
  v_deadline := clock_timestamp() + p_time_budget;
  ops_purged := 0;
  tombstones_purged := 0;
  changes_purged := 0;
  rate_limit_counters_purged := 0;

  -- Queued installation ids (deleted devices, soft-deleted users): the sweep
  -- goes on where it stopped, within this run's budget and p_batch records at
  -- a time. First, so a backlog of the other tables never starves it; they
  -- still get a batch each.
  perform app_private.forget_queued_installations(greatest(v_deadline - clock_timestamp(), interval '0'), p_batch);

  -- Change entries of deleted or moved rows, and revocations: a cursor from
  -- before them may have missed them, so the horizon rises to the highest
  -- txid of every batch (raised once below, in this same transaction).
  loop
    with doomed as (
      select c.scope_id, c.collection, c.id
        from app_private.sync_changes c
       where not c.present and c.changed_at < v_cutoff
       order by c.changed_at
       limit p_batch
         for update skip locked
    ), purged as (
      delete from app_private.sync_changes c using doomed d
       where c.scope_id = d.scope_id and c.collection = d.collection and c.id = d.id and not c.present
      returning c.txid
    )
    select count(*)::integer, max(purged.txid) into v_count, v_txid from purged;
    changes_purged := changes_purged + v_count;
    v_horizon := greatest(v_horizon, v_txid);
    exit when v_count < p_batch or clock_timestamp() >= v_deadline;
  end loop;

  loop
    with doomed as (
      select a.user_id, a.scope_id
        from app_private.sync_access a
       where not a.granted and a.changed_at < v_cutoff
       order by a.changed_at
       limit p_batch
         for update skip locked
    ), purged as (
      delete from app_private.sync_access a using doomed d
       where a.user_id = d.user_id and a.scope_id = d.scope_id and not a.granted
      returning a.txid
    )
    select count(*)::integer, max(purged.txid) into v_count, v_txid from purged;
    v_horizon := greatest(v_horizon, v_txid);
    exit when v_count < p_batch or clock_timestamp() >= v_deadline;
  end loop;

  if v_horizon is not null then
    update app_private.sync_horizon set purged_txid = greatest(purged_txid, v_horizon);
  end if;

  -- Tombstones: the version state of rows deleted long ago.
  loop
    with doomed as (
      select s.collection, s.id
        from app_private.sync_records s
       where s.deleted and s.deleted_at < v_cutoff
       order by s.deleted_at
       limit p_batch
         for update skip locked
    ), purged as (
      delete from app_private.sync_records s using doomed d
       where s.collection = d.collection and s.id = d.id and s.deleted
      returning 1
    )
    select count(*)::integer into v_count from purged;
    tombstones_purged := tombstones_purged + v_count;
    exit when v_count < p_batch or clock_timestamp() >= v_deadline;
  end loop;

  loop
    with doomed as (
      select o.user_id, o.op_id
        from app_private.sync_ops o
       where o.created_at < v_cutoff
       order by o.created_at
       limit p_batch
         for update skip locked
    ), purged as (
      delete from app_private.sync_ops o using doomed d
       where o.user_id = d.user_id and o.op_id = d.op_id
      returning 1
    )
    select count(*)::integer into v_count from purged;
    ops_purged := ops_purged + v_count;
    exit when v_count < p_batch or clock_timestamp() >= v_deadline;
  end loop;

  -- Invites used or expired before the cutoff: no longer redeemable, and kept
  -- that long for their owners to see who joined.
  loop
    with doomed as (
      select i.id
        from app_private.list_invites i
       where coalesce(i.used_at, i.expires_at) < v_cutoff
       order by coalesce(i.used_at, i.expires_at)
       limit p_batch
         for update skip locked
    ), purged as (
      delete from app_private.list_invites i using doomed d
       where i.id = d.id
      returning 1
    )
    select count(*)::integer into v_count from purged;
    exit when v_count < p_batch or clock_timestamp() >= v_deadline;
  end loop;

  loop
    v_count := app_private.purge_rate_limit_counters(p_now, p_batch);
    rate_limit_counters_purged := rate_limit_counters_purged + v_count;
    exit when v_count < p_batch or clock_timestamp() >= v_deadline;
  end loop;
  return next;
end;
$$;
comment on function app_private.purge_sync_retention(timestamptz, integer, integer, interval) is
  'Retention job: deletes ledger rows, tombstones, entries of deleted/moved rows, revocations and used or expired list invites older than p_retention_days before p_now, and expired rate-limit counters, p_batch at a time (first it goes on with forgetting queued installation ids: forget_queued_installations, within the same budget and batch), each table''s batches repeated until one deletes fewer than p_batch or p_time_budget is spent (at least one per table); raises app_private.sync_horizon to the highest txid purged (older pull cursors get 410). Never waits for a writer (SKIP LOCKED). pg_cron runs it where available, else the operator as service_role; tests pass p_now.';

comment on table app_private.installations_to_forget is
  'Installation ids whose device row went (pruned, or deleted with its user) or whose user was soft-deleted, queued by triggers on app_private.devices and auth.users until a sweep of app_private.forget_queued_installations() takes them (app_private.installation_sweep) and nulls them in sync_records.field_versions (run by run_account_deletions and purge_sync_retention, each within a time budget); ids a write held a record of come back when the sweep ends. Read by no API role.';
