-- What: a list whose id is a user's id (a personal list) may be created only
-- by that user. The insert policy "Users can create lists" now also refuses
-- an id that is another user's id, through app_private.is_another_users_id()
-- (authenticated cannot read auth.users). A personal list may still be
-- deleted by an owner of it, and then re-created, by its user only.
-- Why: after a user deleted their personal list, anyone who knew their id
-- (list_members.user_id and created_by of any list they share show it) could
-- create a list with it; the user's own re-create then failed NOT_FOUND, and
-- once the user accepted an invite to it, their writes to "my personal list"
-- (tasks with list_id = their user id, as client/README.md shows) landed in
-- a list of the squatter's, who read them.
-- pgTAP 115-personal-list-id; docs/security-model.md.
--
-- Down step: supabase/rollbacks/20261127000500_personal_list_id_only_for_its_user.down.sql.

create function app_private.is_another_users_id(p_id uuid)
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
  select exists (select 1 from auth.users u where u.id = p_id and u.id is distinct from (select auth.uid()))
$$;
comment on function app_private.is_another_users_id(uuid) is
  'Whether p_id is the id of a user other than the caller (auth.uid()): such an id is that user''s personal list''s, which nobody else may create. SECURITY DEFINER (authenticated cannot read auth.users); answers true or false only.';
revoke all on function app_private.is_another_users_id(uuid) from public, anon, authenticated, service_role;
grant execute on function app_private.is_another_users_id(uuid) to authenticated;

alter policy "Users can create lists" on public.lists
  with check (created_by = (select auth.uid()) and not app_private.is_another_users_id(id));
comment on policy "Users can create lists" on public.lists is 'Any signed-in user creates lists of their own, never with another user''s id (that user''s personal list''s); the database makes them its owner.';
