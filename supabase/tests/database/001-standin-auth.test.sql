-- The Supabase platform stand-in (scripts/db/supabase-standin.sql) behaves as
-- Supabase does where our migrations and policies depend on it:
--   * auth.uid() / auth.role() / auth.email() / auth.jwt() read
--     request.jwt.claims, prefer the legacy request.jwt.claim.* settings, and
--     are null when nothing (or an empty string) is set;
--   * the API roles have Supabase's attributes (service_role bypasses RLS,
--     anon and authenticated cannot log in);
--   * Supabase's default privileges on public: a table or function the
--     migration role creates there is granted to anon and authenticated, so
--     only RLS (or an explicit revoke) protects it;
--   * auth.users / auth.sessions / auth.refresh_tokens / auth.mfa_factors with Supabase's cascades
--     and RLS enabled;
--   * what supautils lets hosted postgres do that a plain non-superuser may
--     not: set session_replication_role (its privileged extensions are not
--     stood in for, and nothing lends the role SUPERUSER for them);
--   * the test helpers switch role and claims as PostgREST would.
-- On a real Supabase database (`supabase test db`) the same file holds.
begin;
select plan(51);

-- ── auth.*() with no claims at all ───────────────────────────────────────────
select from set_config('request.jwt.claims', '', true);
select from set_config('request.jwt.claim.sub', '', true);
select from set_config('request.jwt.claim.role', '', true);
select from set_config('request.jwt.claim.email', '', true);
select from set_config('request.jwt.claim', '', true);
select is(auth.uid(), null, 'auth.uid() is null when the claim settings are empty');
select is(auth.role(), null, 'auth.role() is null when the claim settings are empty');
select is(auth.email(), null, 'auth.email() is null when the claim settings are empty');
select is(auth.jwt(), null, 'auth.jwt() is null when the claim settings are empty');

-- ── request.jwt.claims (what PostgREST and our api function set) ────────────
select from set_config('request.jwt.claims', json_build_object(
  'sub', '11111111-1111-4111-8111-111111111111', 'role', 'authenticated', 'aud', 'authenticated',
  'email', 'claims@example.test', 'session_id', '22222222-2222-4222-8222-222222222222')::text, true);
select is(auth.uid(), '11111111-1111-4111-8111-111111111111'::uuid, 'auth.uid() is the sub of request.jwt.claims');
select is(auth.role(), 'authenticated', 'auth.role() is the role of request.jwt.claims');
select is(auth.email(), 'claims@example.test', 'auth.email() is the email of request.jwt.claims');
select is(auth.jwt() ->> 'session_id', '22222222-2222-4222-8222-222222222222', 'auth.jwt() returns every claim of request.jwt.claims');
select is(pg_typeof(auth.jwt()), 'jsonb'::regtype, 'auth.jwt() is jsonb');

-- ── the legacy request.jwt.claim.* settings win over request.jwt.claims ─────
select from set_config('request.jwt.claim.sub', '33333333-3333-4333-8333-333333333333', true);
select from set_config('request.jwt.claim.role', 'service_role', true);
select from set_config('request.jwt.claim.email', 'legacy@example.test', true);
select from set_config('request.jwt.claim', '{"sub": "33333333-3333-4333-8333-333333333333", "legacy": true}', true);
select is(auth.uid(), '33333333-3333-4333-8333-333333333333'::uuid, 'auth.uid() prefers the legacy request.jwt.claim.sub');
select is(auth.role(), 'service_role', 'auth.role() prefers the legacy request.jwt.claim.role');
select is(auth.email(), 'legacy@example.test', 'auth.email() prefers the legacy request.jwt.claim.email');
select is(auth.jwt() ->> 'legacy', 'true', 'auth.jwt() prefers the legacy request.jwt.claim');

-- Only the legacy settings, no claims object.
select from set_config('request.jwt.claims', '', true);
select is(auth.uid(), '33333333-3333-4333-8333-333333333333'::uuid, 'auth.uid() falls back to the legacy setting alone');

-- Claims without sub (an anon key): uid null, role from the claims.
select from set_config('request.jwt.claim.sub', '', true);
select from set_config('request.jwt.claim.role', '', true);
select from set_config('request.jwt.claim.email', '', true);
select from set_config('request.jwt.claim', '', true);
select from set_config('request.jwt.claims', '{"role": "anon", "iss": "supabase"}', true);
select is(auth.uid(), null, 'auth.uid() is null for claims without sub');
select is(auth.role(), 'anon', 'auth.role() is anon for the anon key''s claims');
select from set_config('request.jwt.claims', '', true);

