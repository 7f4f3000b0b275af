-- Supabase platform stand-in: what a Supabase project database already has
-- before any of our migrations run. Applied by scripts/db only when the target
-- database has no `auth.users` table (a real Supabase database, or one this file
-- already prepared, is left untouched). Run it as a superuser.
--
-- It mirrors, from supabase/postgres' init scripts and Supabase Auth's schema:
--   * the roles anon, authenticated, service_role (BYPASSRLS; all three INHERIT),
--     authenticator, supabase_auth_admin (search_path auth, no CREATEROLE), with
--     Supabase's attributes, settings and memberships;
--   * Supabase's default privileges on `public`: the API roles get ALL on every
--     new table, sequence and function created there by the migration role.
--     Our migrations must therefore revoke and grant explicitly, and the tests
--     prove that RLS, not a missing grant, is what protects data;
--   * the `extensions` schema with pgcrypto and uuid-ossp;
--   * `auth.users`, `auth.sessions`, `auth.refresh_tokens`, `auth.identities`
--     (the columns we rely on) and `auth.mfa_factors` (as GoTrue defines it),
--     owned by supabase_auth_admin, with Supabase's cascades;
--   * auth.uid(), auth.role(), auth.email(), auth.jwt() with Supabase's
--     semantics: claims from `request.jwt.claims`, falling back to the legacy
--     `request.jwt.claim.*` settings;
--   * Storage's and Realtime's tables, and what supautils lets the migration
--     role do beyond a plain non-superuser (policies on realtime.messages,
--     superuser-only settings such as session_replication_role; not its
--     privileged extensions).
--
-- The migration role (hosted Supabase: `postgres`, which is NOT a superuser) is
-- read from the setting `tidesync.migration_role` (default `postgres`); it gets
-- what hosted `postgres` has: membership of the API roles, default privileges,
-- and read/write/trigger rights on the auth tables. docs/supabase-standin.md
-- says where the fidelity ends.

set client_min_messages = warning;

-- Roles are cluster-wide, so parallel setups may race to create them.
do $$
declare
  r record;
begin
  for r in
    select * from (values
      ('anon',                'nologin inherit'),
      ('authenticated',       'nologin inherit'),
      ('service_role',        'nologin inherit bypassrls'),
      ('authenticator',       'login noinherit'),
      ('supabase_auth_admin', 'login noinherit nocreaterole')
    ) as t(name, attrs)
  loop
    if not exists (select 1 from pg_catalog.pg_roles where rolname = r.name) then
      begin
        execute format('create role %I %s', r.name, r.attrs);
      exception when duplicate_object or unique_violation then
        null;
      end;
    end if;
  end loop;
end
$$;

-- The API roles inherit since supabase/postgres' 20230529180330_alter_api_roles_for_inherit (an
-- earlier stand-in made them noinherit; altered only when needed, roles being cluster-wide).
do $$
declare
  r record;
begin
  for r in select rolname from pg_catalog.pg_roles where rolname in ('anon', 'authenticated', 'service_role') and not rolinherit loop
    execute format('alter role %I inherit', r.rolname);
  end loop;
end
$$;

grant anon, authenticated, service_role to authenticator;
-- GoTrue's role: search_path auth (supabase/postgres 00000000000001-auth-schema.sql), no CREATEROLE
-- (its 20260821154147_revoke_createrole_from_auth_admin; earlier stand-ins created it with it).
alter role supabase_auth_admin nocreaterole;
alter role supabase_auth_admin set search_path = auth;
alter role anon set statement_timeout = '3s';
alter role authenticated set statement_timeout = '8s';

do $$
declare
  migration_role text := coalesce(nullif(current_setting('tidesync.migration_role', true), ''), 'postgres');
begin
  execute format('grant anon, authenticated, service_role to %I', migration_role);

  -- Supabase's default privileges on public (supabase/postgres init schema).
  execute format('grant usage on schema public to %I, anon, authenticated, service_role', migration_role);
  execute format('alter default privileges for role %I in schema public grant all on tables to anon, authenticated, service_role', migration_role);
  execute format('alter default privileges for role %I in schema public grant all on sequences to anon, authenticated, service_role', migration_role);
  execute format('alter default privileges for role %I in schema public grant all on functions to anon, authenticated, service_role', migration_role);
end
$$;

