-- What: the USING clauses of the sample tables' policies name the caller's lists as
-- `list_id = any ((select app_private.my_list_ids(<role>))::uuid[])` (lists: `id = any (…)`),
-- as the read policy of public.lists already does (migration 20261127000700), instead of
-- `list_id in (select unnest(app_private.my_list_ids(<role>)))`. The WITH CHECK clauses keep the
-- IN form: they are checked per written row, where a hashed set answers in constant time.
-- Why: Postgres turns an IN (subquery) of a policy into a filter (a hashed SubPlan) that it can
-- only apply to rows it has already read, so a Data API statement without its own condition on
-- the list — supabase-js `from("tasks").select()`, a member list, "mark all done" — read every
-- row of the table: with 1,000 other users, 5,012 tasks read for 12 returned, 1,003 memberships
-- for 2. `= any (<initplan>)` is an index condition (tasks_list_id_idx, the memberships' unique
-- (list_id, user_id)): the statement reads the caller's rows only. The sync's own reads name
-- their rows by key and are unchanged. The answers are the same (my_list_ids never returns
-- null; a null list_id matches neither form).
-- Tests: tests/integration/data-api-reads-by-list.test.ts.
-- Rollback: supabase/rollbacks/20261128007800_policies_start_from_the_callers_lists.down.sql

alter policy "Members can read the tasks of their lists" on public.tasks
  using (list_id = any ((select app_private.my_list_ids('viewer'))::uuid[]));
alter policy "Editors can change the tasks of their lists" on public.tasks
  using (list_id = any ((select app_private.my_list_ids('editor'))::uuid[]));
alter policy "Editors can delete the tasks of their lists" on public.tasks
  using (list_id = any ((select app_private.my_list_ids('editor'))::uuid[]));

alter policy "Members can read the members of their lists" on public.list_members
  using (list_id = any ((select app_private.my_list_ids('viewer'))::uuid[]));
alter policy "Owners can change the roles of members" on public.list_members
  using (list_id = any ((select app_private.my_list_ids('owner'))::uuid[])
         and app_private.lock_list_for_member_change(list_id, role, false));
alter policy "Owners can remove members and members can leave" on public.list_members
  using ((list_id = any ((select app_private.my_list_ids('owner'))::uuid[]) or user_id = (select app_private.live_uid()))
         and app_private.lock_list_for_member_change(list_id, role, true));

alter policy "Editors can update their lists" on public.lists
  using (id = any ((select app_private.my_list_ids('editor'))::uuid[]));
alter policy "Owners can delete their lists" on public.lists
  using (id = any ((select app_private.my_list_ids('owner'))::uuid[]));
