-- Down step of 20261128008400_members_upsert_a_shared_personal_list.sql: the
-- trigger function as 20261128003410 left it (a member's upsert of another
-- user's personal list fails 23505 again).
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
    if app_private.is_another_users_id(new.id) then
      raise exception 'duplicate key value violates unique constraint "lists_pkey"'
        using errcode = 'unique_violation', constraint = 'lists_pkey',
              detail = format('Key (id)=(%s) already exists.', new.id);
    end if;
  end if;
  return new;
end;
$$;
