-- What: an invite is valid for at least a minute: public.create_list_invite
-- refuses a shorter p_valid_for with 22023 ('p_valid_for must be between 1
-- minute and 30 days'; it was 1 second, and any positive interval passed).
-- The retention purge (app_private.purge_sync_retention, every 5 minutes)
-- deletes invites that expired unused at its next run, read through a new
-- partial index (list_invites_unused_expires_at_idx: unused invites by
-- expiry), in batches within its time budget like every other step; used
-- invites stay retention_days (default 30) after their use, as before, for
-- the owners to see who joined.
-- Why: the cap of 100 pending invites per list (20261127000520) counts an
-- invite only until it expires, and expired ones were kept retention_days.
-- 500 creates valid 1 microsecond all succeeded (1.5 s) and left 500 rows,
-- at whatever rate an owner sent them (the Data API has no rate limit): the
-- rows piled up without end again. Now an owner creates at most the cap
-- (100) invites to a list per minute, and the unused rows they leave number
-- at most about 700 (a minute valid, then up to 5 minutes until the next
-- run; pg_cron's schedule, docs/retention.md). A code valid less than a
-- minute is gone before it can be passed on and typed in, and an expired
-- unused invite admits
-- nobody and records no one: nothing is lost by deleting it (redeem already
-- answers such a code as a wrong one).
-- Tests: pgTAP 148-list-invites-minimum-validity, 211-list-invites-retention;
-- docs/retention.md, docs/security-model.md, docs/account-export.md.
-- Down step: supabase/rollbacks/20261128003700_invites_valid_a_minute_and_purged_once_expired_unused.down.sql.

create index list_invites_unused_expires_at_idx on app_private.list_invites (expires_at) where used_at is null;
comment on index app_private.list_invites_unused_expires_at_idx is 'The retention purge: unused invites by when they expire (those that expired unused go at its next run).';

create or replace function public.create_list_invite(p_list_id uuid, p_role text default 'editor', p_valid_for interval default interval '7 days')
returns text
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_code text := replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
begin
  if p_role is null or p_role not in ('owner', 'editor', 'viewer') then
    raise exception 'p_role must be owner, editor or viewer' using errcode = 'invalid_parameter_value';
  end if;
  -- At least a minute: the cap counts an invite only while it is pending, so
  -- shorter ones let an owner create rows at the rate of their requests.
  if p_valid_for is null or p_valid_for < interval '1 minute' or p_valid_for > interval '30 days' then
    raise exception 'p_valid_for must be between 1 minute and 30 days' using errcode = 'invalid_parameter_value';
  end if;
  -- One create of a list's invites at a time, so that two cannot pass the cap together.
  perform pg_advisory_xact_lock(hashtextextended('app_private.list_invites:' || p_list_id::text, 0));
  -- Only codes that redeem would honour count (a non-owner counts none, and the insert below refuses them).
  if app_private.pending_list_invites(p_list_id) >= app_private.max_pending_invites_per_list() then
    raise exception 'a list has at most % pending invites; they stop counting once used or expired, and those of a former owner, or of one who cannot sign in, do not count', app_private.max_pending_invites_per_list()
      using errcode = 'check_violation', constraint = 'max_pending_invites_per_list';
  end if;
  -- As the caller: the insert policy lets only an owner of the list through.
  insert into app_private.list_invites (list_id, role, code_sha256, expires_at)
  values (p_list_id, p_role, sha256(convert_to(v_code, 'UTF8')), now() + p_valid_for);
  return v_code;
exception
  when insufficient_privilege or foreign_key_violation then
    -- the same answer for a list that does not exist and one the caller does not own
    raise exception 'no such list, or you are not its owner' using errcode = 'insufficient_privilege';
end;
$$;
comment on function public.create_list_invite(uuid, text, interval) is
  'Data API: an owner creates a single-use invite code (64 hex characters) to the list with the given role (owner, editor, viewer; any other is 22023), valid for p_valid_for (default 7 days; at least 1 minute and at most 30 days, else 22023) and while the calling session counts (list_invites.created_session: signing it out withdraws the code); at most app_private.max_pending_invites_per_list() pending invites per list that would be honoured (app_private.pending_list_invites: their creator still an owner who can sign in, their session still counting; 23514). One that expires unused is deleted by the next run of app_private.purge_sync_retention.';

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
  -- The oldest transaction still open anywhere in the cluster (pulls use the same bound).
  v_open xid8 := pg_snapshot_xmin(pg_current_snapshot());
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
  -- Only entries below v_open: while that transaction is open every pull
  -- stands at or below it (none reads past it: docs/sync.md, guarantee 1), a
  -- full sync's first page included. An entry at or above it, purged, raised
  -- the horizon over all of them: each pull answered 410 until that
  -- transaction ended. Such an entry waits for a later run.
  loop
    with doomed as (
      select c.scope_id, c.collection, c.id
        from app_private.sync_changes c
       where not c.present and c.changed_at < v_cutoff and c.txid < v_open
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
       where not a.granted and a.changed_at < v_cutoff and a.txid < v_open
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

  -- Invites that expired unused: nobody joined through them, so there is
  -- nothing to keep; they go at the next run (kept retention_days, they
  -- piled up at the rate of an owner's creates, which the cap of pending
  -- invites does not bound). Read through list_invites_unused_expires_at_idx.
  loop
    with doomed as (
      select i.id
        from app_private.list_invites i
       where i.used_at is null and i.expires_at < p_now
       order by i.expires_at
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

  -- Invites used before the cutoff: kept that long for their owners to see
  -- who joined (and any expired unused one the loop above had no time for).
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
  'Retention job: deletes ledger rows, tombstones, entries of deleted/moved rows, revocations and used list invites older than p_retention_days before p_now, list invites that expired unused before p_now (nobody joined through them: at once), and expired rate-limit counters, p_batch at a time (first it goes on with forgetting queued installation ids: forget_queued_installations, within the same budget and batch), each table''s batches repeated until one deletes fewer than p_batch or p_time_budget is spent (at least one per table); raises app_private.sync_horizon to the highest txid purged (older pull cursors get 410); purges only entries below the xmin of its snapshot (written by transactions that had all ended), so the horizon stays below the bound of every later pull. Never waits for a writer (SKIP LOCKED). pg_cron runs it where available, else the operator as service_role; tests pass p_now.';
