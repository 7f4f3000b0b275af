-- What: the account purge refuses to delete a user while Storage objects
-- still name them by `owner` (uuid, deprecated) **or `owner_id`** (text, the
-- JWT's sub: what Storage sets on upload since its migration
-- 0018-add_owner_id_column_deprecate_owner). The check is
-- app_private.refuse_purge_while_storage_objects_remain(user), called by
-- app_private.run_account_deletions right after the before_account_purge hook.
-- Why: the check lived in the shipped hook and read `owner` only. An object
-- with only `owner_id` let the purge go on: Storage's objects have no foreign
-- key to auth.users (0017-drop-owner-foreign-key), so the user was deleted and
-- the object stayed behind, its file never removed and its owner_id naming the
-- deleted user. The check moves out of the hook rather than into a new version
-- of it: apps replace the hook with their own migrations
-- (docs/account-deletion.md, Sign in with Apple), and a `create or replace`
-- of it here would silently drop an app's version that ran before this one.
-- The shipped hook keeps its (now redundant) `owner` check; the purge, which
-- no app is told to replace, is restated with one added call. The same rule
-- as app_private.my_storage_objects() (the export): `owner` = the user or
-- `owner_id` = the user's id as text.
-- pgTAP 504 (an object with only owner_id keeps its owner's account).
--
-- Down step: supabase/rollbacks/20261126001810_purge_checks_storage_owner_id.down.sql.

create function app_private.refuse_purge_while_storage_objects_remain(p_user_id uuid)
returns void
language plpgsql
stable
security invoker
set search_path = ''
as $$
begin
  -- Runs inside the purge (security definer, as the owner): readable by the
  -- owner on Supabase; where it is not (or there is no storage schema), there
  -- is nothing this can check, as before.
  if to_regclass('storage.objects') is not null and has_table_privilege('storage.objects', 'select') then
    if exists (select 1 from storage.objects o where o.owner = p_user_id or o.owner_id = p_user_id::text) then
      raise exception 'the user still owns Storage objects: remove them (through the Storage API) before the purge'
        using errcode = 'object_in_use';
    end if;
  end if;
end
$$;
comment on function app_private.refuse_purge_while_storage_objects_remain(uuid) is
  'The purge''s Storage check, called by run_account_deletions after the before_account_purge hook: raises object_in_use (the account is rolled back alone and retried next run) while storage.objects has an object whose owner or owner_id names the user. Not callable by any API role.';
revoke all on function app_private.refuse_purge_while_storage_objects_remain(uuid) from public, anon, authenticated, service_role;

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
begin
  if p_now is null or p_batch is null or p_batch < 1 then
    raise exception 'run_account_deletions: p_now is required and p_batch must be positive' using errcode = 'invalid_parameter_value';
  end if;
  users_deleted := 0;
  lists_handed_over := 0;

  -- Due requests, locked: a concurrent run skips them, a concurrent cancel waits.
  for v_due in
    select r.user_id, r.request_id
      from app_private.account_deletion_requests r
     where r.scheduled_for <= p_now
     order by r.scheduled_for, r.user_id
     limit p_batch
       for update skip locked
  loop
    -- One account per subtransaction: an account that cannot be deleted yet
    -- (the hook refuses, e.g. Storage objects left) is skipped and retried on
    -- the next run; it never holds up the others.
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
    exception when others then
      -- The request id only: the log names no user.
      raise warning 'run_account_deletions: request % not carried out this run (%: %)', v_due.request_id, sqlstate, sqlerrm;
    end;
  end loop;
  return next;
end
$$;
comment on function app_private.run_account_deletions(timestamptz, integer) is
  'The account purge: deletes at most p_batch accounts whose deletion was scheduled at or before p_now (hand-over of shared lists, the before_account_purge hook, the Storage check refuse_purge_while_storage_objects_remain, then the auth.users row and its cascades), records each in account_deletion_audit. An account that fails (the hook or the Storage check refuses) is rolled back alone, logged by request id and retried next run. Idempotent; concurrent runs never take the same request (FOR UPDATE SKIP LOCKED). Runs as the owner (no superuser needed): pg_cron where available, else service_role; tests pass p_now.';
revoke all on function app_private.run_account_deletions(timestamptz, integer) from public, anon, authenticated, service_role;
grant execute on function app_private.run_account_deletions(timestamptz, integer) to service_role;