-- ── roles ────────────────────────────────────────────────────────────────────
select ok((select rolbypassrls from pg_roles where rolname = 'service_role'), 'service_role bypasses RLS');
select ok(not (select rolbypassrls from pg_roles where rolname = 'authenticated'), 'authenticated does not bypass RLS');
select ok(not (select rolbypassrls from pg_roles where rolname = 'anon'), 'anon does not bypass RLS');
select ok(not (select rolcanlogin from pg_roles where rolname = 'anon'), 'anon cannot log in (nologin)');
select ok(not (select rolcanlogin from pg_roles where rolname = 'authenticated'), 'authenticated cannot log in (nologin)');
select ok(not (select rolcanlogin from pg_roles where rolname = 'service_role'), 'service_role cannot log in (nologin)');
select ok((select rolcanlogin and not rolinherit from pg_roles where rolname = 'authenticator'), 'authenticator logs in and does not inherit');
-- supabase/postgres' 20260821154147_revoke_createrole_from_auth_admin, and 00000000000001-auth-schema.sql's search_path.
select ok((select rolcanlogin and not rolinherit and not rolcreaterole from pg_roles where rolname = 'supabase_auth_admin'),
  'supabase_auth_admin logs in, does not inherit, and cannot create roles');
select is((select setconfig from pg_db_role_setting where setdatabase = 0 and setrole = 'supabase_auth_admin'::regrole),
  array['search_path=auth'], 'supabase_auth_admin''s search_path is auth');
select ok((select bool_and(rolinherit) and count(*) = 3 from pg_roles where rolname in ('anon', 'authenticated', 'service_role')),
  'anon, authenticated and service_role inherit, as since Supabase''s 20230529180330_alter_api_roles_for_inherit');
select ok(pg_has_role('authenticator', 'authenticated', 'member') and pg_has_role('authenticator', 'anon', 'member')
  and pg_has_role('authenticator', 'service_role', 'member'), 'authenticator may switch to every API role');
select ok(not (select rolsuper from pg_roles r join pg_namespace n on n.nspowner = r.oid where n.nspname = 'app_private'),
  'the migration role (owner of app_private) is not a superuser, as hosted postgres');

-- ── auth tables ──────────────────────────────────────────────────────────────
select is(array(select c from unnest(array['id', 'user_id', 'aal', 'not_after', 'created_at', 'updated_at', 'user_agent', 'ip']) c
                where not exists (select 1 from information_schema.columns
                                  where table_schema = 'auth' and table_name = 'sessions' and column_name = c)),
  '{}'::text[], 'auth.sessions has the Supabase Auth columns we rely on');
select is(array(select c from unnest(array['id', 'email', 'phone', 'raw_app_meta_data', 'raw_user_meta_data', 'is_anonymous',
                                           'deleted_at', 'created_at']) c
                where not exists (select 1 from information_schema.columns
                                  where table_schema = 'auth' and table_name = 'users' and column_name = c)),
  '{}'::text[], 'auth.users has the Supabase Auth columns we rely on');
select fk_ok('auth', 'sessions', 'user_id', 'auth', 'users', 'id', 'auth.sessions.user_id references auth.users');
select is(array(select c from unnest(array['id', 'user_id', 'friendly_name', 'factor_type', 'status', 'created_at', 'updated_at']) c
                where not exists (select 1 from information_schema.columns
                                  where table_schema = 'auth' and table_name = 'mfa_factors' and column_name = c)),
  '{}'::text[], 'auth.mfa_factors has the Supabase Auth columns we rely on');
select fk_ok('auth', 'mfa_factors', 'user_id', 'auth', 'users', 'id', 'auth.mfa_factors.user_id references auth.users');
select is(array(select c.relname::text from pg_class c join pg_namespace n on n.oid = c.relnamespace
                where n.nspname = 'auth' and c.relkind = 'r' and not c.relrowsecurity
                  and c.relname in ('users', 'sessions', 'refresh_tokens', 'identities', 'mfa_factors')),
  '{}'::text[], 'the auth tables have RLS enabled, as Supabase Auth enables it (20240612123726_enable_rls_update_grants)');

select from tests.create_supabase_user('cascade_user');
insert into auth.refresh_tokens (token, user_id, revoked, created_at, updated_at, session_id)
values ('sample-refresh-token', tests.get_supabase_uid('cascade_user')::text, false, now(), now(), tests.get_session_id('cascade_user'));
delete from auth.sessions where id = tests.get_session_id('cascade_user');
select is_empty($$ select 1 from auth.refresh_tokens where token = 'sample-refresh-token' $$,
  'deleting a session deletes its refresh tokens (on delete cascade)');
select from set_config('tests.cascade_uid', tests.get_supabase_uid('cascade_user')::text, true);
insert into auth.sessions (id, user_id, aal, created_at) values (gen_random_uuid(), tests.get_supabase_uid('cascade_user'), 'aal1', now());
insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at)
values (gen_random_uuid(), tests.get_supabase_uid('cascade_user'), 'cascade', 'totp', 'verified', now(), now());
delete from auth.users where id = tests.get_supabase_uid('cascade_user');
select is_empty($$ select 1 from auth.sessions where user_id = current_setting('tests.cascade_uid')::uuid $$,
  'deleting a user deletes its sessions (on delete cascade)');
