-- What: a deleted user's id stays reserved as a list id. A trigger after the
-- delete of auth.users rows (per statement: the account purge, the
-- dashboard, auth.admin.deleteUser(id), any delete statement) keeps their ids
-- in app_private.retired_user_ids, and app_private.is_another_users_id()
-- (the trigger personal_list_id_reserved of lists) counts such an id as
-- another user's: a list with it is refused as a taken id (23505 on
-- lists_pkey), exactly the answer for a live user's id. An account created
-- again with that id (auth.admin.createUser({ id })) takes the id back in the
-- sign-up trigger, which creates its personal list, and now refuses the
-- sign-up instead of leaving the account without one when a list with the id
-- is already there (a personal list handed over with an earlier account of
-- that id).
-- Why: only auth.users guarded the id. Once the user was deleted and the
-- history of their personal list gone (the account purge deletes it with the
-- list; purge_sync_retention after retention_days), anyone could create a
-- list with the id; the account created again then had no personal list
-- (the sign-up trigger did nothing on the conflict), every write into "its"
-- personal list answered NOT_FOUND, and once it accepted the squatter's
-- invite to that list, what it kept there as personal was the squatter's to
-- read (docs/security-model.md, the personal list).
-- Ids of users deleted before this migration are not known, so not reserved.
-- Cost: one uuid kept per deleted account, for good (docs/retention.md); one
-- insert per delete statement; one more index lookup per list a user creates.
-- pgTAP 156-deleted-user-ids-stay-reserved, 500.
--
-- Down step: supabase/rollbacks/20261128004650_deleted_user_ids_stay_reserved.down.sql.

create table app_private.retired_user_ids (
  user_id uuid primary key
);
comment on table app_private.retired_user_ids is
  'Ids of deleted users (auth.users rows deleted, however), kept so that nobody else creates a list with one (a personal list''s id is its user''s id: app_private.is_another_users_id). Written by the trigger on_auth_users_deleted_retire_ids; a row goes when an account is created again with its id (create_personal_list_for_new_user). Nothing else: no time, no link to any other row. Read by no API role.';
alter table app_private.retired_user_ids enable row level security;
create policy "Nobody reads the deleted users' ids"
  on app_private.retired_user_ids
  as restrictive
  for select
  to anon, authenticated, service_role
  using (false);
comment on policy "Nobody reads the deleted users' ids" on app_private.retired_user_ids is
  'Bookkeeping of the account deletion: only the owner''s functions touch it (no role holds a grant either).';
revoke all on table app_private.retired_user_ids from public, anon, authenticated, service_role;

create function app_private.retire_deleted_user_ids()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into app_private.retired_user_ids (user_id)
  select o.id from old_rows o
  on conflict (user_id) do nothing;
  return null;
end;
$$;
comment on function app_private.retire_deleted_user_ids() is
  'Trigger (after delete on auth.users, per statement): keeps the deleted users'' ids in app_private.retired_user_ids, however they are deleted, so that their personal list''s id stays theirs. SECURITY DEFINER: Supabase Auth''s role cannot write app_private.';
revoke all on function app_private.retire_deleted_user_ids() from public, anon, authenticated, service_role;

create trigger on_auth_users_deleted_retire_ids after delete on auth.users
  referencing old table as old_rows for each statement execute function app_private.retire_deleted_user_ids();

create or replace function app_private.is_another_users_id(p_id uuid)
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
  select p_id is distinct from (select auth.uid())
     and (exists (select 1 from auth.users u where u.id = p_id)
          or exists (select 1 from app_private.retired_user_ids r where r.user_id = p_id))
$$;
comment on function app_private.is_another_users_id(uuid) is
  'Whether p_id is the id of a user other than the caller (auth.uid()), live or deleted (app_private.retired_user_ids): such an id is that user''s personal list''s, which nobody else may create. SECURITY DEFINER (authenticated cannot read auth.users nor the deleted ids); answers true or false only.';

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
