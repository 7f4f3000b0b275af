-- Down step of 20261127002210_forget_installations_within_budget.sql:
-- forget_queued_installations as 20261127001300_forget_installations_skips_locked_records.sql
-- made it, purge_sync_retention and run_account_deletions' comment as
-- 20261127001100_installations_forgotten_by_queue.sql made them, the queue's
-- comment as 20261127002200 made it. The ids of a sweep under way go back to
-- the queue, with when they were queued, before the sweep's row goes: the
-- restored pass forgets them.
insert into app_private.installations_to_forget (installation_id, queued_at)
select i.key::uuid, (i.value #>> '{}')::timestamptz
  from app_private.installation_sweep s
 cross join jsonb_each(coalesce(s.ids, '{}') || s.left_ids) i
on conflict (installation_id) do nothing;
drop function app_private.forget_queued_installations(interval, integer);
drop table app_private.installation_sweep;

create function app_private.forget_queued_installations()
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_taken uuid[];
  v_ids jsonb;
  v_left jsonb := '{}';
begin
  -- Take the queue; ids a concurrent pass holds are its to forget. An id
  -- another user who can still sign in registered before it was queued (one
  -- phone, two accounts) stays theirs; a device registered later is a new
  -- account on the deleted one's phone, which must not inherit its writes.
  -- v_ids is an object: `?` finds a key by binary search, so a long queue
  -- costs each record a few comparisons, not one per id.
  select coalesce(array_agg(q.installation_id), '{}'),
         coalesce(jsonb_object_agg(q.installation_id::text, true) filter (
           where not exists (select 1 from app_private.devices d join auth.users u on u.id = d.user_id
                              where d.installation_id = q.installation_id and u.deleted_at is null
                                and d.created_at <= q.queued_at)), '{}')
    into v_taken, v_ids
    from (select t.installation_id, t.queued_at from app_private.installations_to_forget t for update skip locked) q;

  if v_ids <> '{}' then
    -- Records a write holds are skipped, never waited on (a push writes in
    -- its own order: waiting could deadlock with it); the ids they still
    -- name stay queued.
    with matching as materialized (
      select s.collection, s.id, s.field_versions
        from app_private.sync_records s
       where exists (select 1 from jsonb_each(s.field_versions) e where v_ids ? (e.value ->> 'd'))
    ), forgotten as (
      update app_private.sync_records s
         set field_versions = (
           select jsonb_object_agg(e.key, case when v_ids ? (e.value ->> 'd') then jsonb_set(e.value, '{d}', 'null') else e.value end)
             from jsonb_each(s.field_versions) e)
        from (select l.collection, l.id
                from app_private.sync_records l
                join matching m on m.collection = l.collection and m.id = l.id
               -- Checked again on the version locked (a write may have committed since).
               where exists (select 1 from jsonb_each(l.field_versions) e where v_ids ? (e.value ->> 'd'))
               order by l.collection, l.id
                 for update of l skip locked) locked
       where s.collection = locked.collection and s.id = locked.id
      returning s.collection, s.id
    )
    select coalesce(jsonb_object_agg(e.value ->> 'd', true), '{}') into v_left
      from matching m
     cross join jsonb_each(m.field_versions) e
     where v_ids ? (e.value ->> 'd')
       and not exists (select 1 from forgotten f where f.collection = m.collection and f.id = m.id);
  end if;

  delete from app_private.installations_to_forget q
   where q.installation_id = any (v_taken) and not v_left ? q.installation_id::text;
end
$$;
comment on function app_private.forget_queued_installations() is
  'Takes app_private.installations_to_forget: sets d (the writing device) to null in every sync_records.field_versions entry stamped by a queued installation id that no other user who can still sign in registered before it was queued (the merge reads null as an unknown device), and empties the queue of the ids it has forgotten. Never waits: records a write holds are skipped (FOR UPDATE SKIP LOCKED, primary-key order) and the ids they name stay queued for the next pass. One pass over every record; run at the end of run_account_deletions, and by purge_sync_retention when the queue is not empty. Not callable by any API role.';
revoke all on function app_private.forget_queued_installations() from public, anon, authenticated, service_role;

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

  -- Installation ids of users deleted without the account purge (an admin's
  -- delete or soft delete): forgotten within one run. First, so a backlog of
  -- the other tables never starves it; one pass over the sync records.
  if exists (select 1 from app_private.installations_to_forget) then
    perform app_private.forget_queued_installations();
  end if;

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
  'Retention job: deletes ledger rows, tombstones, entries of deleted/moved rows, revocations and used or expired list invites older than p_retention_days before p_now, and expired rate-limit counters, p_batch at a time (first, when any are queued, it forgets the installation ids of deleted users: forget_queued_installations), each table''s batches repeated until one deletes fewer than p_batch or p_time_budget is spent (at least one per table); raises app_private.sync_horizon to the highest txid purged (older pull cursors get 410). Never waits for a writer (SKIP LOCKED). pg_cron runs it where available, else the operator as service_role; tests pass p_now.';

comment on function app_private.run_account_deletions(timestamptz, integer) is
  'The account purge: deletes up to p_batch accounts whose deletion was scheduled at or before p_now, trying the due requests oldest first, each once per run, until p_batch are deleted or none is left (hand-over of shared lists, the before_account_purge hook, the Storage check refuse_purge_while_storage_objects_remain, then the auth.users row and its cascades), records each in account_deletion_audit, then forgets the queued installation ids in the sync state (forget_queued_installations, one pass for the run: these users'' and those of anyone deleted otherwise since the last pass). An account that fails (the hook or the Storage check refuses) is rolled back alone, logged by request id and retried next run; the run goes on past it. Idempotent; concurrent runs never take the same request (FOR UPDATE SKIP LOCKED). Runs as the owner (no superuser needed): pg_cron where available, else service_role; tests pass p_now.';

comment on table app_private.installations_to_forget is
  'Installation ids whose device row went (pruned, or deleted with its user) or whose user was soft-deleted, queued by triggers on app_private.devices and auth.users until app_private.forget_queued_installations() nulls them in sync_records.field_versions (run by run_account_deletions and purge_sync_retention). Emptied by that pass; read by no API role.';
