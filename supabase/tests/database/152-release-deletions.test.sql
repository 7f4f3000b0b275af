-- app_private.release_deletions (20261128008900_ota_deletions_recorded.sql): a deleted OTA
-- release leaves its id, platform, channel, runtime version, created_at and the time of its
-- deletion; nothing else writes it, and callers read it as they read the releases (channels
-- they may receive). app_private.ota_update_hidden answers only whether ids name an OTA update
-- that exists, or was deleted, on a channel the caller may not receive.
-- 20261128009200_ota_deletions_of_restored_and_truncated_releases.sql: a release restored with
-- its id forgets its deletion; TRUNCATE records the deletions (and past rollbacks) a DELETE would.
begin;
select plan(44);

do $$ begin
  perform tests.create_supabase_user('deletion_tester');
  perform tests.create_supabase_user('deletion_outsider');
end $$;

insert into app_private.tester_groups (id, name, everyone) values
  ('00000000-0000-4000-8000-000000001521', 'Beta testers 152', false),
  ('00000000-0000-4000-8000-000000001522', 'Everyone 152', true);
insert into app_private.tester_group_members (group_id, user_id)
values ('00000000-0000-4000-8000-000000001521', tests.get_supabase_uid('deletion_tester'));
insert into app_private.tester_group_channels (group_id, channel) values
  ('00000000-0000-4000-8000-000000001521', 'beta-152'),
  ('00000000-0000-4000-8000-000000001522', 'prod-152');
insert into app_private.releases (id, platform, channel, kind, version, build_number, runtime_version, artifact_path, artifact_sha256, artifact_size, status, created_at) values
  ('00000000-0000-4000-8000-0000000015a1', 'ios', 'prod-152', 'ota', '1.0.1', 1, '1.0', 'ota/152/1.js', repeat('a', 64), 10, 'active', '2020-01-01 00:00:00+00'),
  ('00000000-0000-4000-8000-0000000015a2', 'ios', 'prod-152', 'ota', '1.0.2', 2, '1.0', 'ota/152/2.js', repeat('a', 64), 10, 'rolled_back', '2020-01-02 00:00:00+00'),
  ('00000000-0000-4000-8000-0000000015b1', 'ios', 'beta-152', 'ota', '2.0.1', 1, '1.0', 'ota/152/b1.js', repeat('a', 64), 10, 'active', '2020-01-03 00:00:00+00'),
  ('00000000-0000-4000-8000-0000000015b2', 'ios', 'beta-152', 'ota', '2.0.2', 2, '1.0', 'ota/152/b2.js', repeat('a', 64), 10, 'active', '2020-01-04 00:00:00+00'),
  ('00000000-0000-4000-8000-0000000015c1', 'ios', 'beta-152', 'binary', '1.0.0', 100, '1.0', 'ios/152/100.ipa', repeat('a', 64), 10, 'active', '2020-01-05 00:00:00+00');

-- One range per id, as the api function passes a device's update id (releaseIdRanges).
create function pg_temp.hidden(p_platform text, p_runtime_version text, p_id uuid) returns boolean
language sql as $$ select app_private.ota_update_hidden(p_platform, p_runtime_version, array[p_id], array[p_id]) $$;

-- ------------------------------------------------------------ structure
select policies_are('app_private', 'release_deletions', array['Callers can read deletions of channels they may receive']);
select policy_roles_are('app_private', 'release_deletions', 'Callers can read deletions of channels they may receive', array['anon', 'authenticated'], 'the read policy is for anon and authenticated');
select policy_cmd_is('app_private', 'release_deletions', 'Callers can read deletions of channels they may receive', 'select', 'the read policy is for SELECT');
select table_privs_are('app_private', 'release_deletions', 'anon', array['SELECT'], 'anon may only read deletions');
select table_privs_are('app_private', 'release_deletions', 'authenticated', array['SELECT'], 'authenticated may only read deletions');
select table_privs_are('app_private', 'release_deletions', 'service_role', array[]::text[],
  'the release manager has nothing on it (it does not delete releases)');
