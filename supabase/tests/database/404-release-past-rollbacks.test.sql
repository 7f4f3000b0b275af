-- app_private.release_past_rollbacks (20261128002300_ota_rollbacks_outlive_their_release.sql):
-- an OTA release that leaves rolled_back (made active or paused again, or
-- deleted) leaves the time of its latest rollback per (platform, channel,
-- runtime version), the newest one kept; nothing else writes it, and callers
-- read it as they read the releases (channels they may receive).
begin;
select plan(21);

do $$ begin
  perform tests.create_supabase_user('rollback_tester');
  perform tests.create_supabase_user('rollback_outsider');
end $$;

insert into app_private.tester_groups (id, name, everyone) values
  ('00000000-0000-4000-8000-000000000441', 'Beta testers 404', false),
  ('00000000-0000-4000-8000-000000000442', 'Everyone 404', true);
insert into app_private.tester_group_members (group_id, user_id)
values ('00000000-0000-4000-8000-000000000441', tests.get_supabase_uid('rollback_tester'));
insert into app_private.tester_group_channels (group_id, channel) values
  ('00000000-0000-4000-8000-000000000441', 'beta-404'),
  ('00000000-0000-4000-8000-000000000442', 'prod-404');
insert into app_private.releases (id, platform, channel, kind, version, build_number, runtime_version, artifact_path, artifact_sha256, artifact_size, status) values
  ('00000000-0000-4000-8000-0000000004a1', 'ios', 'prod-404', 'ota', '1.0.1', 1, '1.0', 'ota/404/1.js', repeat('a', 64), 10, 'active'),
  ('00000000-0000-4000-8000-0000000004a2', 'ios', 'prod-404', 'ota', '1.0.2', 2, '1.0', 'ota/404/2.js', repeat('a', 64), 10, 'active'),
  ('00000000-0000-4000-8000-0000000004a3', 'android', 'prod-404', 'ota', '1.0.1', 1, '1.0', 'ota/404/a1.js', repeat('a', 64), 10, 'active'),
  ('00000000-0000-4000-8000-0000000004b1', 'ios', 'beta-404', 'ota', '2.0.1', 1, '2.0', 'ota/404/b1.js', repeat('a', 64), 10, 'active'),
  ('00000000-0000-4000-8000-0000000004c1', 'ios', 'prod-404', 'binary', '1.0.0', 100, null, 'ios/404/100.ipa', repeat('a', 64), 10, 'active');

-- ------------------------------------------------------------ structure
select policies_are('app_private', 'release_past_rollbacks', array['Callers can read past rollbacks of channels they may receive']);
select table_privs_are('app_private', 'release_past_rollbacks', 'anon', array['SELECT'], 'anon may only read past rollbacks');
select table_privs_are('app_private', 'release_past_rollbacks', 'authenticated', array['SELECT'], 'authenticated may only read past rollbacks');
select table_privs_are('app_private', 'release_past_rollbacks', 'service_role', array[]::text[],
  'the release manager writes it only by changing releases');
select ok(
  not has_function_privilege('anon', 'app_private.remember_past_rollback()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.remember_past_rollback()', 'execute')
  and not has_function_privilege('service_role', 'app_private.remember_past_rollback()', 'execute'),
  'remember_past_rollback(): no API role may execute it (trigger only)'
);
select is(
  (select array[prosecdef::text, array_to_string(proconfig, ',')] from pg_proc where oid = 'app_private.remember_past_rollback()'::regprocedure),
  array['true', 'search_path=""'],
  'remember_past_rollback is security definer with an empty search_path'
);

-- ------------------------------------------- written by changing releases
select tests.authenticate_as_service_role();
update app_private.releases set status = 'rolled_back' where id in ('00000000-0000-4000-8000-0000000004a1', '00000000-0000-4000-8000-0000000004c1');
update app_private.releases set rollout_percentage = 50 where id = '00000000-0000-4000-8000-0000000004a1';
select tests.clear_authentication();
select is_empty($$ select 1 from app_private.release_past_rollbacks where channel like '%-404' $$,
  'a rollback, and a change while rolled back, write nothing: the releases show them');

-- The release's updated_at while rolled back, moved into the past to tell it from the re-activation's.
alter table app_private.releases disable trigger releases_10_maintain;
update app_private.releases set updated_at = '2020-01-01 00:00:00+00' where id = '00000000-0000-4000-8000-0000000004a1';
alter table app_private.releases enable trigger releases_10_maintain;
select tests.authenticate_as_service_role();
update app_private.releases set status = 'active' where id = '00000000-0000-4000-8000-0000000004a1';
update app_private.releases set status = 'active' where id = '00000000-0000-4000-8000-0000000004c1';
select tests.clear_authentication();
select results_eq(
  $$ select platform, channel, runtime_version, rolled_back_at from app_private.release_past_rollbacks where channel like '%-404' $$,
  $$ values ('ios'::text, 'prod-404'::text, '1.0'::text, '2020-01-01 00:00:00+00'::timestamptz) $$,
  'made active again, an OTA update leaves the time of its rollback (a binary leaves nothing)'
);

