-- pgTAP test helpers, in the spirit of basejump's supabase_test_helpers but
-- written here (no network install). pg_prove runs the files of this folder
-- in name order on one database, so this file runs first and COMMITS: the
-- `tests` schema then exists for every *.test.sql file after it (which each
-- roll back). It still has a plan, so pg_prove counts it as a test file.
-- `supabase test db` picks it up the same way.
--
-- Helpers:
--   tests.create_supabase_user(identifier, email)  auth.users row + one auth.sessions row
--   tests.get_supabase_uid(identifier)             that user's id
--   tests.get_session_id(identifier)               that user's (first) session id
--   tests.authenticate_as(identifier)              role authenticated + request.jwt.claims
--   tests.authenticate_as_anon()                   role anon + the anon key's claims
--   tests.authenticate_as_service_role()           role service_role + its claims
--   tests.clear_authentication()                   back to the connecting (super)user, no claims
--   tests.rls_enabled(schema)                      pgTAP assertion: every table of schema has RLS
--   tests.function_callers(function)               which of anon, authenticated, public, service_role may EXECUTE it
--   tests.open_second_session(name)                a dblink connection to this database; null, or why it cannot be opened
-- Role switches and claims are transaction-local, as PostgREST does them.

begin;

create schema if not exists tests;
comment on schema tests is 'pgTAP helpers (supabase/tests/database/000-setup-test-helpers.sql); test databases only.';
grant usage on schema tests to anon, authenticated, service_role;

-- Lookups run as the helper owner (a superuser in the test run): after
-- authenticate_as(), the current role may not read auth.* itself.
create or replace function tests.get_supabase_uid(identifier text)
returns uuid
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  found uuid;
begin
  select u.id into found
  from auth.users u
  where u.raw_user_meta_data ->> 'test_identifier' = identifier;
  if found is null then
    raise exception 'tests: no test user with identifier %; create it with tests.create_supabase_user()', identifier;
  end if;
  return found;
end
$$;
comment on function tests.get_supabase_uid(text) is 'The auth.users id of the test user created with this identifier; raises if there is none.';

create or replace function tests.get_session_id(identifier text)
returns uuid
language sql
stable
security definer
set search_path = ''
as $$
  select s.id
  from auth.sessions s
  where s.user_id = tests.get_supabase_uid(identifier)
  order by s.created_at, s.id
  limit 1
$$;
comment on function tests.get_session_id(text) is 'The first Supabase session of the test user (created with it by tests.create_supabase_user).';

create or replace function tests.create_supabase_user(identifier text, email text default null)
returns uuid
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  user_id uuid := extensions.gen_random_uuid();
begin
  if identifier is null or identifier = '' then
    raise exception 'tests: a test user needs a non-empty identifier';
  end if;
  if exists (select 1 from auth.users u where u.raw_user_meta_data ->> 'test_identifier' = identifier) then
    raise exception 'tests: a test user with identifier % already exists', identifier;
  end if;
  insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at, is_anonymous)
  values (
    '00000000-0000-0000-0000-000000000000', user_id, 'authenticated', 'authenticated',
    coalesce(email, user_id::text || '@test.tidesync.dev'),
    jsonb_build_object('provider', 'email', 'providers', jsonb_build_array('email')),
    jsonb_build_object('test_identifier', identifier),
    now(), now(), false
  );
  insert into auth.sessions (id, user_id, aal, created_at, updated_at, user_agent)
  values (extensions.gen_random_uuid(), user_id, 'aal1', now(), now(), 'pgTAP test session');
  return user_id;
end
$$;
comment on function tests.create_supabase_user(text, text) is 'Creates a user as Supabase Auth would (auth.users, identifier in raw_user_meta_data.test_identifier) with one live session; returns its id.';

-- Security invoker: switching roles is not allowed inside a security definer
-- function. It first returns to the session user, so it may read auth.* even
-- when called while authenticated as another user.
create or replace function tests.authenticate_as(identifier text)
returns void
language plpgsql
volatile
set search_path = ''
as $$
declare
  claims jsonb;