select ok(
  not has_function_privilege('anon', 'app_private.record_ota_deletion()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.record_ota_deletion()', 'execute')
  and not has_function_privilege('service_role', 'app_private.record_ota_deletion()', 'execute'),
  'record_ota_deletion(): no API role may execute it (trigger only)'
);
select is(
  (select array[prosecdef::text, array_to_string(proconfig, ',')] from pg_proc where oid = 'app_private.record_ota_deletion()'::regprocedure),
  array['false', 'search_path=""'],
  'record_ota_deletion is security invoker (the owner deletes releases) with an empty search_path'
);
select ok(
  has_function_privilege('anon', 'app_private.ota_update_hidden(text, text, uuid[], uuid[])', 'execute')
  and has_function_privilege('authenticated', 'app_private.ota_update_hidden(text, text, uuid[], uuid[])', 'execute')
  and not has_function_privilege('service_role', 'app_private.ota_update_hidden(text, text, uuid[], uuid[])', 'execute')
  and not has_function_privilege('public', 'app_private.ota_update_hidden(text, text, uuid[], uuid[])', 'execute'),
  'ota_update_hidden: executed by the callers of the Expo manifest endpoint (anon, authenticated) only'
);
select is(
  (select array[prosecdef::text, provolatile::text, array_to_string(proconfig, ',')] from pg_proc where oid = 'app_private.ota_update_hidden(text, text, uuid[], uuid[])'::regprocedure),
  array['true', 's', 'search_path=""'],
  'ota_update_hidden is a stable security definer with an empty search_path'
);

-- ------------------------------------------- written by deleting releases
select tests.authenticate_as_service_role();
select throws_ok($$ delete from app_private.releases where id = '00000000-0000-4000-8000-0000000015a1' $$, '42501', null,
  'the release manager does not delete releases (so records no deletion)');
select tests.clear_authentication();

delete from app_private.releases where id in ('00000000-0000-4000-8000-0000000015a2', '00000000-0000-4000-8000-0000000015c1');
select results_eq(
  $$ select release_id, platform, channel, runtime_version, created_at, deleted_at from app_private.release_deletions where channel like '%-152' $$,
  $$ values ('00000000-0000-4000-8000-0000000015a2'::uuid, 'ios'::text, 'prod-152'::text, '1.0'::text, '2020-01-02 00:00:00+00'::timestamptz, now()) $$,
  'a deleted OTA update leaves its id, platform, channel, runtime version, created_at and its deletion''s time; a binary nothing'
);
select isnt_empty($$ select 1 from app_private.release_past_rollbacks where channel = 'prod-152' and platform = 'ios' and runtime_version = '1.0' $$,
  'a rolled-back update deleted leaves the time of its rollback too (release_past_rollbacks)');

-- Restored with its id (from a backup, say): it exists again, so it is no longer deleted; deleted
-- again, its new deletion is recorded. Another deletion stays.
insert into app_private.releases (id, platform, channel, kind, version, build_number, runtime_version, artifact_path, artifact_sha256, artifact_size, created_at)
values ('00000000-0000-4000-8000-0000000015a3', 'ios', 'prod-152', 'ota', '1.0.3', 3, '1.0', 'ota/152/3.js', repeat('a', 64), 10, '2020-01-02 00:00:01+00');
delete from app_private.releases where id = '00000000-0000-4000-8000-0000000015a3';
insert into app_private.releases (id, platform, channel, kind, version, build_number, runtime_version, artifact_path, artifact_sha256, artifact_size, created_at)
values ('00000000-0000-4000-8000-0000000015a2', 'ios', 'prod-152', 'ota', '1.0.2', 2, '1.0', 'ota/152/2.js', repeat('a', 64), 10, '2020-01-02 00:00:00+00');
select results_eq($$ select release_id from app_private.release_deletions where channel = 'prod-152' $$,
  $$ values ('00000000-0000-4000-8000-0000000015a3'::uuid) $$,
  'restored with its id, a release''s deletion is forgotten (it exists again); no other deletion');
delete from app_private.releases where id = '00000000-0000-4000-8000-0000000015a2';
select results_eq(
  $$ select deleted_at from app_private.release_deletions where release_id = '00000000-0000-4000-8000-0000000015a2' $$,
  $$ values (now()) $$,
  'deleted again, a release has one row: its latest deletion'
);
delete from app_private.releases where id = '00000000-0000-4000-8000-0000000015b2';

-- ------------------------------------------------------------- who reads it
select tests.authenticate_as('deletion_tester');
select results_eq($$ select distinct channel from app_private.release_deletions where channel like '%-152' order by channel $$,
  $$ values ('beta-152'::text), ('prod-152'::text) $$, 'a tester reads the deletions of their channels');
select throws_ok($$ insert into app_private.release_deletions values (gen_random_uuid(), 'ios', 'beta-152', '1.0', now(), now()) $$, '42501', null,
  'a tester cannot record one');
select tests.clear_authentication();

select tests.authenticate_as('deletion_outsider');
select results_eq($$ select distinct channel from app_private.release_deletions where channel like '%-152' $$,
  $$ values ('prod-152'::text) $$, 'a non-tester reads only the everyone channel''s');
