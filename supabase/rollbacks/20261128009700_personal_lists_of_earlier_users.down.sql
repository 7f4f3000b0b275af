-- Down step of 20261128009700_personal_lists_of_earlier_users.sql:
-- create_personal_list_for_new_user() as
-- 20261128004650_deleted_user_ids_stay_reserved.sql made it (its own insert,
-- the same list), with its comment; the two functions go. The personal lists
-- the migration gave earlier users stay: they are the users' lists now, with
-- what they put in them since and the sync state their devices hold, and a
-- sign-up would have given them the same.
create or replace function app_private.create_personal_list_for_new_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- An account created again with a deleted user's id takes the id back.
  delete from app_private.retired_user_ids r where r.user_id = new.id;
  -- The personal list's id is the user's id: one per user, known without a lookup.
  insert into public.lists (id, title, created_by) values (new.id, 'Personal', new.id)
  on conflict (id) do nothing;
  if not found then
    -- No user may create a list with another user's id, live or deleted, so
    -- such a list was handed over when an earlier account with this id was
    -- deleted (or written by the owner or the service role, bypassing the
    -- reservation, or before 20261128004650). Its members are others: an
    -- account without its personal list would write into theirs.
    raise exception 'a list with the new user''s id exists, so the user cannot get their personal list'
      using errcode = 'unique_violation', constraint = 'lists_pkey',
            detail = format('Key (id)=(%s) already exists.', new.id),
            hint = 'The earlier account with this id shared its personal list, which was handed over: create the user with another id, or delete that list first.';
  end if;
  return null;
end;
$$;
comment on function app_private.create_personal_list_for_new_user() is
  'Trigger (after insert on auth.users): every user starts with a personal list (id = the user''s id), owned by them; an account created again with a deleted user''s id takes it back from app_private.retired_user_ids. A list with that id already there (handed over with an earlier account of the id) refuses the sign-up (23505 on lists_pkey).';

drop function app_private.create_personal_lists_of_earlier_users();
drop function app_private.create_personal_lists(uuid[]);