begin
  perform set_config('role', 'none', true);
  -- The claims Supabase Auth puts in an access token (and PostgREST in request.jwt.claims).
  select jsonb_build_object(
    'iss', 'http://127.0.0.1:54321/auth/v1',
    'sub', u.id,
    'aud', 'authenticated',
    'role', 'authenticated',
    'exp', extract(epoch from now() + interval '1 hour')::bigint,
    'iat', extract(epoch from now())::bigint,
    'email', u.email,
    'phone', coalesce(u.phone, ''),
    'app_metadata', coalesce(u.raw_app_meta_data, '{}'::jsonb),
    'user_metadata', coalesce(u.raw_user_meta_data, '{}'::jsonb),
    'aal', coalesce(s.aal::text, 'aal1'),
    'amr', jsonb_build_array(jsonb_build_object('method', 'password', 'timestamp', extract(epoch from now())::bigint)),
    'session_id', s.id,
    'is_anonymous', false
  )
  into claims
  from auth.users u
  left join auth.sessions s on s.id = tests.get_session_id(identifier)
  where u.id = tests.get_supabase_uid(identifier);
  perform set_config('role', 'authenticated', true);
  perform set_config('request.jwt.claims', claims::text, true);
end
$$;
comment on function tests.authenticate_as(text) is 'For the rest of the transaction: role authenticated with the access-token claims of the test user''s first session (sub, role, aud, session_id, email, aal, is_anonymous), as PostgREST sets them.';

create or replace function tests.authenticate_as_anon()
returns void
language plpgsql
volatile
set search_path = ''
as $$
begin
  perform set_config('role', 'anon', true);
  perform set_config('request.jwt.claims', jsonb_build_object('iss', 'supabase', 'role', 'anon')::text, true);
end
$$;
comment on function tests.authenticate_as_anon() is 'For the rest of the transaction: role anon with the anon key''s claims (no sub).';

create or replace function tests.authenticate_as_service_role()
returns void
language plpgsql
volatile
set search_path = ''
as $$
begin
  perform set_config('role', 'service_role', true);
  perform set_config('request.jwt.claims', jsonb_build_object('iss', 'supabase', 'role', 'service_role')::text, true);
end
$$;
comment on function tests.authenticate_as_service_role() is 'For the rest of the transaction: role service_role (bypasses RLS) with the service key''s claims.';

create or replace function tests.clear_authentication()
returns void
language plpgsql
volatile
set search_path = ''
as $$
begin
  -- 'none' = back to the session user (the connecting superuser).
  perform set_config('role', 'none', true);
  perform set_config('request.jwt.claims', '', true);
end
$$;
comment on function tests.clear_authentication() is 'Back to the connecting role with no request.jwt.claims, for the rest of the transaction.';

-- A pgTAP assertion. Its search_path is pinned like every other function's
-- (the database advisors flag a mutable one on any project that ran the
-- suite); pgTAP's own functions call each other unqualified, so the body
-- points search_path at pgTAP's schema, `extensions` (as `supabase test db`
-- installs it), for its own duration only: a function with a SET clause
-- restores the setting when it returns.
create or replace function tests.rls_enabled(testing_schema text)
returns setof text
language plpgsql
volatile
set search_path = ''
as $$
declare
  missing text[];
begin
  perform pg_catalog.set_config('search_path', 'extensions', true);
  select coalesce(pg_catalog.array_agg(pg_catalog.format('%I.%I', n.nspname, c.relname) order by c.relname), '{}')
  into missing
  from pg_catalog.pg_class c
  join pg_catalog.pg_namespace n on n.oid = c.relnamespace
  where n.nspname = testing_schema
    and c.relkind in ('r', 'p')
    and not c.relrowsecurity;
  return next extensions.ok(
    pg_catalog.cardinality(missing) = 0,
    pg_catalog.format('every table in schema %s has row level security enabled', testing_schema)
  );
  if pg_catalog.cardinality(missing) > 0 then
    return next extensions.diag('without RLS: ' || pg_catalog.array_to_string(missing, ', '));
  end if;
