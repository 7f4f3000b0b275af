-- Down step of 20261128007800_policies_start_from_the_callers_lists.sql: the USING clauses name
-- the caller's lists as `in (select unnest(…))` again.
alter policy "Members can read the tasks of their lists" on public.tasks
  using (list_id in (select unnest(app_private.my_list_ids('viewer'))));
alter policy "Editors can change the tasks of their lists" on public.tasks
  using (list_id in (select unnest(app_private.my_list_ids('editor'))));
alter policy "Editors can delete the tasks of their lists" on public.tasks
  using (list_id in (select unnest(app_private.my_list_ids('editor'))));

alter policy "Members can read the members of their lists" on public.list_members
  using (list_id in (select unnest(app_private.my_list_ids('viewer'))));
alter policy "Owners can change the roles of members" on public.list_members
  using (list_id in (select unnest(app_private.my_list_ids('owner')))
         and app_private.lock_list_for_member_change(list_id, role, false));
alter policy "Owners can remove members and members can leave" on public.list_members
  using ((list_id in (select unnest(app_private.my_list_ids('owner'))) or user_id = (select app_private.live_uid()))
         and app_private.lock_list_for_member_change(list_id, role, true));

alter policy "Editors can update their lists" on public.lists
  using (id in (select unnest(app_private.my_list_ids('editor'))));
alter policy "Owners can delete their lists" on public.lists
  using (id in (select unnest(app_private.my_list_ids('owner'))));