-- Extensions live in their own schema, as on Supabase.
create schema if not exists extensions;
create extension if not exists pgcrypto with schema extensions;
create extension if not exists "uuid-ossp" with schema extensions;
grant usage on schema extensions to anon, authenticated, service_role;

-- PostgREST's exposed schemas (supabase/config.toml [api] schemas). The
-- database advisors read this setting to know which schemas face the API.
do $$
begin
  execute format('alter database %I set pgrst.db_schemas = %L', current_database(), 'public');
end
$$;

-- The auth schema, owned by Supabase Auth's role.
create schema if not exists auth authorization supabase_auth_admin;

create table if not exists auth.users (
  instance_id uuid,
  id uuid primary key,
  aud varchar(255),
  role varchar(255),
  email varchar(255),
  encrypted_password varchar(255),
  email_confirmed_at timestamptz,
  -- Supabase Auth scans these four into Go strings (models.User): a row it did not
  -- write must hold '' in them, not NULL, or its sign-in fails ("Database error
  -- querying schema"). Nullable without a default, as Auth's own migration has them.
  confirmation_token varchar(255),
  recovery_token varchar(255),
  email_change_token_new varchar(255),
  email_change varchar(255),
  email_change_token_current varchar(255) default '',
  phone_change text default '',
  phone_change_token varchar(255) default '',
  reauthentication_token varchar(255) default '',
  last_sign_in_at timestamptz,
  raw_app_meta_data jsonb,
  raw_user_meta_data jsonb,
  is_super_admin boolean,
  created_at timestamptz,
  updated_at timestamptz,
  phone text unique default null,
  phone_confirmed_at timestamptz,
  banned_until timestamptz,
  is_sso_user boolean not null default false,
  deleted_at timestamptz,
  is_anonymous boolean not null default false
);
create unique index if not exists users_email_partial_key on auth.users (email) where (is_sso_user = false);

do $$
begin
  create type auth.aal_level as enum ('aal1', 'aal2', 'aal3');
exception when duplicate_object then
  null;
end
$$;

create table if not exists auth.sessions (
  id uuid primary key,
  user_id uuid not null references auth.users (id) on delete cascade,
  created_at timestamptz,
  updated_at timestamptz,
  factor_id uuid,
  aal auth.aal_level,
  not_after timestamptz,
  refreshed_at timestamp,
  user_agent text,
  ip inet,
  tag text
);
create index if not exists sessions_user_id_idx on auth.sessions (user_id);
create index if not exists sessions_not_after_idx on auth.sessions (not_after desc);

create table if not exists auth.refresh_tokens (
  instance_id uuid,
  id bigserial primary key,
  token varchar(255) unique,
  user_id varchar(255),
  revoked boolean,
  created_at timestamptz,
  updated_at timestamptz,
  parent varchar(255),
  session_id uuid references auth.sessions (id) on delete cascade
);
create index if not exists refresh_tokens_session_id_revoked_idx on auth.refresh_tokens (session_id, revoked);

-- A user's sign-in identities (GoTrue migrations up to 20231117164230): one row
-- per provider account linked to the user, cascade-deleted with the user.
create table if not exists auth.identities (
  provider_id text not null,
  user_id uuid not null references auth.users (id) on delete cascade,
  identity_data jsonb not null,
  provider text not null,
  last_sign_in_at timestamptz,
  created_at timestamptz,
  updated_at timestamptz,
  email text generated always as (lower(identity_data ->> 'email')) stored,
  id uuid primary key default gen_random_uuid(),
  constraint identities_provider_id_provider_unique unique (provider_id, provider)
);
create index if not exists identities_user_id_idx on auth.identities (user_id);
create index if not exists identities_email_idx on auth.identities (email text_pattern_ops);

-- A user's MFA factors (GoTrue migrations 20221003041349 add_mfa_schema up to
-- 20250925093508 add_last_webauthn_challenge_data): the factor types and
-- statuses, the table with every column those migrations give it (the TOTP
-- secret, the phone, WebAuthn's credential included), its indexes, RLS enabled
-- with no policy (20240612123726), cascade-deleted with the user. Challenges
-- and AMR claims (auth.mfa_challenges, auth.mfa_amr_claims) are not stood in for.
do $$
begin
  create type auth.factor_type as enum ('totp', 'webauthn', 'phone');
exception when duplicate_object then
  null;
end
$$;
do $$
begin
  create type auth.factor_status as enum ('unverified', 'verified');
exception when duplicate_object then
  null;
end
$$;
create table if not exists auth.mfa_factors (
  id uuid not null,
  user_id uuid not null,
  friendly_name text null,
  factor_type auth.factor_type not null,
  status auth.factor_status not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  secret text null,
  phone text null default null,
  last_challenged_at timestamptz unique default null,
  web_authn_credential jsonb null,
  web_authn_aaguid uuid null,
  last_webauthn_challenge_data jsonb,
  constraint mfa_factors_pkey primary key (id),
  constraint mfa_factors_user_id_fkey foreign key (user_id) references auth.users (id) on delete cascade
);
comment on table auth.mfa_factors is 'auth: stores metadata about factors';
comment on column auth.mfa_factors.last_webauthn_challenge_data is 'Stores the latest WebAuthn challenge data including attestation/assertion for customer verification';
create unique index if not exists mfa_factors_user_friendly_name_unique on auth.mfa_factors (friendly_name, user_id) where trim(friendly_name) <> '';
create index if not exists factor_id_created_at_idx on auth.mfa_factors (user_id, created_at);
create index if not exists mfa_factors_user_id_idx on auth.mfa_factors (user_id);
create unique index if not exists unique_phone_factor_per_user on auth.mfa_factors (user_id, phone);
-- Supabase Auth's 20240612123726_enable_rls_update_grants enables RLS on every
-- auth table, with no policy: only their owner and roles that bypass RLS read them.
alter table auth.users enable row level security;
alter table auth.sessions enable row level security;
alter table auth.refresh_tokens enable row level security;
alter table auth.identities enable row level security;
alter table auth.mfa_factors enable row level security;

alter table auth.users owner to supabase_auth_admin;
alter table auth.sessions owner to supabase_auth_admin;
alter table auth.refresh_tokens owner to supabase_auth_admin;
alter table auth.identities owner to supabase_auth_admin;
alter table auth.mfa_factors owner to supabase_auth_admin;
alter type auth.factor_type owner to supabase_auth_admin;
alter type auth.factor_status owner to supabase_auth_admin;
alter type auth.aal_level owner to supabase_auth_admin;

-- Supabase Auth's helper functions (supabase/auth migrations), unchanged in meaning.
create or replace function auth.uid() returns uuid
language sql stable
as $$
  select
    coalesce(
      nullif(current_setting('request.jwt.claim.sub', true), ''),
      (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
    )::uuid
$$;
comment on function auth.uid() is 'Deprecated. Use auth.jwt() -> ''sub'' instead.';

create or replace function auth.role() returns text
language sql stable
as $$
  select
    coalesce(
      nullif(current_setting('request.jwt.claim.role', true), ''),
      (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
    )::text
$$;
comment on function auth.role() is 'Deprecated. Use auth.jwt() -> ''role'' instead.';

create or replace function auth.email() returns text
language sql stable
as $$
  select
    coalesce(
      nullif(current_setting('request.jwt.claim.email', true), ''),
      (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'email')
    )::text
$$;
comment on function auth.email() is 'Deprecated. Use auth.jwt() -> ''email'' instead.';

create or replace function auth.jwt() returns jsonb
language sql stable
as $$
  select
    coalesce(
      nullif(current_setting('request.jwt.claim', true), ''),
      nullif(current_setting('request.jwt.claims', true), '')
    )::jsonb
$$;

alter function auth.uid() owner to supabase_auth_admin;
alter function auth.role() owner to supabase_auth_admin;
alter function auth.email() owner to supabase_auth_admin;
alter function auth.jwt() owner to supabase_auth_admin;

grant usage on schema auth to anon, authenticated, service_role;
grant execute on function auth.uid(), auth.role(), auth.email(), auth.jwt() to public;

-- What hosted `postgres` may do in auth: read and write the tables (the
-- dashboard and migrations do), and create triggers on auth.users.
do $$
declare
  migration_role text := coalesce(nullif(current_setting('tidesync.migration_role', true), ''), 'postgres');
begin
  execute format('grant usage on schema auth to %I', migration_role);
  execute format('grant select, insert, update, delete, references, trigger on auth.users, auth.sessions, auth.refresh_tokens, auth.identities, auth.mfa_factors to %I', migration_role);
  execute format('grant usage on sequence auth.refresh_tokens_id_seq to %I', migration_role);
end
$$;

-- ------------------------------------------------------------------ storage
-- Supabase Storage's schema as its own migrations (supabase/storage,
-- migrations/tenant 0001-0005 and later column additions) leave it: the
-- tables `storage.buckets` and `storage.objects` with the columns we rely on,
-- owned by supabase_storage_admin, RLS enabled on both with no policy (so
-- nothing but the service role, which bypasses RLS, reaches an object until a
-- project adds policies), and ALL granted to the API roles (Storage relies on
-- RLS, not on grants), and Storage's guard refusing direct deletes. The Storage server itself does not run here: the local
-- artifact store (functions/api/releases/local-artifact-store.ts) serves
-- signed links instead; docs/supabase-standin.md says where fidelity ends.
do $$
begin
  if not exists (select 1 from pg_catalog.pg_roles where rolname = 'supabase_storage_admin') then
    begin
      create role supabase_storage_admin nologin noinherit createrole;
    exception when duplicate_object or unique_violation then
      null;
    end;
  end if;
end
$$;

create schema if not exists storage authorization supabase_storage_admin;
grant usage on schema storage to anon, authenticated, service_role;

create table if not exists storage.buckets (
  id text primary key,
  name text not null,
  owner uuid,
  owner_id text,
  created_at timestamptz default now(),
  updated_at timestamptz default now(),
  public boolean default false,
  avif_autodetection boolean default false,
  file_size_limit bigint,
  allowed_mime_types text[]
);
create unique index if not exists bname on storage.buckets using btree (name);

create table if not exists storage.objects (
  id uuid primary key default extensions.gen_random_uuid(),
  bucket_id text references storage.buckets (id),
  name text,
  owner uuid,
  owner_id text,
  created_at timestamptz default now(),
  updated_at timestamptz default now(),
  last_accessed_at timestamptz default now(),
  metadata jsonb,
  user_metadata jsonb,
  version text,
  path_tokens text[] generated always as (string_to_array(name, '/')) stored
);
create unique index if not exists bucketid_objname on storage.objects using btree (bucket_id, name);
create index if not exists name_prefix_search on storage.objects using btree (name text_pattern_ops);

alter table storage.buckets enable row level security;
alter table storage.objects enable row level security;
alter table storage.buckets owner to supabase_storage_admin;
alter table storage.objects owner to supabase_storage_admin;
grant all on storage.buckets, storage.objects to anon, authenticated, service_role;

-- Storage's migrations/tenant/0055-prevent-direct-deletes.sql, verbatim: a direct delete would leave
-- the files behind, so it is refused unless storage.allow_delete_query is 'true', which Storage's API
-- sets in each of its transactions (src/internal/database/postgres/scope.ts).
CREATE OR REPLACE FUNCTION storage.protect_delete()
RETURNS TRIGGER
LANGUAGE plpgsql
AS $$
BEGIN
    -- Check if storage.allow_delete_query is set to 'true'
    IF COALESCE(current_setting('storage.allow_delete_query', true), 'false') != 'true' THEN
        RAISE EXCEPTION 'Direct deletion from storage tables is not allowed. Use the Storage API instead.'
            USING HINT = 'This prevents accidental data loss from orphaned objects.',
                  ERRCODE = '42501';
    END IF;
    RETURN NULL;
END;
$$;

DROP TRIGGER IF EXISTS protect_buckets_delete ON storage.buckets;
CREATE TRIGGER protect_buckets_delete
    BEFORE DELETE ON storage.buckets
    FOR EACH STATEMENT
    EXECUTE FUNCTION storage.protect_delete();

DROP TRIGGER IF EXISTS protect_objects_delete ON storage.objects;
CREATE TRIGGER protect_objects_delete
    BEFORE DELETE ON storage.objects
    FOR EACH STATEMENT
    EXECUTE FUNCTION storage.protect_delete();

-- Storage's migrations run as supabase_storage_admin, which so owns what they create.
alter function storage.protect_delete() owner to supabase_storage_admin;

-- What hosted `postgres` may do in storage: manage buckets and objects (the
-- dashboard, seeds and migrations do).

-- ------------------------------------------------------------------ realtime
-- Supabase Realtime's tenant schema as its migrations leave it (supabase/realtime
-- lib/realtime/tenants/repo/migrations, up to 20260709120000): the role
-- supabase_realtime_admin owning realtime.messages, realtime.topic() and realtime.send(), the table partitioned by
-- inserted_at with RLS on and no policy, realtime.topic() and realtime.send().
-- Only what Broadcast from the database and its authorization use; the
-- Postgres Changes objects (realtime.subscription, wal2json helpers) are left out.
do $$
begin
  if not exists (select 1 from pg_catalog.pg_roles where rolname = 'supabase_realtime_admin') then
    begin
      create role supabase_realtime_admin with noinherit nologin noreplication;
    exception when duplicate_object or unique_violation then
      null;
    end;
  end if;
end
$$;

create schema if not exists realtime;
grant all privileges on schema realtime to supabase_realtime_admin;

create table if not exists realtime.messages (
  topic text not null,
  extension text not null,
  payload jsonb,
  event text,
  private boolean default false,
  updated_at timestamp without time zone not null default now(),
  inserted_at timestamp without time zone not null default now(),
  id uuid not null default gen_random_uuid(),
  binary_payload bytea,
  primary key (id, inserted_at)
) partition by range (inserted_at);
do $$
begin
  alter table realtime.messages add constraint messages_payload_exclusive check (payload is null or binary_payload is null) not valid;
exception when duplicate_object then
  null;
end
$$;
create index if not exists messages_inserted_at_topic_index on realtime.messages (inserted_at desc, topic)
  where extension = 'broadcast' and private is true;
-- Realtime's janitor creates a partition per day (messages_YYYY_MM_DD) and drops
-- old ones; nothing runs it here, so one default partition takes every message.
create table if not exists realtime.messages_default partition of realtime.messages default;
alter table realtime.messages enable row level security;
alter table realtime.messages owner to supabase_realtime_admin;
alter table realtime.messages_default owner to supabase_realtime_admin;

create or replace function realtime.topic() returns text as $$
select nullif(current_setting('realtime.topic', true), '')::text;
$$ language sql stable;
alter function realtime.topic() owner to supabase_realtime_admin;

create or replace function realtime.send(payload jsonb, event text, topic text, private boolean default true) returns void
as $$
declare
  generated_id uuid;
  final_payload jsonb;
begin
  begin
    generated_id := gen_random_uuid();

    -- Check if payload has an 'id' key, if not, add the generated UUID
    if payload ? 'id' then
      final_payload := payload;
    else
      final_payload := jsonb_set(payload, '{id}', to_jsonb(generated_id));
    end if;

    -- Set the topic configuration
    execute format('SET LOCAL realtime.topic TO %L', topic);

    insert into realtime.messages (id, payload, event, topic, private, extension)
    values (generated_id, final_payload, event, topic, private, 'broadcast');
  exception
    when others then
      raise warning 'WarnSendingBroadcastMessage: %', sqlerrm;
  end;
end;
$$ language plpgsql;

alter function realtime.send(jsonb, text, text, boolean) owner to supabase_realtime_admin;

grant usage on schema realtime to anon, authenticated, service_role;
grant select, insert, update on realtime.messages to anon, authenticated, service_role;
grant execute on all functions in schema realtime to anon, authenticated, service_role;

-- Realtime's tenant schema dump (priv/repo/tenant_db_dump_15.sql, what its
-- migrations leave when they run, as on Supabase, as supabase_admin, whose
-- default privileges in `realtime` grant ALL to postgres) gives postgres ALL on
-- realtime.messages, usage on the schema with grant option and no create on it;
-- and supabase_realtime_admin the API roles.
grant anon, authenticated, service_role to supabase_realtime_admin;

