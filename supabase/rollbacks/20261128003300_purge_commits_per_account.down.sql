-- Down step of 20261128003300_purge_commits_per_account.sql: pg_cron's job
-- runs `select * from app_private.run_account_deletions()` again (the whole
-- run in one transaction), run_account_deletions as 20261127002420 made it,
-- and no purge_due_accounts, purge_next_due_account nor
-- forget_purged_installations.
do $$
begin
  if exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
    execute $sql$
      select cron.schedule('tidesync-run-account-deletions', '*/10 * * * *', 'select * from app_private.run_account_deletions()')
    $sql$;
  end if;
end
$$;

CREATE OR REPLACE FUNCTION app_private.run_account_deletions(p_now timestamp with time zone DEFAULT now(), p_batch integer DEFAULT 20)
 RETURNS TABLE(users_deleted integer, lists_handed_over integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
declare
  v_due record;
  v_scopes uuid[];
  v_handed integer;
  -- The last request tried: the next one sorts after it.
  v_last_scheduled timestamptz := '-infinity';
  v_last_user uuid := '00000000-0000-0000-0000-000000000000';
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

      -- Supabase Auth's refresh_tokens.user_id is text without a foreign key
      -- (GoTrue deletes them itself); those of no session would outlive the user.
      delete from auth.refresh_tokens t where t.user_id = v_due.user_id::text;
      -- The request goes first, so the trigger before the user's delete does
      -- not record the outcome too (20261127002420): this run records it below.
      delete from app_private.account_deletion_requests r where r.request_id = v_due.request_id;
      -- The cascades: sessions, refresh tokens, profile, devices, preferences and
      -- their audit, memberships (a list left without members is deleted),
      -- invites, sync usage/ops/access, rate-limit counters.
      -- created_by of lists, tasks and sync state the user wrote becomes null;
      -- the user's installation ids are queued (a trigger on the delete).
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
    exception when others then
      -- The request id only: the log names no user.
      raise warning 'run_account_deletions: request % not carried out this run (%: %)', v_due.request_id, sqlstate, sqlerrm;
    end;
  end loop;

  -- One pass over the sync state for every account of the run, and whoever
  -- else was deleted since the last pass (it reads every record:
  -- docs/account-deletion.md has the cost).
  perform app_private.forget_queued_installations();
  return next;
end
$function$;
comment on function app_private.run_account_deletions(p_now timestamp with time zone, p_batch integer) is 'The account purge: deletes up to p_batch accounts whose deletion was scheduled at or before p_now, trying the due requests oldest first, each once per run, until p_batch are deleted or none is left (hand-over of shared lists, the before_account_purge hook, the Storage check refuse_purge_while_storage_objects_remain, then the auth.users row and its cascades), records each in account_deletion_audit, then goes on forgetting the queued installation ids in the sync state (forget_queued_installations with its default budget, 10 s: these users'' and those of anyone deleted otherwise; a sweep the budget cuts short goes on in the next run of either purge). An account that fails (the hook or the Storage check refuses) is rolled back alone, logged by request id and retried next run; the run goes on past it. Idempotent; concurrent runs never take the same request (FOR UPDATE SKIP LOCKED). Runs as the owner (no superuser needed): pg_cron where available, else service_role; tests pass p_now.';
revoke execute on function app_private.run_account_deletions(p_now timestamp with time zone, p_batch integer) from public;
grant execute on function app_private.run_account_deletions(p_now timestamp with time zone, p_batch integer) to service_role;

comment on function app_private.forget_queued_installations(p_time_budget interval, p_batch integer) is 'Forgets the ids of app_private.installations_to_forget in the sync state: sets d (the writing device) to null in every sync_records.field_versions entry stamped with one (the merge reads null as an unknown device). A sweep takes the queue and goes over every record by primary key, p_batch at a time, until p_time_budget is spent (at least one batch), keeping its place in app_private.installation_sweep for the next call; returns true when no sweep is left under way. Never waits: records a write holds are skipped (FOR UPDATE SKIP LOCKED) and the ids they name are queued again when the sweep ends. Run by run_account_deletions (the defaults) and purge_sync_retention (its budget and batch). Not callable by any API role.';
comment on function app_private.refuse_purge_while_storage_objects_remain(p_user_id uuid) is 'The purge''s Storage check, called by run_account_deletions after the before_account_purge hook: raises object_in_use (the account is rolled back alone and retried next run) while storage.objects has an object whose owner or owner_id names the user. Not callable by any API role.';

drop procedure app_private.purge_due_accounts(timestamptz, integer);
drop function app_private.forget_purged_installations();
drop function app_private.purge_next_due_account(timestamptz, timestamptz, uuid);