select is_empty($$ select 1 from auth.mfa_factors where user_id = current_setting('tests.cascade_uid')::uuid $$,
  'deleting a user deletes its MFA factors (on delete cascade)');

-- ── Supabase default privileges on public, for the migration role ───────────
-- Create as the migration role (the owner of app_private: tidesync_owner here,
-- postgres on Supabase), exactly as a migration would.
select from set_config('tests.migration_role', (select r.rolname from pg_roles r join pg_namespace n on n.nspowner = r.oid where n.nspname = 'app_private'), true);
do $$ begin execute format('set local role %I', current_setting('tests.migration_role')); end $$;
create table public.tidesync_test_standin_probe (id int primary key, owner_id uuid);
create function public.tidesync_test_standin_probe_fn() returns int language sql as 'select 1';
alter table public.tidesync_test_standin_probe enable row level security;
insert into public.tidesync_test_standin_probe values (1, null);
reset role;

select ok(has_table_privilege('anon', 'public.tidesync_test_standin_probe', 'select,insert,update,delete'),
  'a new public table is granted to anon by default');
select ok(has_table_privilege('authenticated', 'public.tidesync_test_standin_probe', 'select,insert,update,delete'),
  'a new public table is granted to authenticated by default');
select ok(has_table_privilege('service_role', 'public.tidesync_test_standin_probe', 'select,insert,update,delete'),
  'a new public table is granted to service_role by default');
select ok(has_function_privilege('anon', 'public.tidesync_test_standin_probe_fn()', 'execute'),
  'a new public function is executable by anon by default');

-- With the grants in place, only RLS protects the rows.
select from tests.create_supabase_user('probe_user');
select from tests.authenticate_as('probe_user');
select is_empty($$ select * from public.tidesync_test_standin_probe $$, 'authenticated sees nothing in an RLS table without policies');
select from tests.authenticate_as_anon();
select is_empty($$ select * from public.tidesync_test_standin_probe $$, 'anon sees nothing in an RLS table without policies');
select from tests.authenticate_as_service_role();
select results_eq($$ select id from public.tidesync_test_standin_probe $$, array[1], 'service_role bypasses RLS and sees the row');
select from tests.clear_authentication();

-- ── what supautils gives the migration role ─────────────────────────────────
-- Its privileged_role_allowed_configs (supabase/postgres'
-- ansible/files/postgresql_config/supautils.conf.j2): postgres sets what only a
-- superuser may set. Its privileged_extensions are not stood in for (a loan of
-- SUPERUSER decided from a statement's text is one any role can abuse): an
-- extension outside that list is refused on Supabase and here alike.
do $$ begin execute format('set local role %I', current_setting('tests.migration_role')); end $$;
select lives_ok($$ set local session_replication_role = replica $$,
  'the migration role may set session_replication_role (a restore with the triggers off)');
set local session_replication_role = origin;
select throws_ok($$ create extension pageinspect $$, '42501', null,
  'but not create an extension outside supautils'' list (pageinspect)');
reset role;
select ok(not (select rolsuper from pg_roles where rolname = current_setting('tests.migration_role')),
  'the migration role is no superuser');
select is_empty($$ select evtname from pg_event_trigger where evtfoid in (select oid from pg_proc where proname like '%superuser%' or proname like 'standin_privileged_extensions%') $$,
  'and no event trigger lends it SUPERUSER');

-- ── the test helpers ─────────────────────────────────────────────────────────
select from tests.authenticate_as('probe_user');
select is(
  jsonb_build_object('role', current_user, 'uid', auth.uid(), 'auth.role', auth.role(), 'aud', auth.jwt() ->> 'aud',
                     'session_id', auth.jwt() ->> 'session_id', 'is_anonymous', auth.jwt() -> 'is_anonymous', 'email', auth.email()),
  jsonb_build_object('role', 'authenticated', 'uid', tests.get_supabase_uid('probe_user'), 'auth.role', 'authenticated', 'aud', 'authenticated',
                     'session_id', tests.get_session_id('probe_user'), 'is_anonymous', false,
                     'email', tests.get_supabase_uid('probe_user')::text || '@test.tidesync.dev'),
  'authenticate_as: role authenticated with the user''s sub, role, aud, session_id, is_anonymous and email');
select from tests.authenticate_as_anon();
select is(jsonb_build_object('role', current_user, 'uid', auth.uid(), 'auth.role', auth.role()),
          jsonb_build_object('role', 'anon', 'uid', null, 'auth.role', 'anon'),
  'authenticate_as_anon: role anon, no sub');
select from tests.clear_authentication();
select is(jsonb_build_object('back', current_user = session_user, 'uid', auth.uid(), 'jwt', auth.jwt()),
          jsonb_build_object('back', true, 'uid', null, 'jwt', null),
  'clear_authentication: back to the connecting role with no claims');

select * from finish();
rollback;
