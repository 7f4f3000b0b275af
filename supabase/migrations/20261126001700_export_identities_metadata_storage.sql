-- What: the data export's doors into Supabase grow by what they left out:
-- app_private.my_account() also answers the caller's user metadata
-- (auth.users.raw_user_meta_data, what supabase.auth.updateUser({ data })
-- stores), app_private.my_identities() the caller's sign-in identities
-- (auth.identities) and app_private.my_storage_objects() the metadata of the
-- Storage objects the caller owns (storage.objects).
-- Why: GET /v1/users/me/export promises everything tidesync holds about the
-- caller (GDPR Art. 15 and 20), and `authenticated` may read none of these
-- tables (a grant would expose every user's). Doors as the first two: no
-- input, only rows of auth.uid(), only the columns listed: no tokens (the
-- identities table holds none), no object contents.
-- my_account() gains a column, which `create or replace` cannot do: dropped
-- and created again, with its comment and grants.
--
-- Down step: supabase/rollbacks/20261126001700_export_identities_metadata_storage.down.sql.

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

create function app_private.my_identities()
returns table (id uuid, provider text, provider_id text, identity_data jsonb, created_at timestamptz,
               updated_at timestamptz, last_sign_in_at timestamptz)
language sql
stable
security definer
set search_path = ''
as $$
  select i.id, i.provider, i.provider_id, i.identity_data, i.created_at, i.updated_at, i.last_sign_in_at
    from auth.identities i
   where i.user_id = (select auth.uid())
   order by i.created_at, i.id
$$;
comment on function app_private.my_identities() is
  'The caller''s sign-in identities from auth.identities (provider, the provider''s user id, identity_data, times; the table holds no tokens) for the data export. Security definer: authenticated cannot read auth.identities. EXECUTE for authenticated only.';
revoke all on function app_private.my_identities() from public, anon, authenticated, service_role;
grant execute on function app_private.my_identities() to authenticated;

-- plpgsql, so that it is created (and answers nothing) where the storage
-- schema does not exist, as account deletion's check of storage.objects does.
-- Storage sets `owner` (deprecated) and `owner_id` (text, the JWT's sub) on
-- upload; either naming the caller makes the object theirs.
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
