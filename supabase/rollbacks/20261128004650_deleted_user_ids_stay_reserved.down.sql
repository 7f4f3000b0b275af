-- Down step of 20261128004650_deleted_user_ids_stay_reserved.sql:
-- is_another_users_id as 20261127000500_personal_list_id_only_for_its_user.sql
-- made it and create_personal_list_for_new_user as
-- 20261122010100_sample_todo_app.sql made it (a deleted user's id is free
-- again once the history of their personal list is gone); the trigger on
-- auth.users goes with its function (the owner may not drop a trigger on
-- auth.users by name), then the deleted ids.
create or replace function app_private.create_personal_list_for_new_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- The personal list's id is the user's id: one per user, known without a lookup.
  insert into public.lists (id, title, created_by) values (new.id, 'Personal', new.id)
  on conflict (id) do nothing;
  return null;
end;
$$;
comment on function app_private.create_personal_list_for_new_user() is
  'Trigger (after insert on auth.users): every user starts with a personal list (id = the user''s id), owned by them.';

create or replace function app_private.is_another_users_id(p_id uuid)
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

drop function app_private.retire_deleted_user_ids() cascade;
drop table app_private.retired_user_ids;
