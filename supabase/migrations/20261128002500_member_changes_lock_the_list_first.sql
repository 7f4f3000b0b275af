-- What: a change of a list's memberships through the policies (the Data API, the push's
-- writes) locks the list's row before Postgres locks the membership row: the
-- policies "Owners can change the roles of members" (an owner's row, FOR NO KEY
-- UPDATE, the lock of keep_a_list_owner) and "Owners can remove members and
-- members can leave" (any row, FOR UPDATE, the lock of track_sync_access on a
-- loss) end with app_private.lock_list_for_member_change(). A policy's USING is
-- the only step that runs before the row lock: a BEFORE ROW trigger on an UPDATE
-- or DELETE fires after it (GetTupleForTrigger locks the row), too late.
-- Why: the AFTER triggers took the list's lock only after the statement held its
-- membership rows, and a delete of the list holds the list's row before its
-- cascade takes the memberships: a co-owner demoting another (or anyone
-- leaving) while a third owner deleted the list, with a membership row busy
-- for a moment, deadlocked (40P01); a push was answered 503. Now both take the
-- list first; the second waits for the first, and finds the list gone (0 rows)
-- or its owners changed (the triggers judge after the wait, as before).
-- The push locks the lists of the memberships its batch names first, with the
-- lists it names, in one ordered statement (functions/api/sync/push-store.ts):
-- it holds other rows of the list (its tasks) before it writes memberships.
-- Callers past RLS (the service role, security definer functions) take the
-- list's lock in the AFTER triggers as before: the account deletion's hand-over
-- locks its lists first anyway.
-- tests/integration/list-delete-member-races.test.ts (three sessions, each
-- order), list-owner-races, role-loss-races, membership-loss-races.
-- Rollback: supabase/rollbacks/20261128002500_member_changes_lock_the_list_first.down.sql

create function app_private.lock_list_for_member_change(p_list_id uuid, p_role text, p_removal boolean)
returns boolean
language plpgsql
volatile
security definer
set search_path = ''
-- evaluated after the policy's cheaper conditions (its caller owns the list, or it is their own row)
cost 10000
as $$
begin
  if p_removal then
    perform 1 from public.lists l where l.id = p_list_id for update;
  elsif p_role = 'owner' then
    perform 1 from public.lists l where l.id = p_list_id for no key update;
  end if;
  return true;
end;
$$;
comment on function app_private.lock_list_for_member_change(uuid, text, boolean) is
  'Always true: the last condition of the UPDATE and DELETE policies of public.list_members, which Postgres evaluates before it locks the membership row. Locks the list''s row as the triggers that follow will (a removal FOR UPDATE: track_sync_access; an owner''s role change FOR NO KEY UPDATE: keep_a_list_owner; any other role change needs no lock), so that a membership change takes the list before its membership, as a delete of the list does (its cascade): the two wait for each other instead of deadlocking. Waiting for a list deleted meanwhile, it locks nothing and the row is gone too. SECURITY DEFINER: a viewer leaving may lock the list, which its policies would not let them.';
revoke all on function app_private.lock_list_for_member_change(uuid, text, boolean) from public, anon, authenticated, service_role;
grant execute on function app_private.lock_list_for_member_change(uuid, text, boolean) to authenticated;

alter policy "Owners can change the roles of members" on public.list_members
  using (list_id in (select unnest(app_private.my_list_ids('owner')))
         and app_private.lock_list_for_member_change(list_id, role, false));
comment on policy "Owners can change the roles of members" on public.list_members is
  'Only owners promote or demote; the last owner cannot step down (trigger). An owner''s row is changed only once its list is locked (lock_list_for_member_change).';

alter policy "Owners can remove members and members can leave" on public.list_members
  using ((list_id in (select unnest(app_private.my_list_ids('owner'))) or user_id = (select app_private.live_uid()))
         and app_private.lock_list_for_member_change(list_id, role, true));
comment on policy "Owners can remove members and members can leave" on public.list_members is
  'An owner removes anyone; every member may remove themselves. New members join only through invites (accept_list_invite). A membership is removed only once its list is locked (lock_list_for_member_change).';
