-- What: the retention purge of sync data. app_private.purge_sync_retention()
-- deletes, in bounded batches, op results (sync_ops) and tombstones older
-- than the retention window, raises each affected user's
-- sync_heads.purged_through_seq to the highest purged tombstone seq, and
-- purges expired rate-limit counters in the same run.
-- Why: api-v1.md keeps op_id results and tombstones for 30 days. A pull cursor
-- below purged_through_seq may have missed a purged delete, so GET
-- /v1/sync/changes answers it with 410 RESYNC_REQUIRED (docs/sync.md).
--
-- Locking: a writer locks its user's sync_heads row before touching that
-- user's records. The purge follows the same order (head, then records) and
-- takes heads with SKIP LOCKED, ops with SKIP LOCKED: it never waits for a
-- writer and cannot deadlock with one; a busy user's tombstones simply go in
-- a later run.
--
-- rollback:
--   drop function if exists app_private.purge_sync_retention(timestamptz, integer, integer);
--   drop index if exists app_private.records_tombstones_deleted_at_idx;

-- Only tombstones, oldest first: the purge's access path (partial, so live
-- records cost nothing).
create index records_tombstones_deleted_at_idx on app_private.records (deleted_at) where deleted;
comment on index app_private.records_tombstones_deleted_at_idx is 'Retention purge: tombstones by age.';

create function app_private.purge_sync_retention(
  p_now timestamptz default now(),
  p_batch integer default 5000,
  p_retention_days integer default 30
)
returns table (ops_purged integer, tombstones_purged integer, rate_limit_counters_purged integer)
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_cutoff timestamptz;
  v_users uuid[];
begin
  if p_now is null or p_batch is null or p_batch < 1 or p_retention_days is null or p_retention_days < 1 then
    raise exception 'purge_sync_retention: p_now is required, p_batch and p_retention_days must be positive'
      using errcode = 'invalid_parameter_value';
  end if;
  v_cutoff := p_now - make_interval(days => p_retention_days);

  -- 1. Lock the heads of the users owning the oldest expired tombstones;
  --    a head a writer holds right now is skipped (its user waits for a later run).
  select coalesce(array_agg(h.user_id), '{}') into v_users
  from (
    select h.user_id
    from app_private.sync_heads h
    where h.user_id in (
      select r.user_id
      from app_private.records r
      where r.deleted and r.deleted_at < v_cutoff
      order by r.deleted_at
      limit p_batch
    )
    order by h.user_id
    for update skip locked
  ) h;

  -- 2. Delete at most p_batch of those users' expired tombstones (still
  --    tombstones: the row is re-checked) and raise purged_through_seq.
  with doomed as (
    select r.user_id, r.collection, r.id
    from app_private.records r
    where r.deleted and r.deleted_at < v_cutoff and r.user_id = any (v_users)
    order by r.deleted_at
    limit p_batch
  ), purged as (
    delete from app_private.records r
    using doomed d
    where r.user_id = d.user_id and r.collection = d.collection and r.id = d.id
      and r.deleted and r.deleted_at < v_cutoff
    returning r.user_id, r.change_seq
  ), raised as (
    update app_private.sync_heads h
    set purged_through_seq = greatest(h.purged_through_seq, p.max_seq),
        updated_at = now()
    from (select purged.user_id, max(purged.change_seq) as max_seq from purged group by purged.user_id) p
    where h.user_id = p.user_id
    returning 1
  )
  select count(*)::integer into tombstones_purged from purged;

  -- 3. Op results past the window, oldest first; rows a running batch has
  --    locked are left for the next run.
  with doomed as (
    select o.user_id, o.op_id
    from app_private.sync_ops o
    where o.created_at < v_cutoff
    order by o.created_at
    limit p_batch
    for update skip locked
  ), purged as (
    delete from app_private.sync_ops o
    using doomed d
    where o.user_id = d.user_id and o.op_id = d.op_id
    returning 1
  )
  select count(*)::integer into ops_purged from purged;

  -- 4. Rate-limit counters of windows long over (their own bounded purge).
  rate_limit_counters_purged := app_private.purge_rate_limit_counters(p_now, p_batch);

  return next;
end;
$$;
comment on function app_private.purge_sync_retention(timestamptz, integer, integer) is
  'Retention job: deletes at most p_batch op results and at most p_batch tombstones older than p_retention_days before p_now, raises sync_heads.purged_through_seq to the highest purged tombstone seq per user (older pull cursors get 410), and purges expired rate-limit counters. Never waits for a writer (SKIP LOCKED). Run by pg_cron where available, else by service_role; tests pass p_now.';
revoke all on function app_private.purge_sync_retention(timestamptz, integer, integer) from public, anon, authenticated, service_role;
grant execute on function app_private.purge_sync_retention(timestamptz, integer, integer) to service_role;
