-- app_private.devices and app_private.revoke_session(): RLS and exact policy
-- names; what the owner, another user, anon and the service role can do; the
-- lifecycle the database keeps (session binding, revocation when the session
-- row goes, push token unique among active devices and released from the old
-- device); revoke_session only ever deletes the caller's own session; EXECUTE
-- privileges of every function involved (lock_user_devices,
-- lock_device_registration, lock_registration_sessions and
-- lock_installation_push_tokens: their waiting is
-- tested in tests/integration/device-session-races.test.ts and
-- sign-out-races.test.ts); session_is_live, the one rule of a session that
-- counts, and the push senders' view push_targets (their behaviour through
-- the API: tests/integration/devices.test.ts).
begin;
select plan(75);

do $$ begin
  perform tests.create_supabase_user('device_owner');
  perform tests.create_supabase_user('device_other');
end $$;
-- A second session of the owner (another phone), created later so that the
-- helpers keep authenticating with the first one.
insert into auth.sessions (id, user_id, aal, created_at, updated_at)
values ('5e551011-0000-4000-8000-000000000301', tests.get_supabase_uid('device_owner'), 'aal1', now() + interval '1 minute', now());
create temporary table first_sessions as
select tests.get_session_id('device_owner') as owner_session, tests.get_session_id('device_other') as other_session;

-- ------------------------------------------------------------ structure
select tests.rls_enabled('app_private');
select policies_are('app_private', 'devices', array[
  'Users can read their own devices',
  'Users can register their own devices',
  'Users can update their own devices'
]);
select policy_cmd_is('app_private', 'devices', 'Users can read their own devices', 'select', 'read policy: SELECT');
select policy_cmd_is('app_private', 'devices', 'Users can register their own devices', 'insert', 'register policy: INSERT');
select policy_cmd_is('app_private', 'devices', 'Users can update their own devices', 'update', 'update policy: UPDATE');
select policy_roles_are('app_private', 'devices', 'Users can read their own devices', array['authenticated'], 'read policy: authenticated');
select policy_roles_are('app_private', 'devices', 'Users can register their own devices', array['authenticated'], 'register policy: authenticated');
select policy_roles_are('app_private', 'devices', 'Users can update their own devices', array['authenticated'], 'update policy: authenticated');
select table_privs_are('app_private', 'devices', 'anon', array[]::text[], 'anon has no privilege on devices');
select table_privs_are('app_private', 'devices', 'authenticated', array['SELECT'], 'authenticated: table-level SELECT only (writes are per column)');
select table_privs_are('app_private', 'devices', 'service_role', array['SELECT'], 'service_role may read devices, not write them');
select ok(
  not has_column_privilege('authenticated', 'app_private.devices', 'revoked_at', 'UPDATE')
  and not has_column_privilege('authenticated', 'app_private.devices', 'push_token_updated_at', 'UPDATE')
  and not has_column_privilege('authenticated', 'app_private.devices', 'user_id', 'UPDATE')
  and not has_column_privilege('authenticated', 'app_private.devices', 'id', 'INSERT')
  and not has_column_privilege('authenticated', 'app_private.devices', 'revoked_at', 'INSERT'),
  'authenticated cannot write ids, owner, revoked_at or push_token_updated_at'
);

