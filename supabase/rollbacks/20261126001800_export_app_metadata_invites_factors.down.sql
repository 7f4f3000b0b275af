-- Down step of 20261126001800_export_app_metadata_invites_factors.sql: the
-- three new doors go, my_account() and my_storage_objects() answer as
-- 20261126001700_export_identities_metadata_storage.sql made them.
drop function if exists app_private.my_mfa_factors();
drop function if exists app_private.my_accepted_list_invites();
drop function if exists app_private.my_list_invites();

drop function app_private.my_storage_objects();
create function app_private.my_storage_objects()
returns table (id uuid, bucket_id text, name text, size bigint, mime_type text, created_at timestamptz,
               updated_at timestamptz, last_accessed_at timestamptz)
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
           o.updated_at, o.last_accessed_at
      from storage.objects o
     where o.owner = (select auth.uid()) or o.owner_id = (select auth.uid())::text
     order by o.created_at, o.id;
end
$$;
comment on function app_private.my_storage_objects() is
  'Metadata of the Storage objects the caller owns (storage.objects.owner or owner_id): bucket, name, size, mime type, times; never the content. For the data export. Security definer: RLS on storage.objects decides per app. EXECUTE for authenticated only.';
revoke all on function app_private.my_storage_objects() from public, anon, authenticated, service_role;
grant execute on function app_private.my_storage_objects() to authenticated;

drop function app_private.my_account();
create function app_private.my_account()
returns table (id uuid, email text, phone text, created_at timestamptz, email_confirmed_at timestamptz,
               last_sign_in_at timestamptz, is_anonymous boolean, user_metadata jsonb)
language sql
stable
security definer
set search_path = ''
as $$
  select u.id, u.email::text, u.phone::text, u.created_at, u.email_confirmed_at, u.last_sign_in_at, u.is_anonymous,
         u.raw_user_meta_data
    from auth.users u
   where u.id = (select auth.uid())
$$;
comment on function app_private.my_account() is
  'The caller''s account from auth.users (id, email, phone, created_at, email_confirmed_at, last_sign_in_at, is_anonymous, user_metadata = raw_user_meta_data) for the data export. Security definer: authenticated cannot read auth.users. EXECUTE for authenticated only.';
revoke all on function app_private.my_account() from public, anon, authenticated, service_role;
grant execute on function app_private.my_account() to authenticated;
