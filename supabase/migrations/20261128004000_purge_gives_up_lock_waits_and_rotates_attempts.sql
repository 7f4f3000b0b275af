-- What: one account that waits no longer stops the account purge for every
-- account due after it. Each account's work, app_private.purge_account(…),
-- gives up a lock wait after 10 s (its own lock_timeout): the attempt fails
-- alone (55P03, caught as any failure), its request stays, and the run goes on
-- to the next. And each attempt is recorded on its request
-- (account_deletion_requests.last_attempt_at) by
-- app_private.begin_purge_attempt(…), which purge_due_accounts commits before
-- the account's work: a run takes the requests never tried first, then the
-- least recently tried (each by due date), so a request whose attempt a run's
-- statement_timeout cancelled goes behind the others the next time.
-- purge_next_due_account (the two in one) is replaced by the two.
-- Why: one account that was slow (the app's hook: a synchronous HTTP call) or
-- waited on a lock (a transaction holding one of the user's rows) stopped
-- every run, for good. The run is one top-level CALL, so statement_timeout
-- (2 min on hosted Supabase for postgres, which pg_cron runs the job as)
-- spans all of it; its cancel (57014) is no error a subtransaction catches
-- (WHEN OTHERS leaves it out), so it ended the run; and the next run took
-- the oldest due account first again: every account due after it stayed due.
-- Tests: pgTAP 151-purge-lock-timeout-and-attempt-order (and 143, 502);
-- integration tests/integration/account-purge-per-account.test.ts.
-- Down step: supabase/rollbacks/20261128004000_purge_gives_up_lock_waits_and_rotates_attempts.down.sql

alter table app_private.account_deletion_requests add column last_attempt_at timestamptz;
comment on column app_private.account_deletion_requests.last_attempt_at is
  'When the purge last began an attempt at this account (null: never), recorded before the attempt''s work (purge_due_accounts commits it first): a run tries requests never tried first, then the least recently tried, so one whose attempt failed or was cancelled goes behind the others.';

drop function app_private.purge_next_due_account(timestamptz, timestamptz, uuid);

create function app_private.begin_purge_attempt(p_now timestamptz, p_tried_before timestamptz)
returns uuid
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_request uuid;
begin
  if p_now is null or p_tried_before is null then
    raise exception 'begin_purge_attempt: p_now and p_tried_before are required' using errcode = 'invalid_parameter_value';
  end if;
  -- Never tried first, then the least recently tried: a request whose last
  -- attempt failed or was cancelled never comes before one not yet tried.
  -- Locked as taken (a concurrent run skips it, a concurrent cancel waits
  -- for this statement only).
  update app_private.account_deletion_requests r
     set last_attempt_at = pg_catalog.clock_timestamp()
   where r.request_id = (
           select q.request_id
             from app_private.account_deletion_requests q
            where q.scheduled_for <= p_now
              and (q.last_attempt_at is null or q.last_attempt_at < p_tried_before)
            order by q.last_attempt_at nulls first, q.scheduled_for, q.user_id
            limit 1
              for update skip locked)
  returning r.request_id into v_request;
  return v_request;
end
$$;
comment on function app_private.begin_purge_attempt(timestamptz, timestamptz) is
  'The purge''s next account: takes the request due at p_now not tried since p_tried_before (the run''s start: each is tried once a run) that was never tried, else least recently (then oldest due, then by user id; FOR UPDATE SKIP LOCKED), sets its last_attempt_at and returns its request_id (null when none is left). purge_due_accounts commits this before the account''s work (purge_account), so a cancelled attempt stays recorded. Runs as the owner; service_role (for purge_due_accounts).';
revoke execute on function app_private.begin_purge_attempt(timestamptz, timestamptz) from public;
grant execute on function app_private.begin_purge_attempt(timestamptz, timestamptz) to service_role;

create function app_private.purge_account(
  p_request uuid,
  p_now timestamptz,
  out deleted boolean,
  out lists_handed_over integer
)
language plpgsql
volatile
security definer
set search_path = ''
-- A lock wait (a writer holding one of the user's rows or lists, anything the
-- app's hook waits for) fails this account's attempt with 55P03 after 10 s,
-- caught below, instead of holding up the run and the accounts after it.
-- Longer than any API transaction lasts (statement_timeout 8 s + 1 s,
-- docs/configuration.md), so an ordinary write only delays the account.
set lock_timeout = '10s'
as $$
declare
  v_user uuid;
  v_scopes uuid[];
begin
  if p_request is null or p_now is null then
    raise exception 'purge_account: p_request and p_now are required' using errcode = 'invalid_parameter_value';
  end if;
  deleted := false;
  lists_handed_over := 0;

  -- One account per subtransaction, its request's lock taken inside it: an
  -- account that cannot be deleted yet (the hook or the Storage check
  -- refuses, a deadlock, a lock wait past lock_timeout) is rolled back alone
  -- and gives its request back at once (its cancel need not wait), and is
  -- retried on a later run. A cancel (statement_timeout, 57014) is no error
  -- WHEN OTHERS catches: it ends the caller's statement (the run).
  begin
    -- Still due and not taken by another run (cancelled since: gone).
    select r.user_id into v_user
      from app_private.account_deletion_requests r
     where r.request_id = p_request and r.scheduled_for <= p_now
       for update skip locked;
    if not found then
      return;
    end if;

    v_scopes := array(select m.list_id from public.list_members m where m.user_id = v_user);
    lists_handed_over := app_private.hand_over_lists(v_user);
    perform app_private.before_account_purge(v_user);
    -- Storage objects still naming the user (owner or owner_id) once the
    -- hook has run refuse the purge: the account is kept, retried next run.
    perform app_private.refuse_purge_while_storage_objects_remain(v_user);

    -- Lists with no other member go first, each as one cascade: deleting
    -- the user first would null created_by on every row of them (through
    -- the sync triggers) only to delete those rows next (5x slower).
    delete from public.lists l
     where l.id = any (v_scopes)
       and not exists (select 1 from public.list_members o where o.list_id = l.id and o.user_id <> v_user);

    -- Supabase Auth's refresh_tokens.user_id is text without a foreign key
    -- (GoTrue deletes them itself); those of no session would outlive the user.
    delete from auth.refresh_tokens t where t.user_id = v_user::text;
    -- The request goes first, so the trigger before the user's delete does
    -- not record the outcome too (20261127002420): the purge records it below.
    delete from app_private.account_deletion_requests r where r.request_id = p_request;
    -- The cascades: sessions, refresh tokens, profile, devices, preferences and
    -- their audit, memberships (a list left without members is deleted),
    -- invites, sync usage/ops/access, rate-limit counters.
    -- created_by of lists, tasks and sync state the user wrote becomes null;
    -- the user's installation ids are queued (a trigger on the delete).
    delete from auth.users u where u.id = v_user;

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
    values (p_request, 'purged', purge_account.lists_handed_over);
    deleted := true;
  exception when others then
    -- The request id only: the log names no user.
    raise warning 'account purge: request % not carried out this run (%: %)', p_request, sqlstate, sqlerrm;
    deleted := false;
    lists_handed_over := 0;
  end;
end
$$;
comment on function app_private.purge_account(uuid, timestamptz) is
  'One account of the purge: in a subtransaction that includes its request''s lock (FOR UPDATE SKIP LOCKED; nothing when the request is gone, taken or not due at p_now), hands over the user''s shared lists, runs the before_account_purge hook and the Storage check refuse_purge_while_storage_objects_remain, deletes the lists that go with the account, the request and the auth.users row (its cascades), and records purged in account_deletion_audit. Returns whether the account was deleted and how many lists it handed over; a refused or failed account (a lock wait past its lock_timeout of 10 s too) is rolled back alone, logged by request id, and its request stays for a later run. A cancel (statement_timeout) is not caught: it ends the caller''s statement. Its locks last until the caller''s transaction ends: purge_due_accounts commits after each. Runs as the owner; service_role (for purge_due_accounts).';
revoke execute on function app_private.purge_account(uuid, timestamptz) from public;
grant execute on function app_private.purge_account(uuid, timestamptz) to service_role;

create or replace procedure app_private.purge_due_accounts(p_now timestamptz default now(), p_batch integer default 20)
language plpgsql
as $$
declare
  v_request uuid;
  v_step record;
  v_deleted integer := 0;
  -- Requests tried since then were tried in this run.
  v_run_started timestamptz := clock_timestamp();
begin
  if p_now is null or p_batch is null or p_batch < 1 then
    raise exception 'purge_due_accounts: p_now is required and p_batch must be positive' using errcode = 'invalid_parameter_value';
  end if;
  -- Called inside a transaction block (BEGIN; CALL …, or a cron command of
  -- several statements), it could not end the accounts' transactions: this
  -- refuses before any work (2D000 invalid transaction termination).
  commit;

  -- Due requests one by one, each tried once in this run, never tried first,
  -- then the least recently tried, until p_batch accounts are deleted:
  -- refused ones never take the slots of those behind them. The attempt is
  -- committed before the account's work: statement_timeout spans this whole
  -- CALL and its cancel ends the run, so the account it cut off goes behind
  -- the others the next time instead of stopping every run. Each account
  -- commits on its own: its locks (the lists handed over, the rows the user's
  -- delete changed, the request) and its transaction id (which holds back
  -- every pull's bound) go as soon as it is done.
  loop
    exit when v_deleted >= p_batch;
    v_request := app_private.begin_purge_attempt(p_now, v_run_started);
    exit when v_request is null;
    commit;
    select * into v_step from app_private.purge_account(v_request, p_now);
    if v_step.deleted then
      v_deleted := v_deleted + 1;
    end if;
    commit;
  end loop;
  commit;

  -- One pass over the sync state for every account of the run, and whoever
  -- else was deleted since the last pass, in a transaction of its own (it
  -- reads every record: docs/account-deletion.md has the cost).
  perform app_private.forget_purged_installations();
end
$$;
comment on procedure app_private.purge_due_accounts(timestamptz, integer) is
  'The account purge as pg_cron runs it (call app_private.purge_due_accounts()): deletes up to p_batch accounts due at p_now, each tried once per run, those never tried first, then the least recently tried (app_private.begin_purge_attempt, committed before the account''s work), each account''s work (app_private.purge_account, which gives up a lock wait after 10 s) committed on its own, then forgets the queued installation ids (forget_purged_installations) in a transaction of its own. statement_timeout spans the whole CALL: its cancel ends the run, and the account it cut off is tried after the others next run. Must be called outside a transaction block (a top-level CALL): inside one it raises 2D000 before doing anything; run_account_deletions is the one-transaction form. Runs as its caller: the owner (pg_cron) or service_role.';

-- The function form: the same accounts in the caller's one transaction.
create or replace function app_private.run_account_deletions(p_now timestamptz default now(), p_batch integer default 20)
returns table (users_deleted integer, lists_handed_over integer)
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_request uuid;
  v_step record;
  v_run_started timestamptz := pg_catalog.clock_timestamp();
begin
  if p_now is null or p_batch is null or p_batch < 1 then
    raise exception 'run_account_deletions: p_now is required and p_batch must be positive' using errcode = 'invalid_parameter_value';
  end if;
  users_deleted := 0;
  lists_handed_over := 0;
  loop
    exit when users_deleted >= p_batch;
    v_request := app_private.begin_purge_attempt(p_now, v_run_started);
    exit when v_request is null;
    select * into v_step from app_private.purge_account(v_request, p_now);
    if v_step.deleted then
      users_deleted := users_deleted + 1;
      lists_handed_over := lists_handed_over + v_step.lists_handed_over;
    end if;
  end loop;
  perform app_private.forget_queued_installations();
  return next;
end
$$;
comment on function app_private.run_account_deletions(timestamptz, integer) is
  'The account purge in one transaction (the caller''s): the accounts of purge_due_accounts (app_private.begin_purge_attempt and app_private.purge_account, up to p_batch deleted, each tried once, never tried first, then least recently tried) and then forget_queued_installations, returning how many users were deleted and lists handed over. Every account''s locks and the transaction id are held until that transaction ends, through every later account, and a cancel rolls back the attempts it recorded too: pg_cron runs purge_due_accounts, which commits after each; this form is for tests and callers already in a transaction. Runs as the owner; service_role; tests pass p_now.';

-- What calls these now.
comment on function app_private.refuse_purge_while_storage_objects_remain(uuid) is 'The purge''s Storage check, called by the account purge (purge_account) after the before_account_purge hook: raises object_in_use (the account is rolled back alone and retried on a later run) while storage.objects has an object whose owner or owner_id names the user. Not callable by any API role.';