-- ------------------------------------------------------------- the owner
select tests.authenticate_as('device_owner');
select lives_ok(
  $$ insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, push_token, push_provider, session_id)
     values (auth.uid(), 'a0000000-0000-4000-8000-000000000301', 'ios', '1.0', 1,
             'token-301-shared', 'apns', (auth.jwt() ->> 'session_id')::uuid) $$,
  'the owner registers a device bound to the session they call with'
);
select results_eq(
  $$ select revoked_at is null, push_token_updated_at is not null from app_private.devices $$,
  $$ values (true, true) $$,
  'a registered device is active and its push token time is stamped'
);
select throws_ok(
  $$ insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, session_id)
     values (auth.uid(), gen_random_uuid(), 'ios', '1.0', 1, '5e551011-0000-4000-8000-000000000301') $$,
  '42501', null,
  'the owner cannot bind a device to a session other than the calling one'
);
select throws_ok(
  format($$ insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, session_id)
            values (%L, gen_random_uuid(), 'ios', '1.0', 1, (auth.jwt() ->> 'session_id')::uuid) $$, tests.get_supabase_uid('device_other')),
  '42501', null,
  'the owner cannot register a device for another user'
);
select throws_ok(
  $$ insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, session_id)
     values (auth.uid(), 'a0000000-0000-4000-8000-000000000301', 'ios', '1.0', 1, (auth.jwt() ->> 'session_id')::uuid) $$,
  '23505', null,
  'one device per (user, installation)'
);
select throws_ok(
  $$ insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, session_id)
     values (auth.uid(), gen_random_uuid(), 'symbian', '1.0', 1, (auth.jwt() ->> 'session_id')::uuid) $$,
  '23514', null,
  'an unknown platform is refused'
);
select lives_ok(
  $$ update app_private.devices set app_version = '1.1', build_number = 2 where installation_id = 'a0000000-0000-4000-8000-000000000301' and user_id = tests.get_supabase_uid('device_owner') $$,
  'the owner updates what the device reports'
);
select throws_ok(
  $$ update app_private.devices set revoked_at = null where installation_id = 'a0000000-0000-4000-8000-000000000301' and user_id = tests.get_supabase_uid('device_owner') $$,
  '42501', null,
  'the owner cannot write revoked_at'
);
select throws_ok(
  $$ update app_private.devices set push_token_updated_at = now() where installation_id = 'a0000000-0000-4000-8000-000000000301' and user_id = tests.get_supabase_uid('device_owner') $$,
  '42501', null,
  'the owner cannot write push_token_updated_at'
);
select throws_ok(
  $$ update app_private.devices set session_id = '5e551011-0000-4000-8000-000000000301' where installation_id = 'a0000000-0000-4000-8000-000000000301' and user_id = tests.get_supabase_uid('device_owner') $$,
  '42501', null,
  'the owner cannot rebind a device to a session other than the calling one'
);
select throws_ok(
  $$ delete from app_private.devices where installation_id = 'a0000000-0000-4000-8000-000000000301' and user_id = tests.get_supabase_uid('device_owner') $$,
  '42501', null,
  'devices are not deleted by users (they are signed out)'
);
select tests.clear_authentication();

-- --------------------------------------------------------- another user
select tests.authenticate_as('device_other');
select is_empty($$ select 1 from app_private.devices where user_id <> auth.uid() $$, 'another user cannot see the owner''s device');
update app_private.devices set app_version = '6.6.6' where installation_id = 'a0000000-0000-4000-8000-000000000301' and user_id = tests.get_supabase_uid('device_owner');
-- Shared phone: the other user registers the same push token.
select lives_ok(
  $$ insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, push_token, push_provider, session_id)
     values (auth.uid(), 'a0000000-0000-4000-8000-000000000301', 'ios', '1.0', 1,
             'token-301-shared', 'apns', (auth.jwt() ->> 'session_id')::uuid) $$,
  'another user registers the same push token on the same installation'
);
select tests.clear_authentication();
select ok(
  exists (select 1 from pg_locks l
           where l.locktype = 'advisory' and l.pid = pg_backend_pid() and l.objsubid = 1
             and l.classid = ((app_private.push_token_lock_key('token-301-shared') >> 32) & 4294967295)::oid
             and l.objid = (app_private.push_token_lock_key('token-301-shared') & 4294967295)::oid),
  'registering a token takes the lock push_token_lock_key names (the one lock_device_registration takes first)'
);
select results_eq(
  $$ select app_version, push_token, push_provider, revoked_at is null from app_private.devices where installation_id = 'a0000000-0000-4000-8000-000000000301' and user_id = tests.get_supabase_uid('device_owner') $$,
  $$ values ('1.1'::text, null::text, null::text, true) $$,
  'the owner''s device is untouched by the other user''s update, lost the push token to the new holder, and stays active'
);
select results_eq(
  $$ select user_id from app_private.devices where push_token = 'token-301-shared' $$,
  array[tests.get_supabase_uid('device_other')],
  'the push token has exactly one holder'
);
insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, session_id)
values (tests.get_supabase_uid('device_owner'), gen_random_uuid(), 'android', '1.0', 1, '5e551011-0000-4000-8000-000000000301');
select throws_ok(
  $$ insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, session_id)
     values (tests.get_supabase_uid('device_owner'), gen_random_uuid(), 'web', '1.0', 1, '5e551011-0000-4000-8000-000000000301') $$,
  '23505', null,
  'a session is bound to at most one device'
);

