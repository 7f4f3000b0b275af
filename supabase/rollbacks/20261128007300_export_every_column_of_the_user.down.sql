-- Down step of 20261128007300_export_every_column_of_the_user.sql: the four
-- doors answer the columns they answered before (my_account, my_mfa_factors,
-- my_list_invites as 20261126001800_export_app_metadata_invites_factors.sql
-- made them, my_sessions as 20261122050100_account_export.sql did); the
-- new my_storage_buckets() goes.

drop function if exists app_private.my_storage_buckets();

drop function app_private.my_account();
create function app_private.my_account()
returns table (id uuid, email text, phone text, created_at timestamptz, email_confirmed_at timestamptz,
               last_sign_in_at timestamptz, is_anonymous boolean, user_metadata jsonb, app_metadata jsonb)
language sql
stable
security definer
set search_path = ''
as $$
  select u.id, u.email::text, u.phone::text, u.created_at, u.email_confirmed_at, u.last_sign_in_at, u.is_anonymous,
         u.raw_user_meta_data, u.raw_app_meta_data
    from auth.users u
   where u.id = (select auth.uid())
$$;
comment on function app_private.my_account() is
  'The caller''s account from auth.users (id, email, phone, created_at, email_confirmed_at, last_sign_in_at, is_anonymous, user_metadata = raw_user_meta_data, app_metadata = raw_app_meta_data) for the data export. Security definer: authenticated cannot read auth.users. EXECUTE for authenticated only.';
revoke all on function app_private.my_account() from public, anon, authenticated, service_role;
grant execute on function app_private.my_account() to authenticated;

drop function app_private.my_sessions();
create function app_private.my_sessions()
returns table (id uuid, created_at timestamptz, updated_at timestamptz, aal text, not_after timestamptz,
               user_agent text, ip text)
language sql
stable
security definer
set search_path = ''
as $$
  select s.id, s.created_at, s.updated_at, s.aal::text, s.not_after, s.user_agent, host(s.ip)
    from auth.sessions s
   where s.user_id = (select auth.uid())
   order by s.created_at, s.id
$$;
comment on function app_private.my_sessions() is
  'Metadata of the caller''s live Supabase sessions (no tokens) for the data export. Security definer: authenticated cannot read auth.sessions. EXECUTE for authenticated only.';
revoke all on function app_private.my_sessions() from public, anon, authenticated, service_role;
grant execute on function app_private.my_sessions() to authenticated;

drop function app_private.my_mfa_factors();
create function app_private.my_mfa_factors()
returns table (id uuid, friendly_name text, factor_type text, status text, created_at timestamptz, updated_at timestamptz)
language sql
stable
security definer
set search_path = ''
as $$
  select f.id, f.friendly_name, f.factor_type::text, f.status::text, f.created_at, f.updated_at
    from auth.mfa_factors f
   where f.user_id = (select auth.uid())
   order by f.created_at, f.id
$$;
comment on function app_private.my_mfa_factors() is
  'Metadata of the caller''s MFA factors from auth.mfa_factors (id, friendly_name, factor_type, status, created_at, updated_at); never the secret, the phone, nor WebAuthn credential or challenge data. For the data export. Security definer: authenticated cannot read auth.mfa_factors. EXECUTE for authenticated only.';
revoke all on function app_private.my_mfa_factors() from public, anon, authenticated, service_role;
grant execute on function app_private.my_mfa_factors() to authenticated;

drop function app_private.my_list_invites();
create function app_private.my_list_invites()
returns table (id uuid, list_id uuid, role text, created_at timestamptz, expires_at timestamptz, used_at timestamptz)
language sql
stable
security definer
set search_path = ''
as $$
  select i.id, i.list_id, i.role, i.created_at, i.expires_at, i.used_at
    from app_private.list_invites i
   where i.created_by = (select auth.uid())
   order by i.created_at, i.id
$$;
comment on function app_private.my_list_invites() is
  'The invites the caller created (list, role, created, expires, used), whether or not the caller still owns the list; never the code''s hash nor who used one. For the data export. Security definer: the select policy of list_invites shows only the invites of lists the caller owns now. EXECUTE for authenticated only.';
revoke all on function app_private.my_list_invites() from public, anon, authenticated, service_role;
grant execute on function app_private.my_list_invites() to authenticated;
