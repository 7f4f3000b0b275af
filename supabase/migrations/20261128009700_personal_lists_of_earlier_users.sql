-- What: users who signed up before tidesync was installed get their personal
-- list (id = their user id, titled Personal, created by them, them as its
-- owner, with the sync state its insert writes) when this migration runs,
-- exactly as the sign-up trigger gives a new user theirs: both go through
-- app_private.create_personal_lists(). Which users: every auth.users row
-- created before public.lists was made syncable (app_private.sync_tables,
-- written by 20261122010100, the migration of the sign-up trigger), however
-- it stands (anonymous, banned or soft-deleted: a sign-up gives those theirs
-- too, and a ban or a soft delete leaves it), with no list of that id and no
-- sync history of one (app_private.create_personal_lists_of_earlier_users()):
--  - a user who has their personal list keeps it as it is;
--  - an id another user's list has (written by the owner or the service role,
--    or before 20261127000500) stays that list's, as the sign-up of that id
--    is refused rather than give the user someone else's list;
--  - a list with the id that was deleted while its history is kept is not
--    created again: only its user may, when the rule for any deleted list's
--    id lets them (refuse_hidden_scope_history), which the owner would bypass;
--  - a user created later met the sign-up trigger: one without a personal
--    list deleted it (or lost it with a hand-over), which is theirs to undo.
-- An id kept as a deleted user's (retired_user_ids) is taken back, as the
-- sign-up of that id takes it back.
-- Why: the profile of an earlier user was backfilled (20261122020100), their
-- personal list never was. README's push of a task into list_id = the user's
-- id answered NOT_FOUND for them, and an app's user_id-scoped table moved to
-- list_id = user_id failed its foreign key (23503) for exactly these users.
-- Cost: one insert statement for all of them, whose triggers run once per
-- statement (20261126000500), linear in their number: 20,000 earlier users in
-- 3.7 s (5,000 in 0.9 s), two thirds of it the Realtime pokes a sign-up sends
-- too, all in the migration's transaction.
-- pgTAP 161-personal-lists-of-earlier-users;
-- tests/integration/personal-lists-of-earlier-users.test.ts.
-- Down step: supabase/rollbacks/20261128009700_personal_lists_of_earlier_users.down.sql

create function app_private.create_personal_lists(p_user_ids uuid[])
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_created uuid[];
begin
  -- The personal list's id is the user's id: one per user, known without a lookup.
  -- Its insert's triggers make the user its owner and write its sync state.
  with created as (
    insert into public.lists (id, title, created_by)
    select u.id, 'Personal', u.id from unnest(p_user_ids) as u(id)
    on conflict (id) do nothing
    returning id
  )
  select array_agg(c.id) into v_created from created c;
  -- An account created again with a deleted user's id takes the id back.
  delete from app_private.retired_user_ids r where r.user_id = any (v_created);
  return coalesce(cardinality(v_created), 0);
end;
$$;
comment on function app_private.create_personal_lists(uuid[]) is
  'What a sign-up gives these users: each one''s personal list (id = the user''s id, titled Personal, created by them; the insert''s triggers make them its owner and write its sync state), and their id back from app_private.retired_user_ids. An id a list has already is left to that list. Returns how many lists it created. Called by the sign-up trigger (create_personal_list_for_new_user) and for users from before it (create_personal_lists_of_earlier_users). SECURITY DEFINER: Supabase Auth''s role cannot write public.lists. No API role may call it.';
revoke all on function app_private.create_personal_lists(uuid[]) from public, anon, authenticated, service_role;

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

create function app_private.create_personal_lists_of_earlier_users()
returns integer
language sql
security invoker
set search_path = ''
as $$
  select app_private.create_personal_lists(array(
    select u.id
      from auth.users u
     where (u.created_at is null
            or u.created_at < (select t.created_at from app_private.sync_tables t where t.collection = 'lists'))
       and not exists (select 1 from public.lists l where l.id = u.id)
       and not exists (select 1 from app_private.sync_changes c where c.scope_id = u.id)
     order by u.id))
$$;
comment on function app_private.create_personal_lists_of_earlier_users() is
  'Gives the users created before public.lists was made syncable (app_private.sync_tables; the sign-up trigger came with it, so they never met it) the personal list a sign-up gives (app_private.create_personal_lists), unless a list has their id or had it (its sync history is kept): theirs, another user''s, or one deleted. Run by migration 20261128009700; run again, it creates only what is missing and changes nothing else. Returns how many lists it created. For the database owner: no API role may call it.';
revoke all on function app_private.create_personal_lists_of_earlier_users() from public, anon, authenticated, service_role;

select app_private.create_personal_lists_of_earlier_users();
