-- Down step of 20261126003300_purge_repeats_its_batches.sql: the purge of
-- 20261122010300_sync_retention.sql comes back (one batch per table per run).
drop function app_private.purge_sync_retention(timestamptz, integer, integer, interval);

create function app_private.purge_sync_retention(
  p_now timestamptz default now(),
  p_batch integer default 5000,
  p_retention_days integer default 30
)
returns table (ops_purged integer, tombstones_purged integer, changes_purged integer, rate_limit_counters_purged integer)
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_cutoff timestamptz;
  v_horizon xid8;
begin
  if p_now is null or p_batch is null or p_batch < 1 or p_retention_days is null or p_retention_days < 1 then
    raise exception 'purge_sync_retention: p_now is required, p_batch and p_retention_days must be positive'
      using errcode = 'invalid_parameter_value';
  end if;
  v_cutoff := p_now - make_interval(days => p_retention_days);

  -- Change entries of deleted or moved rows, and revocations: a cursor from
  -- before them may have missed them, so the horizon rises to their txid.
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
  select count(*)::integer, max(purged.txid) into changes_purged, v_horizon from purged;

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
  select greatest(v_horizon, max(purged.txid)) into v_horizon from purged;

  if v_horizon is not null then
    update app_private.sync_horizon set purged_txid = greatest(purged_txid, v_horizon);
  end if;

  -- Tombstones: the version state of rows deleted long ago.
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
  select count(*)::integer into tombstones_purged from purged;

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
  select count(*)::integer into ops_purged from purged;

  rate_limit_counters_purged := app_private.purge_rate_limit_counters(p_now, p_batch);
  return next;
end;
$$;
comment on function app_private.purge_sync_retention(timestamptz, integer, integer) is
  'Retention job: deletes at most p_batch each of ledger rows, tombstones, entries of deleted/moved rows and revocations older than p_retention_days before p_now, raises app_private.sync_horizon (older pull cursors get 410), and purges expired rate-limit counters. Never waits for a writer (SKIP LOCKED). pg_cron runs it where available, else service_role; tests pass p_now.';
revoke all on function app_private.purge_sync_retention(timestamptz, integer, integer) from public, anon, authenticated, service_role;
grant execute on function app_private.purge_sync_retention(timestamptz, integer, integer) to service_role;
