-- What: the data export's doors answer what they still left out:
--   * app_private.my_account() also the caller's app metadata
--     (auth.users.raw_app_meta_data: what Supabase Auth keeps as
--     app_metadata, the provider and providers, and whatever the app's admins
--     set there);
--   * app_private.my_storage_objects() also each object's own user_metadata
--     (storage.objects.user_metadata, Storage migration 0025-custom-metadata:
--     what the uploader sent as `metadata` with the file);
--   * app_private.my_list_invites(): the invites the caller created, also on
--     lists they no longer own (the list_invites select policy shows only an
--     owner's lists, so a demoted or removed owner's invites fell out);
--   * app_private.my_accepted_list_invites(): the invites the caller used
--     (list_invites.used_by, set by redeem_list_invite);
--   * app_private.my_mfa_factors(): the metadata of the caller's MFA factors
--     (auth.mfa_factors: id, friendly name, type, status, times), never the
--     TOTP secret, the phone or WebAuthn's credential and challenge data.
-- Why: GET /v1/users/me/export promises everything tidesync holds about the
-- caller (GDPR Art. 15 and 20); `authenticated` may read neither auth.users,
-- storage.objects, auth.mfa_factors nor invites of lists it does not own (a
-- grant or a wider policy would expose every user's). Doors as the others: no
-- input, only rows of auth.uid(), only the columns listed. Who used an invite
-- the caller created, and who created one the caller used, are the other
-- user's: not answered.
-- my_account() and my_storage_objects() gain a column, which `create or
-- replace` cannot do: dropped and created again, with their comments and
-- grants.
--
-- Down step: supabase/rollbacks/20261126001800_export_app_metadata_invites_factors.down.sql.

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

-- plpgsql, so that it is created (and answers nothing) where the storage
-- schema does not exist, as account deletion's check of storage.objects does.
drop function app_private.my_storage_objects();
create function app_private.my_storage_objects()
returns table (id uuid, bucket_id text, name text, size bigint, mime_type text, created_at timestamptz,
               updated_at timestamptz, last_accessed_at timestamptz, user_metadata jsonb)
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if to_regclass('storage.objects') is null then
    return;
  end if;
  return query
    select o.id, o.bucket_id, o.name, (o.metadata ->> 'size')::bigint, o.metadata ->> 'mimetype', o.created_at,
           o.updated_at, o.last_accessed_at, o.user_metadata
      from storage.objects o
     where o.owner = (select auth.uid()) or o.owner_id = (select auth.uid())::text
     order by o.created_at, o.id;
end
$$;
comment on function app_private.my_storage_objects() is
  'Metadata of the Storage objects the caller owns (storage.objects.owner or owner_id): bucket, name, size, mime type, times, the object''s user_metadata; never the content. For the data export. Security definer: RLS on storage.objects decides per app. EXECUTE for authenticated only.';
revoke all on function app_private.my_storage_objects() from public, anon, authenticated, service_role;
grant execute on function app_private.my_storage_objects() to authenticated;

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

create function app_private.my_accepted_list_invites()
returns table (id uuid, list_id uuid, role text, used_at timestamptz)
language sql
stable
security definer
set search_path = ''
as $$
  select i.id, i.list_id, i.role, i.used_at
    from app_private.list_invites i
   where i.used_by = (select auth.uid())
   order by i.used_at, i.id
$$;
comment on function app_private.my_accepted_list_invites() is
  'The invites the caller used (list, role, when): list_invites.used_by = the caller; never the code''s hash nor who created it. For the data export. Security definer: only owners read list_invites. EXECUTE for authenticated only.';
revoke all on function app_private.my_accepted_list_invites() from public, anon, authenticated, service_role;
grant execute on function app_private.my_accepted_list_invites() to authenticated;

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
