-- What: the UPDATE and DELETE policies of public.list_members name the caller's lists as
-- `list_id in (select unnest(app_private.my_list_ids('owner')))` again, as before migration
-- 20261128007800 (their select policy keeps its index condition).
-- Why: both end in app_private.lock_list_for_member_change, which locks the membership's list. As
-- an index condition, `= any (the caller's lists)` led sync_apply's update and delete of
-- memberships (joined to the batch's ids) to read every membership of the caller's lists and lock
-- every one of those lists, out of the id order lock_scopes_in_order keeps (migration
-- 20261128007500): a push removing one member stalled behind any write into the owner's other
-- lists, and deadlocked with leaves and purges (40P01; hostile review). As a filter, the policy
-- runs only on the rows the statement names.
-- Tests: tests/integration/list-delete-member-races.test.ts, tests/integration/data-api-reads-by-list.test.ts.
-- Rollback: supabase/rollbacks/20261128007900_member_changes_start_from_the_named_rows.down.sql

alter policy "Owners can change the roles of members" on public.list_members
  using (list_id in (select unnest(app_private.my_list_ids('owner')))
         and app_private.lock_list_for_member_change(list_id, role, false));
alter policy "Owners can remove members and members can leave" on public.list_members
  using ((list_id in (select unnest(app_private.my_list_ids('owner'))) or user_id = (select app_private.live_uid()))
         and app_private.lock_list_for_member_change(list_id, role, true));