do $$
declare
  migration_role text := coalesce(nullif(current_setting('tidesync.migration_role', true), ''), 'postgres');
begin
  execute format('grant usage on schema storage to %I', migration_role);
  execute format('grant all on storage.buckets, storage.objects to %I', migration_role);
  execute format('grant usage on schema realtime to %I with grant option', migration_role);
  execute format('grant all on realtime.messages, realtime.messages_default to %I', migration_role);
  execute format('grant execute on all functions in schema realtime to %I', migration_role);
  -- No membership of supabase_realtime_admin: supabase/postgres' 20250421084701_revoke_admin_roles_from_postgres
  -- and Realtime's 20260707120000_restrict_realtime_schema revoke it from postgres. An earlier stand-in granted
  -- it; memberships are cluster-wide and other databases of the cluster may still be set up by that version,
  -- so it is not revoked here (docs/supabase-standin.md; 601-realtime-pokes.test.sql revokes it in its transaction).
end
$$;

-- supautils' policy_grants. On Supabase, `postgres` creates, alters, drops and
-- comments on the policies of realtime.messages without owning it (nor being a
-- member of its owner): the supautils extension runs those statements as its
-- superuser (supautils.policy_grants lists the table for postgres). supautils is
-- not packaged for Debian, so two event triggers stand in for it: before such a
-- statement of the migration role they lend it the table (ownership, which is
-- per database, unlike a role membership), and after it give the table back
-- with the migration role's grant as it was. A failed statement rolls the loan
-- back with its transaction. The role is the one in effect for the statement
-- (SET ROLE's, else the session's), which a SECURITY DEFINER function does not
-- see as current_user.
do $$
declare
  migration_role text := coalesce(nullif(current_setting('tidesync.migration_role', true), ''), 'postgres');
