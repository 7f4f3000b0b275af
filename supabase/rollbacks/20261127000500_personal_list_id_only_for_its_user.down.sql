-- Down step of 20261127000500_personal_list_id_only_for_its_user.sql: the
-- insert policy of public.lists as before (any id), without the helper.
alter policy "Users can create lists" on public.lists
  with check (created_by = (select auth.uid()));
comment on policy "Users can create lists" on public.lists is 'Any signed-in user creates lists of their own; the database makes them its owner.';

drop function app_private.is_another_users_id(uuid);