-- ------------------------- a session start takes its installation's pushes
-- Here the other user holds token-301-shared on installation 301, where the
-- owner's device runs the owner's session (as after the owner signs in there
-- again without sending a token).
select tests.authenticate_as('device_owner');
select throws_ok(
  $$ select app_private.release_installation_push_tokens(gen_random_uuid()) $$,
  '42501', null,
  'release_installation_push_tokens refuses an installation the caller''s session does not run on'
);
select lives_ok(
  $$ select app_private.lock_installation_push_tokens(null, 'a0000000-0000-4000-8000-000000000301') $$,
  'the owner takes the installation''s locks'
);
select lives_ok(
  $$ select app_private.release_installation_push_tokens('a0000000-0000-4000-8000-000000000301') $$,
  'the owner, whose session runs on installation 301, takes its pushes'
);
select tests.clear_authentication();
select ok(
  exists (select 1 from pg_locks l
           where l.locktype = 'advisory' and l.pid = pg_backend_pid() and l.objsubid = 1
             and l.classid = ((pg_catalog.hashtextextended('tidesync.installation:a0000000-0000-4000-8000-000000000301', 0) >> 32) & 4294967295)::oid
             and l.objid = (pg_catalog.hashtextextended('tidesync.installation:a0000000-0000-4000-8000-000000000301', 0) & 4294967295)::oid),
  'lock_installation_push_tokens holds the installation''s lock (session starts there run in turn)'
);
select results_eq(
  $$ select user_id = tests.get_supabase_uid('device_owner'), push_token, push_provider, revoked_at is null
       from app_private.devices where installation_id = 'a0000000-0000-4000-8000-000000000301' order by 1 $$,
  $$ values (false, null::text, null::text, true), (true, null::text, null::text, true) $$,
  'the other user''s device there lost its push token and stays active (its session is its user''s to end)'
);

-- ------------------------------------------------------------------ anon
select tests.authenticate_as_anon();
select throws_ok($$ select * from app_private.devices $$, '42501', null, 'anon cannot read devices');
select throws_ok(
  $$ insert into app_private.devices (user_id, installation_id, platform, app_version, build_number) values (gen_random_uuid(), gen_random_uuid(), 'ios', '1', 1) $$,
  '42501', null, 'anon cannot register devices'
);
select throws_ok($$ select app_private.revoke_session(gen_random_uuid()) $$, '42501', null, 'anon cannot call revoke_session');
select tests.clear_authentication();

-- ---------------------------------------------------------- service role
select tests.authenticate_as_service_role();
select results_eq(
  $$ select count(*)::int from app_private.devices where installation_id = 'a0000000-0000-4000-8000-000000000301' $$,
  array[2],
  'the service role reads every device'
);
select throws_ok($$ update app_private.devices set app_version = 'x' $$, '42501', null, 'the service role cannot update devices');
select throws_ok($$ select app_private.revoke_session(gen_random_uuid()) $$, '42501', null, 'the service role cannot call revoke_session');
select tests.clear_authentication();

-- -------------------------------------------------------- revoke_session
select tests.authenticate_as('device_owner');
select is(app_private.revoke_session(tests.get_session_id('device_other')), false, 'revoke_session of another user''s session: nothing happens (false)');
select tests.clear_authentication();
select isnt_empty(
  $$ select 1 from auth.sessions where id = tests.get_session_id('device_other') $$,
  'the other user''s session still exists'
);
select tests.authenticate_as('device_owner');
select is(app_private.revoke_session(tests.get_session_id('device_owner')), true, 'revoke_session of the caller''s own session deletes it (true)');
select tests.clear_authentication();
select is_empty(
  $$ select 1 from auth.sessions where id = (select owner_session from first_sessions) $$,
  'the caller''s session row is gone'
);
select isnt_empty(
  $$ select 1 from auth.sessions where id = '5e551011-0000-4000-8000-000000000301' $$,
  'the caller''s other session is untouched'
);
select results_eq(
  $$ select session_id, push_token, revoked_at is not null from app_private.devices where installation_id = 'a0000000-0000-4000-8000-000000000301' and user_id = tests.get_supabase_uid('device_owner') $$,
  $$ values (null::uuid, null::text, true) $$,
  'the device of the revoked session is revoked (session unbound, no push token)'
);

-- Supabase Auth deleting a session (supabase.auth.signOut()) revokes the device the same way.
delete from auth.sessions where id = (select other_session from first_sessions);
select results_eq(
  $$ select session_id, push_token, revoked_at is not null from app_private.devices where installation_id = 'a0000000-0000-4000-8000-000000000301' and user_id = tests.get_supabase_uid('device_other') $$,
  $$ values (null::uuid, null::text, true) $$,
  'deleting a session row anywhere revokes its device and clears the push token'
);