begin
  execute format($f$
    create or replace function extensions.standin_policy_grants_lend() returns event_trigger
    language plpgsql security definer set search_path = '' as $body$
    begin
      -- Only a statement that names the table can be about its policies (a cheap filter: most are COMMENTs on our objects).
      if coalesce(nullif(current_setting('role'), 'none'), session_user) = %1$L and current_query() ~* 'messages' then
        alter table realtime.messages owner to %1$I;
      end if;
    end
    $body$;
    create or replace function extensions.standin_policy_grants_return() returns event_trigger
    language plpgsql security definer set search_path = '' as $body$
    begin
      if (select c.relowner from pg_catalog.pg_class c where c.oid = 'realtime.messages'::regclass) <> 'supabase_realtime_admin'::regrole then
        alter table realtime.messages owner to supabase_realtime_admin;
        grant all on realtime.messages to %1$I;
      end if;
    end
    $body$;
  $f$, migration_role);
end
$$;
revoke all on function extensions.standin_policy_grants_lend(), extensions.standin_policy_grants_return() from public;
drop event trigger if exists standin_policy_grants_lend;
drop event trigger if exists standin_policy_grants_return;
create event trigger standin_policy_grants_lend on ddl_command_start
  when tag in ('CREATE POLICY', 'ALTER POLICY', 'DROP POLICY', 'COMMENT')
  execute function extensions.standin_policy_grants_lend();
