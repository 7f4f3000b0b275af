-- What: a sign-up refused because a list already has the new user's id
-- (23505 on lists_pkey, as before) says why in its hint: the id is a deleted
-- account's (app_private.retired_user_ids), whose shared personal list was
-- handed over (the hint as it was), or it is not, and a user created a list
-- with it before any account had it (a hint saying so, and what the operator
-- can do).
-- Why: a uuid no account has is free to take as a list id (Data API insert,
-- a push's create), so an account created with an id chosen beforehand
-- (auth.admin.createUser({ id }), users imported with their ids) is refused
-- when a user took that id first, and its hint blamed the hand-over of an
-- earlier account that never existed.
-- Tests: pgTAP 163.
-- Rollback: supabase/rollbacks/20261128010100_sign_up_refusal_names_its_cause.down.sql

create or replace function app_private.create_personal_list_for_new_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if app_private.create_personal_lists(array[new.id]) = 0 then
    -- Another user's list has the id: an account without its personal list
    -- would write into it. A deleted user's id stays reserved, so with the id
    -- retired the list is that account's, handed over (or written by the owner
    -- or the service role, bypassing the reservation). Without, nobody had the
    -- id when a user took it (or an account deleted before 20261128004650 had
    -- it, whose id was never kept).
    raise exception 'a list with the new user''s id exists, so the user cannot get their personal list'
      using errcode = 'unique_violation', constraint = 'lists_pkey',
            detail = format('Key (id)=(%s) already exists.', new.id),
            hint = case
              when exists (select from app_private.retired_user_ids r where r.user_id = new.id)
              then 'The earlier account with this id shared its personal list, which was handed over: create the user with another id, or delete that list first.'
              else 'Another user created a list with this id before any account had it (any user may take a uuid no account has as a list id): create the user with another id, or have that list''s owner delete it first (moving its rows to another list).'
            end;
  end if;
  return null;
end;
$$;
comment on function app_private.create_personal_list_for_new_user() is
  'Trigger (after insert on auth.users): every user starts with a personal list (id = the user''s id), owned by them (app_private.create_personal_lists); an account created again with a deleted user''s id takes it back from app_private.retired_user_ids. A list with that id already there refuses the sign-up (23505 on lists_pkey), its hint saying whose: the earlier account''s, handed over (the id is retired), or one another user created with the id before any account had it.';
