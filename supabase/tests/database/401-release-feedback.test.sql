-- app_private.release_feedback (20261122040100_release_feedback.sql): a tester
-- writes feedback only as themselves, only on a release they may see, only
-- from their own device; reads back only their own; a non-tester and anon
-- cannot write or read any; the service role (release manager) reads it all.
begin;
select plan(16);

do $$ begin
  perform tests.create_supabase_user('feedback_tester');
  perform tests.create_supabase_user('feedback_outsider');
end $$;
insert into app_private.tester_groups (id, name) values ('00000000-0000-4000-8000-000000000411', 'Beta testers 401');
insert into app_private.tester_group_members (group_id, user_id)
values ('00000000-0000-4000-8000-000000000411', tests.get_supabase_uid('feedback_tester'));
insert into app_private.tester_group_channels (group_id, channel) values ('00000000-0000-4000-8000-000000000411', 'beta-401');
insert into app_private.releases (id, platform, channel, kind, version, build_number, artifact_path, artifact_sha256, artifact_size)
values ('00000000-0000-4000-8000-0000000004b2', 'android', 'beta-401', 'binary', '2.0.0', 200, 'android/beta/200.apk', repeat('a', 64), 1000);
insert into app_private.devices (id, user_id, installation_id, platform, app_version, build_number, session_id) values
  ('00000000-0000-4000-8000-0000000004d1', tests.get_supabase_uid('feedback_tester'), gen_random_uuid(), 'android', '2.0.0', 200, tests.get_session_id('feedback_tester')),
  ('00000000-0000-4000-8000-0000000004d2', tests.get_supabase_uid('feedback_outsider'), gen_random_uuid(), 'android', '1.0.0', 100, tests.get_session_id('feedback_outsider'));

select policies_are('app_private', 'release_feedback', array[
  'Testers can send feedback on releases they may see',
  'Testers can read their own feedback',
  'Release managers can read feedback'
]);
select table_privs_are('app_private', 'release_feedback', 'anon', array[]::text[], 'anon has no privilege on feedback');
select table_privs_are('app_private', 'release_feedback', 'authenticated', array['SELECT'], 'authenticated: SELECT, and INSERT per column');
select table_privs_are('app_private', 'release_feedback', 'service_role', array['SELECT'], 'the service role reads feedback, never writes it');

-- ------------------------------------------------------------- a tester
select tests.authenticate_as('feedback_tester');
select lives_ok(
  $$ insert into app_private.release_feedback (release_id, user_id, device_id, platform, build_number, body)
     values ('00000000-0000-4000-8000-0000000004b2', auth.uid(), '00000000-0000-4000-8000-0000000004d1', 'android', 200, 'Crashes on the login screen') $$,
  'a tester sends feedback on a beta build, from their device'
);
select throws_ok(
  $$ insert into app_private.release_feedback (release_id, user_id, platform, build_number, body)
     values ('00000000-0000-4000-8000-0000000004b2', tests.get_supabase_uid('feedback_outsider'), 'android', 200, 'spoofed') $$,
  '42501', null, 'a tester cannot write feedback in another user''s name'
);
select throws_ok(
  $$ insert into app_private.release_feedback (release_id, user_id, device_id, platform, build_number, body)
     values ('00000000-0000-4000-8000-0000000004b2', auth.uid(), '00000000-0000-4000-8000-0000000004d2', 'android', 200, 'not my phone') $$,
  '42501', null, 'a tester cannot attach another user''s device'
);
select throws_ok(
  $$ insert into app_private.release_feedback (release_id, user_id, platform, build_number, body)
     values ('00000000-0000-4000-8000-0000000004b2', auth.uid(), 'android', 200, '') $$,
  '23514', null, 'empty feedback is refused'
);
select results_eq($$ select body from app_private.release_feedback $$, $$ values ('Crashes on the login screen'::text) $$,
  'a tester reads back their own feedback');
select tests.clear_authentication();

-- --------------------------------------------------------- a non-tester
select tests.authenticate_as('feedback_outsider');
select throws_ok(
  $$ insert into app_private.release_feedback (release_id, user_id, platform, build_number, body)
     values ('00000000-0000-4000-8000-0000000004b2', auth.uid(), 'android', 100, 'I found your beta') $$,
  '42501', null, 'a non-tester cannot send feedback on a release they may not see'
);
select is_empty($$ select 1 from app_private.release_feedback $$, 'a non-tester reads no one''s feedback');
select tests.clear_authentication();

-- ------------------------------------------------------------------ anon
select tests.authenticate_as_anon();
select throws_ok($$ select * from app_private.release_feedback $$, '42501', null, 'anon cannot read feedback');
select throws_ok(
  $$ insert into app_private.release_feedback (release_id, user_id, platform, build_number, body)
     values ('00000000-0000-4000-8000-0000000004b2', gen_random_uuid(), 'android', 1, 'x') $$,
  '42501', null, 'anon cannot send feedback'
);
select tests.clear_authentication();

-- ---------------------------------------------------------- service role
select tests.authenticate_as_service_role();
select results_eq(
  $$ select user_id, platform, build_number from app_private.release_feedback where release_id = '00000000-0000-4000-8000-0000000004b2' $$,
  $$ values (tests.get_supabase_uid('feedback_tester'), 'android'::text, 200) $$,
  'the release manager reads every tester''s feedback with its build and platform'
);
select throws_ok($$ update app_private.release_feedback set body = 'edited' $$, '42501', null, 'the service role cannot edit feedback');
select throws_ok($$ delete from app_private.release_feedback $$, '42501', null, 'the service role cannot delete feedback');
select tests.clear_authentication();

select * from finish();
rollback;
