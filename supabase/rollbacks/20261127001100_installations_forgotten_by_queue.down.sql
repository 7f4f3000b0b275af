-- Down step of 20261127001100_installations_forgotten_by_queue.sql:
-- forget_installations and run_account_deletions as
-- 20261126002920_purge_forgets_installation_ids.sql made them,
-- purge_sync_retention as 20261127000520_list_invites_bounded_and_purged.sql
-- made it; the triggers on auth.users go, then the ids still queued are
-- forgotten, then the queue and its functions go.
create function app_private.forget_installations(p_installation_ids uuid[])
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_ids jsonb;
begin
  -- Ids another user still registers (one phone, two accounts) stay theirs.
  v_ids := to_jsonb(array(
    select distinct i::text from unnest(p_installation_ids) i
     where not exists (select 1 from app_private.devices d where d.installation_id = i)));
  if jsonb_array_length(v_ids) = 0 then
    return;
  end if;
  update app_private.sync_records s
     set field_versions = (
       select jsonb_object_agg(e.key, case when v_ids ? (e.value ->> 'd') then jsonb_set(e.value, '{d}', 'null') else e.value end)
         from jsonb_each(s.field_versions) e)
   where jsonb_path_exists(s.field_versions, '$.* ? (@.d == $ids)', jsonb_build_object('ids', v_ids));
end
$$;
comment on function app_private.forget_installations(uuid[]) is
  'The account purge, once per run: sets d (the writing device) to null in every sync_records.field_versions entry stamped by one of these installation ids that no device row registers any more (the merge reads null as an unknown device). Reads every record. Not callable by any API role.';
revoke all on function app_private.forget_installations(uuid[]) from public, anon, authenticated, service_role;

create or replace function app_private.run_account_deletions(p_now timestamptz default now(), p_batch integer default 20)
returns table (users_deleted integer, lists_handed_over integer)
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_due record;
  v_scopes uuid[];
  v_handed integer;
  -- The last request tried: the next one sorts after it.
  v_last_scheduled timestamptz := '-infinity';
  v_last_user uuid := '00000000-0000-0000-0000-000000000000';
  v_installations uuid[];
  v_purged_installations uuid[] := '{}';
begin
  if p_now is null or p_batch is null or p_batch < 1 then
    raise exception 'run_account_deletions: p_now is required and p_batch must be positive' using errcode = 'invalid_parameter_value';
  end if;
  users_deleted := 0;
  lists_handed_over := 0;

  -- Due requests one by one, oldest first, each tried once in this run
  -- (keyset past the last one tried), until p_batch accounts are deleted:
  -- refused ones never take the slots of those behind them. Locked as taken:
  -- a concurrent run skips them, a concurrent cancel waits.
  loop
    exit when users_deleted >= p_batch;
    select r.user_id, r.request_id, r.scheduled_for into v_due
      from app_private.account_deletion_requests r
     where r.scheduled_for <= p_now
       and (r.scheduled_for, r.user_id) > (v_last_scheduled, v_last_user)
     order by r.scheduled_for, r.user_id
     limit 1
       for update skip locked;
    exit when not found;
    v_last_scheduled := v_due.scheduled_for;
    v_last_user := v_due.user_id;

    -- One account per subtransaction: an account that cannot be deleted yet
    -- (the hook refuses, e.g. Storage objects left) is skipped and retried on
    -- the next run; the run goes on to the next due one.
    begin
      v_scopes := array(select m.list_id from public.list_members m where m.user_id = v_due.user_id);
      v_handed := app_private.hand_over_lists(v_due.user_id);
      perform app_private.before_account_purge(v_due.user_id);
      -- Storage objects still naming the user (owner or owner_id) once the
      -- hook has run refuse the purge: the account is kept, retried next run.
      perform app_private.refuse_purge_while_storage_objects_remain(v_due.user_id);

      -- Lists with no other member go first, each as one cascade: deleting
      -- the user first would null created_by on every row of them (through
      -- the sync triggers) only to delete those rows next (5x slower).
      delete from public.lists l
       where l.id = any (v_scopes)
         and not exists (select 1 from public.list_members o where o.list_id = l.id and o.user_id <> v_due.user_id);

      -- The user's installation ids, forgotten in the sync state once the run
      -- is done (below): the devices go with the user.
      v_installations := array(select d.installation_id from app_private.devices d where d.user_id = v_due.user_id);

      -- Supabase Auth's refresh_tokens.user_id is text without a foreign key
      -- (GoTrue deletes them itself); those of no session would outlive the user.
      delete from auth.refresh_tokens t where t.user_id = v_due.user_id::text;
      -- The cascades: sessions, refresh tokens, profile, devices, preferences and
      -- their audit, memberships (a list left without members is deleted),
      -- invites, sync usage/ops/access, rate-limit counters, this request.
      -- created_by of lists, tasks and sync state the user wrote becomes null.
      delete from auth.users u where u.id = v_due.user_id;

      -- Sync bookkeeping of the lists that went with the user (no member left
      -- and no former member still to be told): nobody can read it any more.
      delete from app_private.sync_changes c
       where c.scope_id = any (v_scopes)
         and not exists (select 1 from public.lists l where l.id = c.scope_id)
         and not exists (select 1 from app_private.sync_access a where a.scope_id = c.scope_id);
      delete from app_private.sync_records s
       where s.scope_id = any (v_scopes) and s.deleted
         and not exists (select 1 from public.lists l where l.id = s.scope_id)
         and not exists (select 1 from app_private.sync_access a where a.scope_id = s.scope_id);

      insert into app_private.account_deletion_audit (request_id, event, lists_handed_over)
      values (v_due.request_id, 'purged', v_handed);
      users_deleted := users_deleted + 1;
      lists_handed_over := lists_handed_over + v_handed;
      v_purged_installations := v_purged_installations || v_installations;
    exception when others then
      -- The request id only: the log names no user.
      raise warning 'run_account_deletions: request % not carried out this run (%: %)', v_due.request_id, sqlstate, sqlerrm;
    end;
  end loop;

  -- One pass over the sync state for every account of the run (it reads
  -- every record: docs/account-deletion.md has the cost).
  perform app_private.forget_installations(v_purged_installations);
  return next;