create event trigger standin_policy_grants_return on ddl_command_end
  when tag in ('CREATE POLICY', 'ALTER POLICY', 'DROP POLICY', 'COMMENT')
  execute function extensions.standin_policy_grants_return();

-- ------------------------------------------------------------------ supautils
-- One more thing supautils (supabase/postgres' ansible/files/postgresql_config/supautils.conf.j2,
-- as of 2024-10) lets hosted `postgres` do that a plain non-superuser may not. Its other one,
-- privileged_extensions (CREATE EXTENSION of dblink, pg_cron, … run as its superuser), is not
-- stood in for: nothing short of lending the role SUPERUSER would do it, and a loan decided from a
-- statement's text is one any role can abuse (docs/supabase-standin.md, "Where the fidelity ends").
--
-- privileged_role_allowed_configs: postgres SETs these superuser-only settings (supautils runs the SET
-- as its superuser). Of that list, the ones core Postgres defines; the others belong to extensions not
-- here (auto_explain, pg_net, pgaudit, plan_filter, safeupdate) or need no privilege (pgrst.*). PG15's
-- SET privilege on a parameter stands in; it is cluster-wide, like a role, so granted only when missing
-- (a grant rewrites the shared row, which databases set up at once would collide on).
do $$
declare
  migration_role text := coalesce(nullif(current_setting('tidesync.migration_role', true), ''), 'postgres');
  parameter text;
begin
  foreach parameter in array array['session_replication_role', 'track_io_timing', 'log_lock_waits', 'log_min_messages'] loop
    if not has_parameter_privilege(migration_role, parameter, 'set') then
      execute format('grant set on parameter %s to %I', parameter, migration_role);
    end if;
  end loop;
end
$$;