select tests.clear_authentication();

select tests.authenticate_as_anon();
select results_eq($$ select distinct channel from app_private.release_deletions where channel like '%-152' $$,
  $$ values ('prod-152'::text) $$, 'anon reads only the everyone channel''s');
select throws_ok($$ delete from app_private.release_deletions $$, '42501', null, 'anon cannot forget one');
select tests.clear_authentication();

select tests.authenticate_as_service_role();
select throws_ok($$ select * from app_private.release_deletions $$, '42501', null,
  'the service role does not read it (the manifest reads it as the caller)');
select throws_ok($$ update app_private.release_deletions set deleted_at = now() $$, '42501', null,
  'the service role cannot move a deletion''s time');
select throws_ok($$ insert into app_private.release_deletions values (gen_random_uuid(), 'ios', 'prod-152', '1.0', now(), now()) $$, '42501', null,
  'the service role cannot record one');
select tests.clear_authentication();

-- ------------------------------------------------- ota_update_hidden
-- b1: a beta update that exists; b2: one deleted; a1: an everyone update; c1 was a binary.
select tests.authenticate_as('deletion_outsider');
select ok(pg_temp.hidden('ios', '1.0', '00000000-0000-4000-8000-0000000015b1'), 'an outsider: a beta update that exists is hidden from them');
select ok(pg_temp.hidden('ios', '1.0', '00000000-0000-4000-8000-0000000015b2'), 'an outsider: a deleted beta update is hidden from them');
select ok(not pg_temp.hidden('ios', '1.0', '00000000-0000-4000-8000-0000000015a1'), 'an everyone update is not hidden');
select ok(not pg_temp.hidden('ios', '1.0', '00000000-0000-4000-8000-0000000015a2'), 'a deleted everyone update is not hidden (its deletion is read)');
select ok(not pg_temp.hidden('ios', '1.0', gen_random_uuid()), 'an id the server never had is not hidden');
select ok(not pg_temp.hidden('android', '1.0', '00000000-0000-4000-8000-0000000015b1')
  and not pg_temp.hidden('ios', '2.0', '00000000-0000-4000-8000-0000000015b1'),
  'only of the platform and runtime version asked about');
select ok(not pg_temp.hidden('ios', '1.0', '00000000-0000-4000-8000-0000000015c1'), 'not a binary');
select ok(app_private.ota_update_hidden('ios', '1.0', array['00000000-0000-4000-8000-000000001500'::uuid, gen_random_uuid()],
                                        array['00000000-0000-4000-8000-0000000015b1'::uuid, gen_random_uuid()]),
  'any of the ranges');
select tests.clear_authentication();

select tests.authenticate_as('deletion_tester');
select ok(not pg_temp.hidden('ios', '1.0', '00000000-0000-4000-8000-0000000015b1') and not pg_temp.hidden('ios', '1.0', '00000000-0000-4000-8000-0000000015b2'),
  'a tester: their channel''s updates, existing or deleted, are not hidden');
select tests.clear_authentication();

select tests.authenticate_as_anon();
select ok(pg_temp.hidden('ios', '1.0', '00000000-0000-4000-8000-0000000015b1') and not pg_temp.hidden('ios', '1.0', '00000000-0000-4000-8000-0000000015a1'),
  'anon: a beta update is hidden, an everyone update is not');
select tests.clear_authentication();

select tests.authenticate_as_service_role();
select throws_ok($$ select app_private.ota_update_hidden('ios', '1.0', array[gen_random_uuid()], array[gen_random_uuid()]) $$, '42501', null,
  'the service role does not run it');
select tests.clear_authentication();

-- ------------------------------------------------------ TRUNCATE
-- TRUNCATE fires no row trigger: a statement trigger before it records what deleting every row would.
select ok(
  (select count(*) = 2 from pg_trigger t
    where t.tgrelid = 'app_private.releases'::regclass and not t.tgisinternal
      and t.tgtype::int & 32 <> 0 and t.tgtype::int & 2 <> 0 and t.tgtype::int & 1 = 0
      and t.tgfoid in ('app_private.record_ota_deletion()'::regprocedure, 'app_private.remember_past_rollback()'::regprocedure)),
  'record_ota_deletion and remember_past_rollback also run before TRUNCATE of releases, once per statement');
select ok(
  not has_function_privilege('anon', 'app_private.forget_restored_release_deletion()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.forget_restored_release_deletion()', 'execute')
  and not has_function_privilege('service_role', 'app_private.forget_restored_release_deletion()', 'execute'),
  'forget_restored_release_deletion(): no API role may execute it (trigger only)'
);
select is(
  (select array[prosecdef::text, array_to_string(proconfig, ',')] from pg_proc where oid = 'app_private.forget_restored_release_deletion()'::regprocedure),
  array['true', 'search_path=""'],
  'forget_restored_release_deletion is a security definer (the release manager publishes) with an empty search_path'
);

