-- Down step of 20261127001200_personal_list_id_answered_as_taken.sql: the
-- insert policy refuses another user's id again (20261127000500), without the trigger.
alter policy "Users can create lists" on public.lists
  with check (created_by = (select auth.uid()) and not app_private.is_another_users_id(id));
comment on policy "Users can create lists" on public.lists is 'Any signed-in user creates lists of their own, never with another user''s id (that user''s personal list''s); the database makes them its owner.';

drop trigger personal_list_id_reserved on public.lists;
drop function app_private.refuse_another_users_list_id();
