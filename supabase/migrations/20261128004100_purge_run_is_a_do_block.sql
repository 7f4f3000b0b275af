-- What: pg_cron's account purge runs a DO block, not the procedure
-- app_private.purge_due_accounts, which is dropped. A procedure that commits
-- can have no SET clause (Postgres forbids transaction control under one), so
-- it had a role-mutable search_path: `supabase db advisors` reports every such
-- routine (function_search_path_mutable). A top-level DO block may commit, is
-- no routine, and calls only functions with an empty search_path.
-- app_private.purge_run_command() returns the block (one source: pg_cron's job,
-- the tests and an operator's manual run, `select
-- app_private.purge_run_command() \gexec` in psql): the same steps as the
-- procedure, each account's attempt and work committed on its own.
-- Rollback: supabase/rollbacks/20261128004100_purge_run_is_a_do_block.down.sql.

create function app_private.purge_run_command(p_now timestamptz default null, p_batch integer default 20)
returns text
language plpgsql
immutable
set search_path = ''
as $fn$
begin
  if p_batch is null or p_batch < 1 then
    raise exception 'purge_run_command: p_batch must be positive' using errcode = 'invalid_parameter_value';
  end if;
  return format($block$do $purge$
declare
  -- null: the time of each run (pg_cron)
  v_now timestamptz := coalesce(%L::timestamptz, now());
  v_request uuid;
  v_step record;
  v_deleted integer := 0;
  -- Requests tried since then were tried in this run.
  v_run_started timestamptz := clock_timestamp();
begin
  -- Inside a transaction block (BEGIN; …, or a command of several statements)
  -- it could not end the transactions of the accounts: this refuses before any work
  -- (2D000 invalid transaction termination).
  commit;
  -- Due requests one by one, each tried once in this run, never tried first,
  -- then the least recently tried, until %s accounts are deleted. The attempt
  -- is committed before the work on the account, so an account a statement_timeout
  -- cut off goes behind the others next run; each account commits on its own,
  -- so its locks and its transaction id go as soon as it is done.
  loop
    exit when v_deleted >= %s;
    v_request := app_private.begin_purge_attempt(v_now, v_run_started);
    exit when v_request is null;
    commit;
    select * into v_step from app_private.purge_account(v_request, v_now);
    if v_step.deleted then
      v_deleted := v_deleted + 1;
    end if;
    commit;
  end loop;
  -- One pass over the sync state for the accounts of the run, in a transaction of its own.
  perform app_private.forget_purged_installations();
end
$purge$
$block$, p_now, p_batch, p_batch);
end;
$fn$;
comment on function app_private.purge_run_command(timestamptz, integer) is
  'The account purge as pg_cron runs it: returns a DO block that deletes up to p_batch accounts due at p_now (null: the time of each run), each tried once per run, those never tried first, then the least recently tried (app_private.begin_purge_attempt, committed before the account''s work), each account''s work (app_private.purge_account, which gives up a lock wait after 10 s) committed on its own, then forgets the queued installation ids (forget_purged_installations). Run the block outside a transaction block (pg_cron''s job; psql: select app_private.purge_run_command() and run what it returns, docs/account-deletion.md): inside one it raises 2D000 before doing anything. statement_timeout spans the whole block. run_account_deletions is the one-transaction form. A DO block, not a procedure: a procedure that commits can have no SET clause, so no fixed search_path.';
revoke execute on function app_private.purge_run_command(timestamptz, integer) from public;
grant execute on function app_private.purge_run_command(timestamptz, integer) to service_role;

drop procedure app_private.purge_due_accounts(timestamptz, integer);

-- What names the run now.
comment on function app_private.begin_purge_attempt(p_now timestamp with time zone, p_tried_before timestamp with time zone) is 'The purge''s next account: takes the request due at p_now not tried since p_tried_before (the run''s start: each is tried once a run) that was never tried, else least recently (then oldest due, then by user id; FOR UPDATE SKIP LOCKED), sets its last_attempt_at and returns its request_id (null when none is left). the purge run (the DO block of purge_run_command) commits this before the account''s work (purge_account), so a cancelled attempt stays recorded. Runs as the owner; service_role (for the purge run, purge_run_command).';
comment on function app_private.forget_purged_installations() is 'The account purge''s installation-id sweep: app_private.forget_queued_installations() with its defaults (a 10 s budget), as the owner. For the purge run (the DO block of purge_run_command), which runs as its caller; service_role.';
comment on function app_private.forget_queued_installations(p_time_budget interval, p_batch integer) is 'Forgets the ids of app_private.installations_to_forget in the sync state: sets d (the writing device) to null in every sync_records.field_versions entry stamped with one (the merge reads null as an unknown device). A sweep takes the queue and goes over every record by primary key, p_batch at a time, until p_time_budget is spent (at least one batch), keeping its place in app_private.installation_sweep for the next call; returns true when no sweep is left under way. Never waits: records a write holds are skipped (FOR UPDATE SKIP LOCKED) and the ids they name are queued again when the sweep ends. Run by the account purge with its defaults (the DO block of purge_run_command through forget_purged_installations, in a transaction of its own; run_account_deletions) and purge_sync_retention (its budget and batch). Not callable by any API role.';
comment on function app_private.purge_account(p_request uuid, p_now timestamp with time zone, OUT deleted boolean, OUT lists_handed_over integer) is 'One account of the purge: in a subtransaction that includes its request''s lock (FOR UPDATE SKIP LOCKED; nothing when the request is gone, taken or not due at p_now), hands over the user''s shared lists, runs the before_account_purge hook and the Storage check refuse_purge_while_storage_objects_remain, deletes the lists that go with the account, the request and the auth.users row (its cascades), and records purged in account_deletion_audit. Returns whether the account was deleted and how many lists it handed over; a refused or failed account (a lock wait past its lock_timeout of 10 s too) is rolled back alone, logged by request id, and its request stays for a later run. A cancel (statement_timeout) is not caught: it ends the caller''s statement. Its locks last until the caller''s transaction ends: the purge run (the DO block of purge_run_command) commits after each. Runs as the owner; service_role (for the purge run, purge_run_command).';
comment on function app_private.run_account_deletions(p_now timestamp with time zone, p_batch integer) is 'The account purge in one transaction (the caller''s): the accounts of the purge run (purge_run_command) (app_private.begin_purge_attempt and app_private.purge_account, up to p_batch deleted, each tried once, never tried first, then least recently tried) and then forget_queued_installations, returning how many users were deleted and lists handed over. Every account''s locks and the transaction id are held until that transaction ends, through every later account, and a cancel rolls back the attempts it recorded too: pg_cron runs the DO block of purge_run_command, which commits after each; this form is for tests and callers already in a transaction. Runs as the owner; service_role; tests pass p_now.';

-- pg_cron's job runs the block (the same job name: cron.schedule replaces its command).
do $$
begin
  if not exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
    raise notice 'pg_cron is not enabled here: account deletions are not scheduled (run the block app_private.purge_run_command() returns yourself)';
    return;
  end if;
  execute format('select cron.schedule(%L, %L, %L)', 'tidesync-run-account-deletions', '*/10 * * * *', app_private.purge_run_command());
end
$$;
