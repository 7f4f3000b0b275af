-- Down step of 20261128000700_purge_stays_below_open_transactions.sql:
-- purge_sync_retention as 20261127002210_forget_installations_within_budget.sql
-- made it (it purges expired entries whatever their txid).

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
