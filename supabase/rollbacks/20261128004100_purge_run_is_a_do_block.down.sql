-- Down step of 20261128004100_purge_run_is_a_do_block: the procedure
-- app_private.purge_due_accounts again (as 20261128004000 left it), pg_cron's
-- job calling it, the comments that named it; purge_run_command dropped.
CREATE OR REPLACE PROCEDURE app_private.purge_due_accounts(IN p_now timestamp with time zone DEFAULT now(), IN p_batch integer DEFAULT 20)
 LANGUAGE plpgsql
AS $procedure$
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
$procedure$;
comment on procedure app_private.purge_due_accounts(IN p_now timestamp with time zone, IN p_batch integer) is 'The account purge as pg_cron runs it (call app_private.purge_due_accounts()): deletes up to p_batch accounts due at p_now, each tried once per run, those never tried first, then the least recently tried (app_private.begin_purge_attempt, committed before the account''s work), each account''s work (app_private.purge_account, which gives up a lock wait after 10 s) committed on its own, then forgets the queued installation ids (forget_purged_installations) in a transaction of its own. statement_timeout spans the whole CALL: its cancel ends the run, and the account it cut off is tried after the others next run. Must be called outside a transaction block (a top-level CALL): inside one it raises 2D000 before doing anything; run_account_deletions is the one-transaction form. Runs as its caller: the owner (pg_cron) or service_role.';
revoke execute on procedure app_private.purge_due_accounts(IN p_now timestamp with time zone, IN p_batch integer) from public;
grant execute on procedure app_private.purge_due_accounts(IN p_now timestamp with time zone, IN p_batch integer) to service_role;

comment on function app_private.begin_purge_attempt(p_now timestamp with time zone, p_tried_before timestamp with time zone) is 'The purge''s next account: takes the request due at p_now not tried since p_tried_before (the run''s start: each is tried once a run) that was never tried, else least recently (then oldest due, then by user id; FOR UPDATE SKIP LOCKED), sets its last_attempt_at and returns its request_id (null when none is left). purge_due_accounts commits this before the account''s work (purge_account), so a cancelled attempt stays recorded. Runs as the owner; service_role (for purge_due_accounts).';
comment on function app_private.forget_purged_installations() is 'The account purge''s installation-id sweep: app_private.forget_queued_installations() with its defaults (a 10 s budget), as the owner. For purge_due_accounts, which runs as its caller; service_role.';
comment on function app_private.forget_queued_installations(p_time_budget interval, p_batch integer) is 'Forgets the ids of app_private.installations_to_forget in the sync state: sets d (the writing device) to null in every sync_records.field_versions entry stamped with one (the merge reads null as an unknown device). A sweep takes the queue and goes over every record by primary key, p_batch at a time, until p_time_budget is spent (at least one batch), keeping its place in app_private.installation_sweep for the next call; returns true when no sweep is left under way. Never waits: records a write holds are skipped (FOR UPDATE SKIP LOCKED) and the ids they name are queued again when the sweep ends. Run by the account purge with its defaults (purge_due_accounts through forget_purged_installations, in a transaction of its own; run_account_deletions) and purge_sync_retention (its budget and batch). Not callable by any API role.';
comment on function app_private.purge_account(p_request uuid, p_now timestamp with time zone, OUT deleted boolean, OUT lists_handed_over integer) is 'One account of the purge: in a subtransaction that includes its request''s lock (FOR UPDATE SKIP LOCKED; nothing when the request is gone, taken or not due at p_now), hands over the user''s shared lists, runs the before_account_purge hook and the Storage check refuse_purge_while_storage_objects_remain, deletes the lists that go with the account, the request and the auth.users row (its cascades), and records purged in account_deletion_audit. Returns whether the account was deleted and how many lists it handed over; a refused or failed account (a lock wait past its lock_timeout of 10 s too) is rolled back alone, logged by request id, and its request stays for a later run. A cancel (statement_timeout) is not caught: it ends the caller''s statement. Its locks last until the caller''s transaction ends: purge_due_accounts commits after each. Runs as the owner; service_role (for purge_due_accounts).';
comment on function app_private.run_account_deletions(p_now timestamp with time zone, p_batch integer) is 'The account purge in one transaction (the caller''s): the accounts of purge_due_accounts (app_private.begin_purge_attempt and app_private.purge_account, up to p_batch deleted, each tried once, never tried first, then least recently tried) and then forget_queued_installations, returning how many users were deleted and lists handed over. Every account''s locks and the transaction id are held until that transaction ends, through every later account, and a cancel rolls back the attempts it recorded too: pg_cron runs purge_due_accounts, which commits after each; this form is for tests and callers already in a transaction. Runs as the owner; service_role; tests pass p_now.';

do $$
begin
  if exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
    execute $sql$
      select cron.schedule('tidesync-run-account-deletions', '*/10 * * * *', 'call app_private.purge_due_accounts()')
    $sql$;
  end if;
end
$$;

drop function app_private.purge_run_command(timestamptz, integer);
