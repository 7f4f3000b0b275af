-- Account deletion: who may call what, the tables' RLS and grants, the
-- audit trail's shape (no personal data) and append-only rule, the purge's
-- idempotence and locking, and what a request does to the other sessions.
begin;
select plan(32);

select from tests.create_supabase_user('deletion_alice');
select from tests.create_supabase_user('deletion_bob');

-- ------------------------------------------------------------ functions
select ok(not has_function_privilege('anon', 'app_private.run_account_deletions(timestamptz, integer)', 'EXECUTE'), 'anon cannot run the purge');
select ok(not has_function_privilege('authenticated', 'app_private.run_account_deletions(timestamptz, integer)', 'EXECUTE'), 'authenticated cannot run the purge');
select ok(has_function_privilege('service_role', 'app_private.run_account_deletions(timestamptz, integer)', 'EXECUTE'), 'service_role (operators) may run the purge');
select ok(not has_function_privilege('public', 'app_private.run_account_deletions(timestamptz, integer)', 'EXECUTE'), 'PUBLIC cannot run the purge');
select ok(not has_function_privilege('anon', 'app_private.hand_over_lists(uuid)', 'EXECUTE')
      and not has_function_privilege('authenticated', 'app_private.hand_over_lists(uuid)', 'EXECUTE')
      and not has_function_privilege('service_role', 'app_private.hand_over_lists(uuid)', 'EXECUTE'), 'no API role may hand over lists');
select ok(not has_function_privilege('anon', 'app_private.before_account_purge(uuid)', 'EXECUTE')
      and not has_function_privilege('authenticated', 'app_private.before_account_purge(uuid)', 'EXECUTE')
      and not has_function_privilege('service_role', 'app_private.before_account_purge(uuid)', 'EXECUTE'), 'no API role may call the purge hook');
select ok(has_function_privilege('authenticated', 'app_private.request_account_deletion(integer)', 'EXECUTE')
      and not has_function_privilege('anon', 'app_private.request_account_deletion(integer)', 'EXECUTE')
      and not has_function_privilege('service_role', 'app_private.request_account_deletion(integer)', 'EXECUTE'), 'only authenticated may request a deletion');
select ok(has_function_privilege('authenticated', 'app_private.cancel_account_deletion()', 'EXECUTE')
      and not has_function_privilege('anon', 'app_private.cancel_account_deletion()', 'EXECUTE'), 'only authenticated may cancel a deletion');
select is((select array_agg(p.oid::regprocedure::text order by p.oid::regprocedure::text) from pg_proc p
            where p.oid in ('app_private.run_account_deletions(timestamptz, integer)'::regprocedure, 'app_private.hand_over_lists(uuid)'::regprocedure,
                            'app_private.before_account_purge(uuid)'::regprocedure, 'app_private.request_account_deletion(integer)'::regprocedure,
                            'app_private.cancel_account_deletion()'::regprocedure)
              and p.prosecdef and p.proconfig = array['search_path=""']),
  array['app_private.before_account_purge(uuid)', 'app_private.cancel_account_deletion()', 'app_private.hand_over_lists(uuid)',
        'app_private.request_account_deletion(integer)', 'app_private.run_account_deletions(timestamp with time zone,integer)'],
  'every deletion function is security definer with an empty search_path');
select is((select array_agg(array_length(regexp_split_to_array(lower(prosrc), 'for update skip locked'), 1) - 1 order by proname) from pg_proc
            where oid in ('app_private.begin_purge_attempt(timestamptz, timestamptz)'::regprocedure, 'app_private.purge_account(uuid, timestamptz)'::regprocedure)),
  array[1, 1],
  'the purge takes due requests with FOR UPDATE SKIP LOCKED, and locks the one it carries out the same way (two runs never take the same one; one function takes them for both forms, migrations 20261128003300, 20261128004000)');
select ok((select prosrc ~ 'perform app_private\.lock_user_devices\(v_caller\);\s+delete from app_private\.account_deletion_requests' from pg_proc
            where oid = 'app_private.cancel_account_deletion()'::regprocedure)
      and (select prosrc ~ 'perform app_private\.lock_user_devices\(v_caller\);\s+.*insert into app_private\.account_deletion_requests' from pg_proc
            where oid = 'app_private.request_account_deletion(integer)'::regprocedure),
  'request and cancel take the caller''s device lock before they write the request (in turn with session starts; tests/integration/device-session-races.test.ts)');

