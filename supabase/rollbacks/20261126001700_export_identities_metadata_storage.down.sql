-- Down step of 20261126001700_export_identities_metadata_storage.sql: the two
-- new doors go, my_account() answers as 20261122050100_account_export.sql made it.
drop function if exists app_private.my_storage_objects();
drop function if exists app_private.my_identities();
drop function app_private.my_account();
create function app_private.my_account()
returns table (id uuid, email text, phone text, created_at timestamptz, email_confirmed_at timestamptz,
               last_sign_in_at timestamptz, is_anonymous boolean)
language sql
stable
security definer
set search_path = ''
as $$
  select u.id, u.email::text, u.phone::text, u.created_at, u.email_confirmed_at, u.last_sign_in_at, u.is_anonymous
    from auth.users u
   where u.id = (select auth.uid())
$$;
comment on function app_private.my_account() is
  'The caller''s account basics from auth.users (id, email, phone, created_at, email_confirmed_at, last_sign_in_at, is_anonymous) for the data export. Security definer: authenticated cannot read auth.users. EXECUTE for authenticated only.';
revoke all on function app_private.my_account() from public, anon, authenticated, service_role;
grant execute on function app_private.my_account() to authenticated;
