-- Down step of 20261127000210_installation_ids_forgotten_however_deleted.sql:
-- the purge forgets the installation ids itself at the end of a run, with
-- forget_installations as 20261127000200_installation_stamps_by_index.sql
-- made it, and the triggers on auth.users go.
create function app_private.forget_installations(p_installation_ids uuid[])
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_ids text[];
begin
  -- Ids another user still registers (one phone, two accounts) stay theirs.
  v_ids := array(
    select distinct i::text from unnest(p_installation_ids) i
     where not exists (select 1 from app_private.devices d where d.installation_id = i));
  if cardinality(v_ids) = 0 then
    return;
  end if;
  -- By sync_records_devices_idx: only the records these installations stamped.
  update app_private.sync_records s
     set field_versions = (
       select jsonb_object_agg(e.key, case when (e.value ->> 'd') = any (v_ids) then jsonb_set(e.value, '{d}', 'null') else e.value end)
         from jsonb_each(s.field_versions) e)
   where app_private.sync_record_devices(s.field_versions) && v_ids;
end
$$;
comment on function app_private.forget_installations(uuid[]) is
  'The account purge, once per run: sets d (the writing device) to null in every sync_records.field_versions entry stamped by one of these installation ids that no device row registers any more (the merge reads null as an unknown device). Finds the records by sync_records_devices_idx: costs by the records those installations stamped. Not callable by any API role.';
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


-- auth.users belongs to Supabase Auth: the owner may create a trigger on it but
-- not drop one by name; dropping the triggers' function with CASCADE drops them.
drop function app_private.forget_installations_of_deleted_user() cascade;
drop function app_private.forget_installations_of(uuid);