-- ------------------------------------------------------------ tables
select policies_are('app_private', 'account_deletion_requests', array['Users can read their own deletion request']);
select policies_are('app_private', 'account_deletion_audit', array['The service role can read the deletion audit']);
select table_privs_are('app_private', 'account_deletion_requests', 'authenticated', array['SELECT'], 'users only read requests (writes go through the functions)');
select table_privs_are('app_private', 'account_deletion_requests', 'anon', '{}'::text[], 'anon has nothing on requests');
select table_privs_are('app_private', 'account_deletion_audit', 'authenticated', '{}'::text[], 'users cannot read the audit');
select table_privs_are('app_private', 'account_deletion_audit', 'anon', '{}'::text[], 'anon cannot read the audit');
select columns_are('app_private', 'account_deletion_audit', array['id', 'request_id', 'event', 'occurred_at', 'scheduled_for', 'lists_handed_over'],
  'the audit holds no user id, email or name: only the random request id, the event, times and a count');

-- ------------------------------------------------------------ a request
insert into auth.sessions (id, user_id, aal, created_at, updated_at)
values ('c5000000-0000-4000-8000-000000000001', tests.get_supabase_uid('deletion_alice'), 'aal1', now() + interval '1 second', now());
insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, push_token, push_provider, session_id, last_seen_at) values
  (tests.get_supabase_uid('deletion_alice'), 'c5000000-0000-4000-8000-000000000011', 'ios', '1.0.0', 1, 'apns-here', 'apns', tests.get_session_id('deletion_alice'), now()),
  (tests.get_supabase_uid('deletion_alice'), 'c5000000-0000-4000-8000-000000000012', 'android', '1.0.0', 1, 'fcm-there', 'fcm', 'c5000000-0000-4000-8000-000000000001', now());

select tests.authenticate_as('deletion_alice');
select results_eq($$ select scheduled_for - requested_at from app_private.request_account_deletion(7) $$, $$ values (interval '7 days') $$,
  'a request is scheduled the grace period after it was made');
select results_eq($$ select scheduled_for - requested_at from app_private.request_account_deletion(30) $$, $$ values (interval '7 days') $$,
  'asking again keeps the first date');
select is((select count(*)::int from app_private.account_deletion_requests), 1, 'the user sees their own request');
select throws_ok($$ select app_private.run_account_deletions() $$, '42501', null, 'a signed-in user cannot run the purge');
select tests.authenticate_as('deletion_bob');
select is((select count(*)::int from app_private.account_deletion_requests), 0, 'another user does not see it');
select tests.clear_authentication();

select results_eq($$ select id from auth.sessions where user_id = tests.get_supabase_uid('deletion_alice') $$,
  $$ values (tests.get_session_id('deletion_alice')) $$, 'every other session of the user is signed out; the calling one stays');
select is((select count(*)::int from app_private.devices where user_id = tests.get_supabase_uid('deletion_alice') and push_token is not null), 0,
  'no device of the user keeps a push token');
update app_private.devices set push_token = 'apns-again', push_provider = 'apns' where installation_id = 'c5000000-0000-4000-8000-000000000011';
select is((select push_token from app_private.devices where installation_id = 'c5000000-0000-4000-8000-000000000011'), null,
  'while the deletion is pending, no push token can be registered again');
select is((select count(*)::int from app_private.account_deletion_audit a join app_private.account_deletion_requests r using (request_id)
            where a.event = 'requested'), 1, 'the request is in the audit trail once');
select throws_ok($$ delete from app_private.account_deletion_audit $$, '42501', null, 'the audit trail is append-only, even for its owner');

-- ------------------------------------------------------------ purge timing and idempotence
select results_eq($$ select users_deleted from app_private.run_account_deletions(now() + interval '6 days') $$, $$ values (0) $$,
  'before the grace period ends the purge deletes nothing');
select is((select count(*)::int from auth.users where id = tests.get_supabase_uid('deletion_alice')), 1, 'the account is still there');
select results_eq($$ select users_deleted from app_private.run_account_deletions(now() + interval '7 days') $$, $$ values (1) $$,
  'once it ends, the purge deletes the account');
select results_eq($$ select users_deleted from app_private.run_account_deletions(now() + interval '7 days') $$, $$ values (0) $$,
  'a second purge is a no-op');

select * from finish();
rollback;