-- --------------------------------------------------- function privileges
select ok(
  has_function_privilege('authenticated', 'app_private.revoke_session(uuid)', 'execute')
  and not has_function_privilege('anon', 'app_private.revoke_session(uuid)', 'execute')
  and not has_function_privilege('service_role', 'app_private.revoke_session(uuid)', 'execute')
  and not has_function_privilege('public', 'app_private.revoke_session(uuid)', 'execute'),
  'revoke_session(uuid): EXECUTE for authenticated only'
);
select is(
  (select prosecdef from pg_proc where oid = 'app_private.revoke_session(uuid)'::regprocedure),
  true,
  'revoke_session is security definer (authenticated has no right on auth.sessions)'
);
select is(
  (select proconfig from pg_proc where oid = 'app_private.revoke_session(uuid)'::regprocedure),
  array['search_path=""'],
  'revoke_session pins an empty search_path'
);
select ok(
  not has_table_privilege('authenticated', 'auth.sessions', 'delete'),
  'authenticated itself cannot delete auth.sessions rows'
);
select ok(
  has_function_privilege('authenticated', 'app_private.lock_user_devices(uuid)', 'execute')
  and not has_function_privilege('anon', 'app_private.lock_user_devices(uuid)', 'execute')
  and not has_function_privilege('service_role', 'app_private.lock_user_devices(uuid)', 'execute')
  and not has_function_privilege('public', 'app_private.lock_user_devices(uuid)', 'execute'),
  'lock_user_devices(uuid): EXECUTE for authenticated only (session start takes it)'
);
-- Unused since the three-argument form took its locks (20261128001300), it let
-- authenticated take any user's device and token locks (20261128002510).
select hasnt_function('app_private', 'lock_device_registration', array['uuid', 'text'],
  'lock_device_registration(uuid, text) is gone: a session start takes the three-argument form');
select ok(
  has_function_privilege('authenticated', 'app_private.push_token_lock_key(text)', 'execute')
  and not has_function_privilege('anon', 'app_private.push_token_lock_key(text)', 'execute')
  and not has_function_privilege('service_role', 'app_private.push_token_lock_key(text)', 'execute')
  and not has_function_privilege('public', 'app_private.push_token_lock_key(text)', 'execute'),
  'push_token_lock_key(text): EXECUTE for authenticated only (lock_device_registration runs as the caller)'
);
select is(
  (select array_to_string(proconfig, ',') from pg_proc where oid = 'app_private.push_token_lock_key(text)'::regprocedure),
  'search_path=""',
  'push_token_lock_key pins an empty search_path'
);
select ok(
  has_function_privilege('authenticated', 'app_private.lock_device_registration(uuid, text, uuid)', 'execute')
  and not has_function_privilege('anon', 'app_private.lock_device_registration(uuid, text, uuid)', 'execute')
  and not has_function_privilege('service_role', 'app_private.lock_device_registration(uuid, text, uuid)', 'execute')
  and not has_function_privilege('public', 'app_private.lock_device_registration(uuid, text, uuid)', 'execute'),
  'lock_device_registration(uuid, text, uuid): EXECUTE for authenticated only (session start takes it first)'
);
select ok(
  has_function_privilege('authenticated', 'app_private.lock_registration_sessions(uuid)', 'execute')
  and not has_function_privilege('anon', 'app_private.lock_registration_sessions(uuid)', 'execute')
  and not has_function_privilege('service_role', 'app_private.lock_registration_sessions(uuid)', 'execute')
  and not has_function_privilege('public', 'app_private.lock_registration_sessions(uuid)', 'execute'),
  'lock_registration_sessions(uuid): EXECUTE for authenticated only (lock_device_registration runs as the caller)'
);
select is(
  (select array_agg(prosecdef::text || ' ' || array_to_string(proconfig, ',') order by proname) from pg_proc
    where oid in ('app_private.lock_device_registration(uuid, text, uuid)'::regprocedure, 'app_private.lock_registration_sessions(uuid)'::regprocedure)),
  array['false search_path=""', 'true search_path=""'],
  'lock_device_registration(uuid, text, uuid) is security invoker, lock_registration_sessions security definer (authenticated has no right on auth.users or auth.sessions); both pin an empty search_path'
);
select ok(
  not has_function_privilege('anon', 'app_private.maintain_device_state()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.maintain_device_state()', 'execute')
  and not has_function_privilege('service_role', 'app_private.maintain_device_state()', 'execute'),
  'maintain_device_state(): no API role may execute it (trigger only)'
);
select ok(
  not has_function_privilege('anon', 'app_private.release_push_token_elsewhere()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.release_push_token_elsewhere()', 'execute')
  and not has_function_privilege('service_role', 'app_private.release_push_token_elsewhere()', 'execute'),
  'release_push_token_elsewhere(): no API role may execute it (trigger only)'
);
select is(
  (select proconfig from pg_proc where oid = 'app_private.release_push_token_elsewhere()'::regprocedure),
  array['search_path=""'],
  'release_push_token_elsewhere (security definer) pins an empty search_path'
);
select is(tests.function_callers('app_private.detach_push_token(text, uuid, uuid)'), '{}'::text[],
  'detach_push_token(): no API role may run it (the two push token triggers do)');