end
$$;
comment on function tests.rls_enabled(text) is 'pgTAP assertion: every table (and partitioned table) of the schema has row level security enabled; lists the ones that do not.';

-- Every API role may call the helpers, since tests switch between them.
grant execute on all functions in schema tests to anon, authenticated, service_role;

-- Which of PUBLIC and the API roles may call a function, sorted ('{}' for none).
create or replace function tests.function_callers(p_function regprocedure)
returns text[]
language sql
stable
set search_path = ''
as $$
  select coalesce(pg_catalog.array_agg(r order by r), '{}')
    from pg_catalog.unnest(array['anon', 'authenticated', 'public', 'service_role']) r
   where pg_catalog.has_function_privilege(r, p_function, 'execute')
$$;
comment on function tests.function_callers(regprocedure) is 'The roles among anon, authenticated, public and service_role that may EXECUTE the function, sorted.';

-- A second session of the test, over the server's own socket: a test holds a
-- lock in it, or commits there. dblink (created here when missing, in the
-- test's transaction: supautils lets postgres create it on Supabase, the
-- stand-in's migration role may not) connects without a password only for a
-- superuser; `supabase test db` runs as postgres, which is none, so the test
-- skips what needs the second session when this answers why it is refused.
-- Security invoker: dblink's rule applies to the test's own role.
create or replace function tests.open_second_session(name text)
returns text
language plpgsql
volatile
set search_path = ''
as $$
declare
  socket text := '';
begin
  create extension if not exists dblink with schema extensions;
  -- The server's own socket; a role without pg_read_all_settings lets libpq pick its default.
  begin
    socket := pg_catalog.format('host=%s ', pg_catalog.split_part(pg_catalog.current_setting('unix_socket_directories'), ',', 1));
  exception when insufficient_privilege then
    null;
  end;
  perform extensions.dblink_connect(name, pg_catalog.format('%sport=%s dbname=%s user=%s',
    socket, pg_catalog.current_setting('port'), pg_catalog.current_database(), current_user));
  return null;
exception when others then
  return pg_catalog.format('no second session for %s: %s (%s)', current_user, sqlerrm, sqlstate);
end
$$;
comment on function tests.open_second_session(text) is 'Opens the dblink connection `name` to this database as the current role (creating dblink if missing); null when opened, else why not (a non-superuser needs a password, and may not create dblink outside Supabase).';

select plan(11);
select has_function('tests', 'create_supabase_user', array['text', 'text'], 'tests.create_supabase_user(identifier, email) exists');
select has_function('tests', 'get_supabase_uid', array['text'], 'tests.get_supabase_uid(identifier) exists');
select has_function('tests', 'get_session_id', array['text'], 'tests.get_session_id(identifier) exists');
select has_function('tests', 'authenticate_as', array['text'], 'tests.authenticate_as(identifier) exists');
select has_function('tests', 'authenticate_as_anon', '{}'::text[], 'tests.authenticate_as_anon() exists');
select has_function('tests', 'authenticate_as_service_role', '{}'::text[], 'tests.authenticate_as_service_role() exists');
select has_function('tests', 'clear_authentication', '{}'::text[], 'tests.clear_authentication() exists');
select has_function('tests', 'rls_enabled', array['text'], 'tests.rls_enabled(schema) exists');
select has_function('tests', 'function_callers', array['regprocedure'], 'tests.function_callers(function) exists');
select has_function('tests', 'open_second_session', array['text'], 'tests.open_second_session(name) exists');
select ok(has_schema_privilege('authenticated', 'tests', 'usage') and has_schema_privilege('anon', 'tests', 'usage'),
  'the API roles can reach the helpers after switching to them');
select * from finish();

commit;