-- An older rollback of the same key, made paused again: the newer time stays.
alter table app_private.releases disable trigger releases_10_maintain;
update app_private.releases set status = 'rolled_back', updated_at = '2019-06-01 00:00:00+00' where id = '00000000-0000-4000-8000-0000000004a2';
alter table app_private.releases enable trigger releases_10_maintain;
select tests.authenticate_as_service_role();
update app_private.releases set status = 'paused' where id = '00000000-0000-4000-8000-0000000004a2';
select tests.clear_authentication();
select results_eq(
  $$ select rolled_back_at from app_private.release_past_rollbacks where channel = 'prod-404' and platform = 'ios' $$,
  $$ values ('2020-01-01 00:00:00+00'::timestamptz) $$,
  'an older rollback undone later does not move the time back'
);

-- A newer one, deleted by the owner: its time replaces the older.
update app_private.releases set status = 'rolled_back' where id = '00000000-0000-4000-8000-0000000004a2';
delete from app_private.releases where id = '00000000-0000-4000-8000-0000000004a2';
select results_eq(
  $$ select rolled_back_at from app_private.release_past_rollbacks where channel = 'prod-404' and platform = 'ios' $$,
  $$ values (now()) $$,
  'a rolled-back update deleted leaves the time of its rollback, the newer one'
);

-- Deleting an update that is not rolled back leaves nothing; each (platform, channel, runtime version) has its own row.
delete from app_private.releases where id = '00000000-0000-4000-8000-0000000004a3';
select is_empty($$ select 1 from app_private.release_past_rollbacks where channel = 'prod-404' and platform = 'android' $$,
  'deleting an update that is not rolled back leaves nothing');
update app_private.releases set status = 'rolled_back' where id = '00000000-0000-4000-8000-0000000004b1';
update app_private.releases set status = 'active' where id = '00000000-0000-4000-8000-0000000004b1';
select results_eq(
  $$ select channel, runtime_version from app_private.release_past_rollbacks where channel like '%-404' order by channel $$,
  $$ values ('beta-404'::text, '2.0'::text), ('prod-404'::text, '1.0'::text) $$,
  'one row per (platform, channel, runtime version)'
);

-- ------------------------------------------------------------- who reads it
select tests.authenticate_as('rollback_tester');
select results_eq($$ select channel from app_private.release_past_rollbacks where channel like '%-404' order by channel $$,
  $$ values ('beta-404'::text), ('prod-404'::text) $$, 'a tester reads the past rollbacks of their channels');
select throws_ok($$ insert into app_private.release_past_rollbacks values ('ios', 'beta-404', '9', now()) $$, '42501', null,
  'a tester cannot write one');
select tests.clear_authentication();

select tests.authenticate_as('rollback_outsider');
select results_eq($$ select channel from app_private.release_past_rollbacks where channel like '%-404' $$,
  $$ values ('prod-404'::text) $$, 'a non-tester reads only the everyone channel''s');
select tests.clear_authentication();

select tests.authenticate_as_anon();
select results_eq($$ select channel from app_private.release_past_rollbacks where channel like '%-404' $$,
  $$ values ('prod-404'::text) $$, 'anon reads only the everyone channel''s');
select throws_ok($$ delete from app_private.release_past_rollbacks $$, '42501', null, 'anon cannot delete one');
select tests.clear_authentication();

select tests.authenticate_as_service_role();
select throws_ok($$ select * from app_private.release_past_rollbacks $$, '42501', null,
  'the service role does not read it (the manifest reads it as the caller)');
select throws_ok($$ update app_private.release_past_rollbacks set rolled_back_at = now() $$, '42501', null,
  'the service role cannot move a rollback''s time');
select throws_ok($$ insert into app_private.release_past_rollbacks values ('ios', 'prod-404', '9', now()) $$, '42501', null,
  'the service role cannot write one');
-- Through releases it still can: its rollback undone (the trigger writes as the table's owner).
update app_private.releases set status = 'rolled_back' where id = '00000000-0000-4000-8000-0000000004a1';
select lives_ok($$ update app_private.releases set status = 'paused' where id = '00000000-0000-4000-8000-0000000004a1' $$,
  'the service role undoes a rollback (the trigger writes for it)');
select tests.clear_authentication();

select * from finish();
rollback;
