-- Down step of 20261128010100_sign_up_refusal_names_its_cause.sql:
-- create_personal_list_for_new_user() as
-- 20261128009700_personal_lists_of_earlier_users.sql made it (one hint, of a
-- hand-over), with its comment.

create or replace function app_private.create_personal_list_for_new_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if app_private.create_personal_lists(array[new.id]) = 0 then
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
  'Trigger (after insert on auth.users): every user starts with a personal list (id = the user''s id), owned by them (app_private.create_personal_lists); an account created again with a deleted user''s id takes it back from app_private.retired_user_ids. A list with that id already there (handed over with an earlier account of the id) refuses the sign-up (23505 on lists_pkey).';
