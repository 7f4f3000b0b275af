-- What: the data export's doors answer the columns of the caller's rows they
-- still left out (a privacy review listed every column holding a user's id):
--   * app_private.my_account() also phone_confirmed_at, updated_at and
--     banned_until (when an operator's ban of the account ends or ended);
--   * app_private.my_sessions() also refreshed_at (as timestamptz: GoTrue
--     stores it without a time zone, in UTC) and factor_id (the MFA factor
--     the session was verified with);
--   * app_private.my_mfa_factors() also last_challenged_at and
--     web_authn_aaguid (the authenticator model's id, public, no credential);
--   * app_private.my_list_invites() also created_session (the session the
--     invite was created in: an invite ends with it);
--   * app_private.my_storage_buckets() (new): the Storage buckets the caller
--     owns, which named them and were in no section.
-- Why: GET /v1/users/me/export promises everything tidesync holds about the
-- caller (GDPR Art. 15 and 20); these are the caller's and no secret. Still
-- never answered: the password hash, tokens, factor secrets, a phone factor's
-- number, WebAuthn credential and challenge data (docs/account-export.md,
-- "Not exported").
-- Each function's columns change, which `create or replace` cannot do:
-- dropped and created again, with their comments and grants.
--
-- Down step: supabase/rollbacks/20261128007300_export_every_column_of_the_user.down.sql.

drop function app_private.my_account();
create function app_private.my_account()
returns table (id uuid, email text, phone text, created_at timestamptz, email_confirmed_at timestamptz,
               last_sign_in_at timestamptz, is_anonymous boolean, user_metadata jsonb, app_metadata jsonb,
               phone_confirmed_at timestamptz, updated_at timestamptz, banned_until timestamptz)
language sql
stable
security definer
set search_path = ''
as $$
  select u.id, u.email::text, u.phone::text, u.created_at, u.email_confirmed_at, u.last_sign_in_at, u.is_anonymous,
         u.raw_user_meta_data, u.raw_app_meta_data, u.phone_confirmed_at, u.updated_at, u.banned_until
    from auth.users u
   where u.id = (select auth.uid())
$$;
comment on function app_private.my_account() is
  'The caller''s account from auth.users (id, email, phone, created_at, email_confirmed_at, last_sign_in_at, is_anonymous, user_metadata = raw_user_meta_data, app_metadata = raw_app_meta_data, phone_confirmed_at, updated_at, banned_until); never the password hash nor a token. For the data export. Security definer: authenticated cannot read auth.users. EXECUTE for authenticated only.';
revoke all on function app_private.my_account() from public, anon, authenticated, service_role;
grant execute on function app_private.my_account() to authenticated;

drop function app_private.my_sessions();
create function app_private.my_sessions()
returns table (id uuid, created_at timestamptz, updated_at timestamptz, aal text, not_after timestamptz,
               user_agent text, ip text, refreshed_at timestamptz, factor_id uuid)
language sql
stable
security definer
set search_path = ''
as $$
  select s.id, s.created_at, s.updated_at, s.aal::text, s.not_after, s.user_agent, host(s.ip),
         s.refreshed_at at time zone 'UTC', s.factor_id
    from auth.sessions s
   where s.user_id = (select auth.uid())
   order by s.created_at, s.id
$$;
comment on function app_private.my_sessions() is
  'Metadata of the caller''s live Supabase sessions (id, times, aal, not_after, user agent, IP, refreshed_at, factor_id; no tokens) for the data export. Security definer: authenticated cannot read auth.sessions. EXECUTE for authenticated only.';
revoke all on function app_private.my_sessions() from public, anon, authenticated, service_role;
grant execute on function app_private.my_sessions() to authenticated;

drop function app_private.my_mfa_factors();
create function app_private.my_mfa_factors()
returns table (id uuid, friendly_name text, factor_type text, status text, created_at timestamptz, updated_at timestamptz,
               last_challenged_at timestamptz, web_authn_aaguid uuid)
language sql
stable
security definer
set search_path = ''
as $$
  select f.id, f.friendly_name, f.factor_type::text, f.status::text, f.created_at, f.updated_at,
         f.last_challenged_at, f.web_authn_aaguid
    from auth.mfa_factors f
   where f.user_id = (select auth.uid())
   order by f.created_at, f.id
$$;
comment on function app_private.my_mfa_factors() is
  'Metadata of the caller''s MFA factors from auth.mfa_factors (id, friendly_name, factor_type, status, created_at, updated_at, last_challenged_at, web_authn_aaguid: the authenticator model''s public id); never the secret, the phone, nor WebAuthn credential or challenge data. For the data export. Security definer: authenticated cannot read auth.mfa_factors. EXECUTE for authenticated only.';
revoke all on function app_private.my_mfa_factors() from public, anon, authenticated, service_role;
grant execute on function app_private.my_mfa_factors() to authenticated;

drop function app_private.my_list_invites();
create function app_private.my_list_invites()
returns table (id uuid, list_id uuid, role text, created_at timestamptz, expires_at timestamptz, used_at timestamptz,
               created_session uuid)
language sql
stable
security definer
set search_path = ''
as $$
  select i.id, i.list_id, i.role, i.created_at, i.expires_at, i.used_at, i.created_session
    from app_private.list_invites i
   where i.created_by = (select auth.uid())
   order by i.created_at, i.id
$$;
comment on function app_private.my_list_invites() is
  'The invites the caller created (list, role, created, expires, used, the session it was created in), whether or not the caller still owns the list; never the code''s hash nor who used one. For the data export. Security definer: the select policy of list_invites shows only the invites of lists the caller owns now. EXECUTE for authenticated only.';
revoke all on function app_private.my_list_invites() from public, anon, authenticated, service_role;
grant execute on function app_private.my_list_invites() to authenticated;

-- app_private.my_storage_buckets(): the Storage buckets the caller owns
-- (storage.buckets.owner, deprecated, or owner_id, the JWT's sub Storage sets
-- when a signed-in user creates one), the same rule as my_storage_objects():
-- a bucket names its owner, so it is the owner's data (the purge refuses
-- while the user still owns one: migration 20261128007400). plpgsql, so that
-- it is created (and answers nothing) where the storage schema does not exist.
create function app_private.my_storage_buckets()
returns table (id text, name text, public boolean, file_size_limit bigint, allowed_mime_types text[],
               created_at timestamptz, updated_at timestamptz)
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if to_regclass('storage.buckets') is null then
    return;
  end if;
  return query
    select b.id, b.name, b.public, b.file_size_limit, b.allowed_mime_types, b.created_at, b.updated_at
      from storage.buckets b
     where b.owner = (select auth.uid()) or b.owner_id = (select auth.uid())::text
     order by b.created_at, b.id;
end
$$;
comment on function app_private.my_storage_buckets() is
  'Metadata of the Storage buckets the caller owns (storage.buckets.owner or owner_id): id, name, public, file size limit, allowed mime types, times. For the data export. Security definer: RLS on storage.buckets decides per app. EXECUTE for authenticated only.';
revoke all on function app_private.my_storage_buckets() from public, anon, authenticated, service_role;
grant execute on function app_private.my_storage_buckets() to authenticated;
