-- Down step of 20261128007900_member_changes_start_from_the_named_rows.sql: the policies as
-- migration 20261128007800 wrote them.
alter policy "Owners can change the roles of members" on public.list_members
  using (list_id = any ((select app_private.my_list_ids('owner'))::uuid[])
         and app_private.lock_list_for_member_change(list_id, role, false));
alter policy "Owners can remove members and members can leave" on public.list_members
  using ((list_id = any ((select app_private.my_list_ids('owner'))::uuid[]) or user_id = (select app_private.live_uid()))
         and app_private.lock_list_for_member_change(list_id, role, true));
