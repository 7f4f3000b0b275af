-- Down step of 20261128002500_member_changes_lock_the_list_first.sql: the
-- policies of public.list_members as migrations 20261122010100 and
-- 20261128001800 left them (a membership change locks its list only in the
-- AFTER triggers, after its membership rows: it can deadlock with the list's
-- delete again).
alter policy "Owners can change the roles of members" on public.list_members
  using (list_id in (select unnest(app_private.my_list_ids('owner'))));
comment on policy "Owners can change the roles of members" on public.list_members is 'Only owners promote or demote; the last owner cannot step down (trigger).';
alter policy "Owners can remove members and members can leave" on public.list_members
  using (list_id in (select unnest(app_private.my_list_ids('owner'))) or user_id = (select app_private.live_uid()));
comment on policy "Owners can remove members and members can leave" on public.list_members is
  'An owner removes anyone; every member may remove themselves. New members join only through invites (accept_list_invite).';
drop function if exists app_private.lock_list_for_member_change(uuid, text, boolean);