-- Two rolled-back updates of one runtime version (one row for it), an active one, a binary, and feedback (a
-- referencing table: TRUNCATE of releases needs CASCADE).
insert into app_private.releases (id, platform, channel, kind, version, build_number, runtime_version, artifact_path, artifact_sha256, artifact_size, status, created_at) values
  ('00000000-0000-4000-8000-0000000015d1', 'android', 'prod-152', 'ota', '3.0.1', 1, '3.0', 'ota/152/d1.js', repeat('a', 64), 10, 'rolled_back', '2020-02-01 00:00:00+00'),
  ('00000000-0000-4000-8000-0000000015d2', 'android', 'prod-152', 'ota', '3.0.2', 2, '3.0', 'ota/152/d2.js', repeat('a', 64), 10, 'rolled_back', '2020-02-02 00:00:00+00'),
  ('00000000-0000-4000-8000-0000000015d3', 'android', 'prod-152', 'ota', '3.0.3', 3, '3.0', 'ota/152/d3.js', repeat('a', 64), 10, 'active', '2020-02-03 00:00:00+00'),
  ('00000000-0000-4000-8000-0000000015d4', 'android', 'prod-152', 'binary', '3.0.0', 300, null, 'android/152/300.apk', repeat('a', 64), 10, 'active', '2020-02-04 00:00:00+00');
insert into app_private.release_feedback (release_id, user_id, platform, build_number, body)
values ('00000000-0000-4000-8000-0000000015d3', tests.get_supabase_uid('deletion_tester'), 'android', 1, 'tidesync_test 152');

select throws_ok($$ truncate app_private.releases $$, '0A000', null, 'TRUNCATE of releases without CASCADE is refused (feedback refers to them)');
truncate app_private.releases cascade;
select results_eq(
  $$ select release_id, platform, channel, runtime_version, created_at, deleted_at from app_private.release_deletions
      where release_id::text like '00000000-0000-4000-8000-0000000015d_' order by release_id $$,
  $$ values ('00000000-0000-4000-8000-0000000015d1'::uuid, 'android'::text, 'prod-152'::text, '3.0'::text, '2020-02-01 00:00:00+00'::timestamptz, now()),
            ('00000000-0000-4000-8000-0000000015d2'::uuid, 'android'::text, 'prod-152'::text, '3.0'::text, '2020-02-02 00:00:00+00'::timestamptz, now()),
            ('00000000-0000-4000-8000-0000000015d3'::uuid, 'android'::text, 'prod-152'::text, '3.0'::text, '2020-02-03 00:00:00+00'::timestamptz, now()) $$,
  'TRUNCATE ... CASCADE records each OTA update it deletes, as a DELETE does; a binary nothing'
);
select results_eq(
  $$ select release_id from app_private.release_deletions where release_id in ('00000000-0000-4000-8000-0000000015a1', '00000000-0000-4000-8000-0000000015b1') order by 1 $$,
  $$ values ('00000000-0000-4000-8000-0000000015a1'::uuid), ('00000000-0000-4000-8000-0000000015b1'::uuid) $$,
  'every OTA update of every channel it deletes'
);
select results_eq(
  $$ select rolled_back_at from app_private.release_past_rollbacks where channel = 'prod-152' and platform = 'android' and runtime_version = '3.0' $$,
  $$ values (now()) $$,
  'TRUNCATE keeps the latest rollback of each runtime version whose rolled-back updates it deletes (release_past_rollbacks)'
);
select is_empty($$ select 1 from app_private.releases $$, 'the releases are gone');
select is_empty($$ select 1 from app_private.release_feedback $$, 'and, with CASCADE, their feedback');

-- Restored after a TRUNCATE: forgotten as after a delete.
insert into app_private.releases (id, platform, channel, kind, version, build_number, runtime_version, artifact_path, artifact_sha256, artifact_size, created_at)
values ('00000000-0000-4000-8000-0000000015d3', 'android', 'prod-152', 'ota', '3.0.3', 3, '3.0', 'ota/152/d3.js', repeat('a', 64), 10, '2020-02-03 00:00:00+00');
select is_empty($$ select 1 from app_private.release_deletions where release_id = '00000000-0000-4000-8000-0000000015d3' $$,
  'a truncated release restored with its id is no longer deleted');

select * from finish();
rollback;
