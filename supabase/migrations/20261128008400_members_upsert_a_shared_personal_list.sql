-- What: app_private.refuse_another_users_list_id() (the trigger
-- personal_list_id_reserved, before insert on lists) lets an insert with
-- another user's id through when the caller is a member of the live list with
-- that id (app_private.my_list_ids(), the policies' rule): the insert then
-- meets the list's primary key, so supabase-js upsert() (insert … on conflict
-- (id) do update) goes on to its update, which the policies decide.
-- Why: the trigger fires before Postgres finds the conflict, and refused
-- members too, so an editor's or a co-owner's upsert() of a shared personal
-- list failed 23505 on lists_pkey, where the same upsert of any other shared
-- list (and update() of this one) updated it. Anyone else is refused as
-- before, the answer for any taken id: nothing tells a user's id from a list's.
-- Tests: tests/integration/personal-list-upsert.test.ts, pgTAP 115-personal-list-id.
-- Down step: supabase/rollbacks/20261128008400_members_upsert_a_shared_personal_list.down.sql

create or replace function app_private.refuse_another_users_list_id()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  -- Only for the API's role: the service role and the owner (the sign-up trigger creating
  -- a personal list) bypass RLS, as the policy did. Two conditions, not one `and`: Postgres
  -- checks EXECUTE on every function of an expression, and only authenticated may run
  -- is_another_users_id.
  if current_user = 'authenticated' then
    -- A member of the live list with that id meets its primary key, as for any list they
    -- share: a plain insert fails there, an upsert goes on to its update (the policies decide).
    if app_private.is_another_users_id(new.id) and not new.id = any (app_private.my_list_ids()) then
      raise exception 'duplicate key value violates unique constraint "lists_pkey"'
        using errcode = 'unique_violation', constraint = 'lists_pkey',
              detail = format('Key (id)=(%s) already exists.', new.id);
    end if;
  end if;
  return new;
end;
$$;
