-- Down step of 20261128004000_purge_gives_up_lock_waits_and_rotates_attempts.sql:
-- the purge as 20261128003300 made it (purge_next_due_account takes the next
-- due request oldest first and carries it out, without a lock_timeout of its
-- own; purge_due_accounts and run_account_deletions call it), and no
-- begin_purge_attempt, purge_account nor last_attempt_at.

create function app_private.purge_next_due_account(
  p_now timestamptz,
  p_after_scheduled timestamptz default '-infinity',
  p_after_user uuid default '00000000-0000-0000-0000-000000000000',
  out scheduled_for timestamptz,
  out user_id uuid,
  out deleted boolean,
  out lists_handed_over integer
)
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_request uuid;
  v_scopes uuid[];
begin
  if p_now is null or p_after_scheduled is null or p_after_user is null then
    raise exception 'purge_next_due_account: p_now, p_after_scheduled and p_after_user are required' using errcode = 'invalid_parameter_value';
  end if;
  deleted := false;
  lists_handed_over := 0;

  -- One account per subtransaction, its request's lock taken inside it: an
  -- account that cannot be deleted yet (the hook or the Storage check
  -- refuses, a deadlock) is rolled back alone and gives its request back at
  -- once (its cancel need not wait), and is retried on the next run.
  begin
    -- The next due request after the position given (oldest first), locked
    -- as taken: a concurrent run skips it, a concurrent cancel waits.
    select r.scheduled_for, r.user_id, r.request_id into scheduled_for, user_id, v_request
      from app_private.account_deletion_requests r
     where r.scheduled_for <= p_now
       and (r.scheduled_for, r.user_id) > (p_after_scheduled, p_after_user)
     order by r.scheduled_for, r.user_id
     limit 1
       for update skip locked;
    if not found then
      return;
    end if;

    v_scopes := array(select m.list_id from public.list_members m where m.user_id = purge_next_due_account.user_id);
    lists_handed_over := app_private.hand_over_lists(purge_next_due_account.user_id);
    perform app_private.before_account_purge(purge_next_due_account.user_id);
    -- Storage objects still naming the user (owner or owner_id) once the
    -- hook has run refuse the purge: the account is kept, retried next run.
    perform app_private.refuse_purge_while_storage_objects_remain(purge_next_due_account.user_id);

    -- Lists with no other member go first, each as one cascade: deleting
    -- the user first would null created_by on every row of them (through
    -- the sync triggers) only to delete those rows next (5x slower).
    delete from public.lists l
     where l.id = any (v_scopes)
       and not exists (select 1 from public.list_members o where o.list_id = l.id and o.user_id <> purge_next_due_account.user_id);

    -- Supabase Auth's refresh_tokens.user_id is text without a foreign key
    -- (GoTrue deletes them itself); those of no session would outlive the user.
    delete from auth.refresh_tokens t where t.user_id = purge_next_due_account.user_id::text;
    -- The request goes first, so the trigger before the user's delete does
    -- not record the outcome too (20261127002420): the purge records it below.
    delete from app_private.account_deletion_requests r where r.request_id = v_request;
    -- The cascades: sessions, refresh tokens, profile, devices, preferences and
    -- their audit, memberships (a list left without members is deleted),
    -- invites, sync usage/ops/access, rate-limit counters.
    -- created_by of lists, tasks and sync state the user wrote becomes null;
    -- the user's installation ids are queued (a trigger on the delete).
    delete from auth.users u where u.id = purge_next_due_account.user_id;

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
    values (v_request, 'purged', purge_next_due_account.lists_handed_over);
    deleted := true;
  exception when others then
    -- The request id only: the log names no user.
    raise warning 'account purge: request % not carried out this run (%: %)', v_request, sqlstate, sqlerrm;
    deleted := false;
    lists_handed_over := 0;
  end;
end
$$;
comment on function app_private.purge_next_due_account(timestamptz, timestamptz, uuid) is
  'One account of the purge: takes the next request due at p_now after (p_after_scheduled, p_after_user) in (scheduled_for, user_id) order (FOR UPDATE SKIP LOCKED) and, in a subtransaction that includes that lock, hands over the user''s shared lists, runs the before_account_purge hook and the Storage check refuse_purge_while_storage_objects_remain, deletes the lists that go with the account, the request and the auth.users row (its cascades), and records purged in account_deletion_audit. Returns the request''s position (scheduled_for, user_id: null when none is due), whether the account was deleted and how many lists it handed over; a refused or failed account is rolled back alone, logged by request id, and its request stays for the next run. Its locks last until the caller''s transaction ends: purge_due_accounts commits after each. Runs as the owner; service_role (for purge_due_accounts).';
