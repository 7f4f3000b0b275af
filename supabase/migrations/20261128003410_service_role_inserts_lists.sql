-- What: app_private.refuse_another_users_list_id() (the trigger
-- personal_list_id_reserved, before insert on lists) tests the caller's role
-- first and only then, as authenticated, calls is_another_users_id().
-- Why: the condition was one expression, `current_user = 'authenticated' and
-- app_private.is_another_users_id(new.id)`, and Postgres checks EXECUTE on
-- every function of an expression before it evaluates any of it. Only
-- authenticated may run is_another_users_id, so every list the service role
-- inserted or upserted was refused, `permission denied for function
-- is_another_users_id`, though it is granted insert on lists (docs/security-model.md,
-- "Roles": a server of the app's own). No other trigger function calls such a
-- function in a condition with its role test.
-- Tests: pgTAP 145-service-role-writes-lists.
-- Down step: supabase/rollbacks/20261128003410_service_role_inserts_lists.down.sql

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
