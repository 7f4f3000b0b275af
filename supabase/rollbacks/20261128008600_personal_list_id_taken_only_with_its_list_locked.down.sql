-- Down step of 20261128008600_personal_list_id_taken_only_with_its_list_locked.sql:
-- the trigger function as 20261128008400 left it (any member of the live list
-- with another user's id passes, without locking it).
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