revoke execute on function app_private.purge_next_due_account(timestamptz, timestamptz, uuid) from public;
grant execute on function app_private.purge_next_due_account(timestamptz, timestamptz, uuid) to service_role;

create or replace procedure app_private.purge_due_accounts(p_now timestamptz default now(), p_batch integer default 20)
language plpgsql
as $$
declare
  v_step record;
  v_deleted integer := 0;
  -- The last request tried: the next one sorts after it.
  v_last_scheduled timestamptz := '-infinity';
  v_last_user uuid := '00000000-0000-0000-0000-000000000000';
begin
  if p_now is null or p_batch is null or p_batch < 1 then
    raise exception 'purge_due_accounts: p_now is required and p_batch must be positive' using errcode = 'invalid_parameter_value';
  end if;
  -- Called inside a transaction block (BEGIN; CALL …, or a cron command of
  -- several statements), it could not end the accounts' transactions: this
  -- refuses before any work (2D000 invalid transaction termination).
  commit;

  -- Due requests one by one, oldest first, each tried once in this run
  -- (keyset past the last one tried), until p_batch accounts are deleted:
  -- refused ones never take the slots of those behind them. Each account
  -- commits on its own: its locks (the lists handed over, the rows the
  -- user's delete changed, the request) and its transaction id (which holds
  -- back every pull's bound) go as soon as it is done.
  loop
    exit when v_deleted >= p_batch;
    select * into v_step from app_private.purge_next_due_account(p_now, v_last_scheduled, v_last_user);
    exit when v_step.scheduled_for is null;
    v_last_scheduled := v_step.scheduled_for;
    v_last_user := v_step.user_id;
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
  'The account purge as pg_cron runs it (call app_private.purge_due_accounts()): deletes up to p_batch accounts due at p_now, oldest first, each once per run (app_private.purge_next_due_account), committing after each account, then forgets the queued installation ids (forget_purged_installations) in a transaction of its own. Must be called outside a transaction block (a top-level CALL): inside one it raises 2D000 before doing anything; run_account_deletions is the one-transaction form. Runs as its caller: the owner (pg_cron) or service_role.';
-- The function form: the same accounts in the caller's one transaction.
create or replace function app_private.run_account_deletions(p_now timestamptz default now(), p_batch integer default 20)
returns table (users_deleted integer, lists_handed_over integer)
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_step record;
  v_last_scheduled timestamptz := '-infinity';
  v_last_user uuid := '00000000-0000-0000-0000-000000000000';
begin
  if p_now is null or p_batch is null or p_batch < 1 then
    raise exception 'run_account_deletions: p_now is required and p_batch must be positive' using errcode = 'invalid_parameter_value';
  end if;
  users_deleted := 0;
  lists_handed_over := 0;
  loop
    exit when users_deleted >= p_batch;
    select * into v_step from app_private.purge_next_due_account(p_now, v_last_scheduled, v_last_user);
    exit when v_step.scheduled_for is null;
    v_last_scheduled := v_step.scheduled_for;
    v_last_user := v_step.user_id;
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
  'The account purge in one transaction (the caller''s): the accounts of purge_due_accounts (app_private.purge_next_due_account, up to p_batch deleted, oldest first, each tried once) and then forget_queued_installations, returning how many users were deleted and lists handed over. Every account''s locks and the transaction id are held until that transaction ends, through every later account: pg_cron runs purge_due_accounts, which commits after each; this form is for tests and callers already in a transaction. Runs as the owner; service_role; tests pass p_now.';

comment on function app_private.refuse_purge_while_storage_objects_remain(uuid) is 'The purge''s Storage check, called by the account purge (purge_next_due_account) after the before_account_purge hook: raises object_in_use (the account is rolled back alone and retried next run) while storage.objects has an object whose owner or owner_id names the user. Not callable by any API role.';

drop function app_private.purge_account(uuid, timestamptz);
drop function app_private.begin_purge_attempt(timestamptz, timestamptz);
alter table app_private.account_deletion_requests drop column last_attempt_at;
