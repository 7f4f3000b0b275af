-- Down step of 20261128003410_service_role_inserts_lists.sql: the trigger
-- function's condition as one expression again, as 20261127001200 left it
-- (the service role's inserts of lists fail again).
create or replace function app_private.refuse_another_users_list_id()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  -- Only for the API's role: the service role and the owner (the sign-up trigger creating
  -- a personal list) bypass RLS, as the policy did.
  if current_user = 'authenticated' and app_private.is_another_users_id(new.id) then
    raise exception 'duplicate key value violates unique constraint "lists_pkey"'
      using errcode = 'unique_violation', constraint = 'lists_pkey',
            detail = format('Key (id)=(%s) already exists.', new.id);
  end if;
  return new;
end;
$$;