end
$$;
comment on function app_private.run_account_deletions(timestamptz, integer) is
  'The account purge: deletes up to p_batch accounts whose deletion was scheduled at or before p_now, trying the due requests oldest first, each once per run, until p_batch are deleted or none is left (hand-over of shared lists, the before_account_purge hook, the Storage check refuse_purge_while_storage_objects_remain, then the auth.users row and its cascades), records each in account_deletion_audit, then forgets the deleted users'' installation ids in the sync state (forget_installations, one pass for the run). An account that fails (the hook or the Storage check refuses) is rolled back alone, logged by request id and retried next run; the run goes on past it. Idempotent; concurrent runs never take the same request (FOR UPDATE SKIP LOCKED). Runs as the owner (no superuser needed): pg_cron where available, else service_role; tests pass p_now.';
revoke all on function app_private.run_account_deletions(timestamptz, integer) from public, anon, authenticated, service_role;
grant execute on function app_private.run_account_deletions(timestamptz, integer) to service_role;

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
  'Retention job: deletes ledger rows, tombstones, entries of deleted/moved rows, revocations and used or expired list invites older than p_retention_days before p_now, and expired rate-limit counters, p_batch at a time, each table''s batches repeated until one deletes fewer than p_batch or p_time_budget is spent (at least one per table); raises app_private.sync_horizon to the highest txid purged (older pull cursors get 410). Never waits for a writer (SKIP LOCKED). pg_cron runs it where available, else the operator as service_role; tests pass p_now.';


-- auth.users belongs to Supabase Auth: the owner may create a trigger on it but
-- not drop one by name; dropping the triggers' function with CASCADE drops them.
-- First: dropping them waits for every delete of a user under way, so nothing
-- is queued after the pass below.
drop function app_private.queue_installations_of_deleted_user() cascade;
-- The ids still queued are forgotten before the queue goes: the code rolled
-- back to never would (a deleted user's phone would stay linked to their
-- writes). forget_queued_installations is 20261127001100's own here (the later
-- down steps restored it): it waits for the records a push holds and empties
-- the queue.
select app_private.forget_queued_installations();
drop function app_private.forget_queued_installations();
drop table app_private.installations_to_forget;