select is(
  (select array[prosecdef::text] || proconfig from pg_proc where oid = 'app_private.withhold_push_token_during_deletion()'::regprocedure),
  array['true', 'search_path=""'],
  'withhold_push_token_during_deletion is security definer (it detaches the withheld token from another user''s device) and pins an empty search_path'
);
select is(tests.function_callers('app_private.withhold_push_token_during_deletion()'), '{}'::text[],
  'withhold_push_token_during_deletion(): no API role may run it (trigger only)');
select is(tests.function_callers('app_private.lock_installation_push_tokens(text, uuid)'), array['authenticated'],
  'lock_installation_push_tokens(): authenticated only (lock_device_registration runs as the caller)');
select is(tests.function_callers('app_private.release_installation_push_tokens(uuid)'), array['authenticated'],
  'release_installation_push_tokens(): authenticated only (the session start)');
select is(
  (select array_agg(prosecdef::text || ' ' || array_to_string(proconfig, ',')) from pg_proc
    where oid in ('app_private.lock_installation_push_tokens(text, uuid)'::regprocedure, 'app_private.release_installation_push_tokens(uuid)'::regprocedure)),
  array['true search_path=""', 'true search_path=""'],
  'lock_installation_push_tokens and release_installation_push_tokens are security definer (RLS hides other users'' devices) and pin an empty search_path'
);
select is(tests.function_callers('app_private.normalized_push_token(text, text)'), array['authenticated'],
  'normalized_push_token(): authenticated only (the check constraint devices_push_token_normalized runs it as the writer)');
select is(app_private.normalized_push_token(E' ABCdef\u3000', 'apns'), 'abcdef', 'an APNs token: trimmed and lower-cased');
select is(app_private.normalized_push_token(E' ABCdef\u3000', 'fcm'), 'ABCdef', 'an FCM token: trimmed only (case-sensitive)');

-- ------------------------------------- session_is_live and push_targets
select ok(
  has_function_privilege('authenticated', 'app_private.session_is_live(uuid, uuid)', 'execute')
  and has_function_privilege('service_role', 'app_private.session_is_live(uuid, uuid)', 'execute')
  and not has_function_privilege('anon', 'app_private.session_is_live(uuid, uuid)', 'execute')
  and not has_function_privilege('public', 'app_private.session_is_live(uuid, uuid)', 'execute'),
  'session_is_live(uuid, uuid): EXECUTE for authenticated (GET /v1/devices) and service_role (push_targets)'
);
select is(
  (select prosecdef::text || ' ' || array_to_string(proconfig, ',') from pg_proc where oid = 'app_private.session_standing(uuid, uuid)'::regprocedure),
  'true search_path=""',
  'session_standing, the rule under session_is_live, is security definer (authenticated has no right on auth.sessions) and pins an empty search_path'
);
select ok(
  has_table_privilege('service_role', 'app_private.push_targets', 'select')
  and not has_table_privilege('authenticated', 'app_private.push_targets', 'select')
  and not has_table_privilege('anon', 'app_private.push_targets', 'select')
  and (select reloptions from pg_class where oid = 'app_private.push_targets'::regclass) = array['security_invoker=true'],
  'push_targets: SELECT for service_role only, security invoker'
);
select results_eq(
  $$ select app_private.session_is_live('5e551011-0000-4000-8000-000000000301', tests.get_supabase_uid('device_owner')),
            app_private.session_is_live('5e551011-0000-4000-8000-000000000301', tests.get_supabase_uid('device_other')) $$,
  $$ values (true, false) $$,
  'session_is_live: a live session of its user; not for another user id'
);
select tests.authenticate_as('device_other');
select is(
  app_private.session_is_live('5e551011-0000-4000-8000-000000000301', tests.get_supabase_uid('device_owner')),
  false,
  'called as authenticated, session_is_live answers nothing about another user''s sessions'
);
select tests.clear_authentication();

select * from finish();
rollback;
