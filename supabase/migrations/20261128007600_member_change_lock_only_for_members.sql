-- What: app_private.lock_list_for_member_change (migration 20261128002500) locks the list only
-- when the caller (app_private.live_uid()) is a member of it. Its callers are the UPDATE and
-- DELETE policies of public.list_members, whose earlier conditions let through only an owner of
-- the list or the membership's own user: members both. An invite's accept, whose caller is not a
-- member yet, inserts through app_private (SECURITY DEFINER, past RLS) and never reaches it.
-- Why: SECURITY DEFINER and executable by authenticated (the policies run as the caller), it
-- locked ANY list FOR UPDATE for any signed-in caller: Carol, who cannot see Alice's list, called
-- it and held the list until her transaction ended; Alice's edit of her list timed out on the lock
-- (DBA review).
-- Tests: tests/integration/list-delete-member-races.test.ts ("app_private.lock_list_for_member_
-- change"; its races, a member's change queued behind a list's delete, are unchanged).
-- Rollback: supabase/rollbacks/20261128007600_member_change_lock_only_for_members.down.sql

create or replace function app_private.lock_list_for_member_change(p_list_id uuid, p_role text, p_removal boolean)
returns boolean
language plpgsql
volatile
security definer
set search_path = ''
-- evaluated after the policy's cheaper conditions (its caller owns the list, or it is their own row)
cost 10000
as $$
begin
  -- Only a member's change locks: the policies' callers are members; anybody else calling it
  -- directly locks nothing (and learns nothing: it answers true alike).
  if not exists (select 1 from public.list_members m
                  where m.list_id = p_list_id and m.user_id = (select app_private.live_uid())) then
    return true;
  end if;
  if p_removal then
    perform 1 from public.lists l where l.id = p_list_id for update;
  elsif p_role = 'owner' then
    perform 1 from public.lists l where l.id = p_list_id for no key update;
  end if;
  return true;
end;
$$;
comment on function app_private.lock_list_for_member_change(uuid, text, boolean) is
  'Always true: the last condition of the UPDATE and DELETE policies of public.list_members, which Postgres evaluates before it locks the membership row. Locks the list''s row as the triggers that follow will (a removal FOR UPDATE: track_sync_access; an owner''s role change FOR NO KEY UPDATE: keep_a_list_owner; any other role change needs no lock), so that a membership change takes the list before its membership, as a delete of the list does (its cascade): the two wait for each other instead of deadlocking. Waiting for a list deleted meanwhile, it locks nothing and the row is gone too. Only for a caller who is a member of the list (live_uid(); the policies'' callers all are): anyone else locks nothing. SECURITY DEFINER: a viewer leaving may lock the list, which its policies would not let them.';
