-- Down step of 20261128007600_member_change_lock_only_for_members.sql: the function locks the list
-- for any caller again, as migration 20261128002500 made it.
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
