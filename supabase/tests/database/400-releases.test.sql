-- Test-build distribution (20261122040000_test_builds.sql): RLS and the exact
-- policies of every table; what a tester, a non-tester, anon and the service
-- role (the release manager) can see and do; a channel the caller may not
-- receive looks exactly like a channel without releases; a published release
-- keeps its build (only status and rollout change); EXECUTE privileges.
-- The suite's database holds the sample data too (an `everyone` production
-- channel), so assertions about visibility look at this file's channels only.
begin;
select plan(69);

do $$ begin
  perform tests.create_supabase_user('release_tester');
  perform tests.create_supabase_user('release_outsider');
end $$;

-- As the release manager would set things up (the connecting superuser here).
insert into app_private.tester_groups (id, name, everyone) values
  ('00000000-0000-4000-8000-000000000401', 'Beta testers 400', false),
  ('00000000-0000-4000-8000-000000000402', 'Everyone 400', true);
insert into app_private.tester_group_members (group_id, user_id)
values ('00000000-0000-4000-8000-000000000401', tests.get_supabase_uid('release_tester'));
insert into app_private.tester_group_channels (group_id, channel) values
  ('00000000-0000-4000-8000-000000000401', 'beta-400'),
  ('00000000-0000-4000-8000-000000000402', 'prod-400');
insert into app_private.releases (id, platform, channel, kind, version, build_number, artifact_path, artifact_sha256, artifact_size) values
  ('00000000-0000-4000-8000-0000000004b1', 'ios', 'beta-400', 'binary', '2.0.0', 200, 'ios/beta/200.ipa', repeat('a', 64), 1000),
  ('00000000-0000-4000-8000-0000000004f1', 'ios', 'prod-400', 'binary', '1.0.0', 100, 'ios/prod/100.ipa', repeat('b', 64), 1000);
insert into app_private.release_update_policies (platform, channel, minimum_build_number) values
  ('ios', 'beta-400', 150), ('ios', 'prod-400', 90);

-- ------------------------------------------------------------ structure
select tests.rls_enabled('app_private');
select policies_are('app_private', 'releases', array[
  'Callers can read releases of channels they may receive',
  'Release managers can read releases',
  'Release managers can publish releases',
  'Release managers can change release status and rollout'
]);
select policies_are('app_private', 'release_update_policies', array[
  'Callers can read update policies of channels they may receive',
  'Release managers can read update policies',
  'Release managers can set update policies',
  'Release managers can change update policies'
]);
select policies_are('app_private', 'tester_groups', array[
  'Release managers can read tester groups',
  'Release managers can create tester groups',
  'Release managers can update tester groups',
  'Release managers can delete tester groups'
]);
select policies_are('app_private', 'tester_group_members', array[
  'Users can read their own tester memberships',
  'Release managers can read tester memberships',
  'Release managers can add testers',
  'Release managers can update tester memberships',
  'Release managers can remove testers'
]);
select policies_are('app_private', 'tester_group_channels', array[
  'Release managers can read group channels',
  'Release managers can grant channels',
  'Release managers can update group channels',
  'Release managers can revoke channels'
]);
select policies_are('app_private', 'release_webhook_deliveries', array[
  'Release managers can read webhook deliveries',
  'Release managers can record webhook deliveries'
]);
select policy_roles_are('app_private', 'releases', 'Callers can read releases of channels they may receive', array['anon', 'authenticated'],
  'the channel read policy applies to anon and authenticated');
select policy_roles_are('app_private', 'releases', 'Release managers can publish releases', array['service_role'], 'only the service role publishes');
select table_privs_are('app_private', 'releases', 'authenticated', array['SELECT'], 'authenticated may only read releases');
select table_privs_are('app_private', 'releases', 'anon', array['SELECT'], 'anon may only read releases');
select table_privs_are('app_private', 'tester_groups', 'authenticated', array[]::text[], 'authenticated has no privilege on tester groups');
select table_privs_are('app_private', 'tester_group_channels', 'authenticated', array[]::text[], 'authenticated has no privilege on group channels');
select table_privs_are('app_private', 'tester_group_members', 'anon', array[]::text[], 'anon has no privilege on memberships');
select table_privs_are('app_private', 'release_webhook_deliveries', 'authenticated', array[]::text[], 'authenticated has no privilege on deliveries');
select table_privs_are('app_private', 'release_webhook_deliveries', 'service_role', array['INSERT', 'SELECT'], 'deliveries are recorded once, never changed');
select ok(
  has_column_privilege('service_role', 'app_private.releases', 'status', 'UPDATE')
  and has_column_privilege('service_role', 'app_private.releases', 'rollout_percentage', 'UPDATE')
  and not has_column_privilege('service_role', 'app_private.releases', 'artifact_path', 'UPDATE')
  and not has_column_privilege('service_role', 'app_private.releases', 'build_number', 'UPDATE')
  and not has_column_privilege('service_role', 'app_private.releases', 'id', 'INSERT'),
  'the service role updates only status and rollout, and never writes ids'
);

-- ------------------------------------------------------------- a tester
select tests.authenticate_as('release_tester');
select results_eq(
  $$ select id from app_private.releases where channel like '%-400' order by build_number desc $$,
  $$ values ('00000000-0000-4000-8000-0000000004b1'::uuid), ('00000000-0000-4000-8000-0000000004f1'::uuid) $$,
  'a beta tester sees the beta build and the production build'
);
select results_eq(
  $$ select channel, minimum_build_number from app_private.release_update_policies where channel like '%-400' order by channel $$,
  $$ values ('beta-400'::text, 150), ('prod-400'::text, 90) $$,
  'a beta tester reads the update policies of both channels'
);
select results_eq(
  $$ select array(select c from unnest(app_private.receivable_release_channels()) c where c like '%-400' order by c) $$,
  $$ values (array['beta-400', 'prod-400']::text[]) $$,
  'receivable_release_channels(): the tester''s group channel and the everyone channel'
);
select results_eq(
  $$ select group_id from app_private.tester_group_members $$,
  $$ values ('00000000-0000-4000-8000-000000000401'::uuid) $$,
  'a tester sees their own membership'
);
select throws_ok($$ select * from app_private.tester_groups $$, '42501', null, 'a tester cannot list tester groups');
select throws_ok($$ select * from app_private.tester_group_channels $$, '42501', null, 'a tester cannot list channel grants');
select throws_ok(
  $$ insert into app_private.releases (platform, channel, kind, version, build_number, artifact_url, artifact_sha256, artifact_size)
     values ('ios', 'beta-400', 'binary', '9', 900, 'https://example.com/x.ipa', repeat('c', 64), 1) $$,
  '42501', null, 'a tester cannot publish a release'
);
select throws_ok($$ update app_private.releases set status = 'paused' $$, '42501', null, 'a tester cannot pause a release');
select throws_ok(
  $$ insert into app_private.tester_group_members (group_id, user_id) values ('00000000-0000-4000-8000-000000000401', auth.uid()) $$,
  '42501', null, 'a tester cannot add anyone to a group'
);
select throws_ok($$ select * from app_private.release_webhook_deliveries $$, '42501', null, 'a tester cannot read webhook deliveries');
select tests.clear_authentication();

-- --------------------------------------------------------- a non-tester
select tests.authenticate_as('release_outsider');
select results_eq(
  $$ select id from app_private.releases where channel like '%-400' $$,
  $$ values ('00000000-0000-4000-8000-0000000004f1'::uuid) $$,
  'a non-tester sees only the production build'
);
select is_empty($$ select 1 from app_private.releases where channel = 'beta-400' $$, 'a non-tester sees no beta release at all');
select is_empty($$ select 1 from app_private.release_update_policies where channel = 'beta-400' $$,
  'a non-tester does not see that the beta channel has a policy');
select is_empty($$ select 1 from app_private.releases where id = '00000000-0000-4000-8000-0000000004b1' $$,
  'holding the beta release id is no permission');
select is_empty($$ select 1 from app_private.tester_group_members $$, 'a non-tester has no memberships to see (and sees no one else''s)');
select results_eq(
  $$ select array(select c from unnest(app_private.receivable_release_channels()) c where c like '%-400' order by c) $$,
  $$ values (array['prod-400']::text[]) $$,
  'receivable_release_channels(): only the everyone channel'
);
select throws_ok($$ select * from app_private.tester_groups $$, '42501', null, 'a non-tester cannot list tester groups');
select throws_ok($$ select * from app_private.tester_group_channels $$, '42501', null, 'a non-tester cannot list channel grants');
select throws_ok($$ select * from app_private.release_webhook_deliveries $$, '42501', null, 'a non-tester cannot read webhook deliveries');
select tests.clear_authentication();

-- Adding the outsider to the beta group opens the channel immediately; removing closes it.
insert into app_private.tester_group_members (group_id, user_id)
values ('00000000-0000-4000-8000-000000000401', tests.get_supabase_uid('release_outsider'));
select tests.authenticate_as('release_outsider');
select isnt_empty($$ select 1 from app_private.releases where channel = 'beta-400' $$, 'once added to the group, the beta build is visible');
select tests.clear_authentication();
delete from app_private.tester_group_members where user_id = tests.get_supabase_uid('release_outsider');
select tests.authenticate_as('release_outsider');
select is_empty($$ select 1 from app_private.releases where channel = 'beta-400' $$, 'once removed, it is gone again');
select tests.clear_authentication();

-- ------------------------------------------------------------------ anon
select tests.authenticate_as_anon();
select results_eq(
  $$ select id from app_private.releases where channel like '%-400' $$,
  $$ values ('00000000-0000-4000-8000-0000000004f1'::uuid) $$,
  'anon sees only releases of everyone channels'
);
select is_empty($$ select 1 from app_private.release_update_policies where channel = 'beta-400' $$, 'anon sees no beta policy');
select throws_ok($$ select * from app_private.tester_group_members $$, '42501', null, 'anon cannot read memberships');
select throws_ok($$ select * from app_private.tester_groups $$, '42501', null, 'anon cannot read groups');
select throws_ok($$ select * from app_private.tester_group_channels $$, '42501', null, 'anon cannot read channel grants');
select throws_ok($$ select * from app_private.release_webhook_deliveries $$, '42501', null, 'anon cannot read webhook deliveries');
select results_eq($$ select minimum_build_number from app_private.release_update_policies where channel = 'prod-400' $$, array[90],
  'anon reads the update policy of an everyone channel');
select throws_ok(
  $$ insert into app_private.releases (platform, channel, kind, version, build_number, artifact_url, artifact_sha256, artifact_size)
     values ('ios', 'prod-400', 'binary', '9', 900, 'https://example.com/x.ipa', repeat('c', 64), 1) $$,
  '42501', null, 'anon cannot publish'
);
select tests.clear_authentication();

-- ---------------------------------------------------------- service role
select tests.authenticate_as_service_role();
select results_eq($$ select count(*)::int from app_private.releases where channel in ('beta-400', 'prod-400') $$, array[2],
  'the service role reads every release');
select lives_ok(
  $$ insert into app_private.releases (platform, channel, kind, version, build_number, runtime_version, artifact_path, artifact_sha256, artifact_size, assets)
     values ('ios', 'beta-400', 'ota', '2.0.1', 201, '2.0', 'ota/201/bundle.js', repeat('d', 64), 10,
             ('[{"path": "ota/201/logo.png", "sha256": "' || repeat('e', 64) || '", "content_type": "image/png", "file_extension": ".png"}]')::jsonb) $$,
  'the service role publishes an OTA update'
);
select throws_ok(
  $$ insert into app_private.releases (platform, channel, kind, version, build_number, runtime_version, artifact_path, artifact_sha256, artifact_size)
     values ('ios', 'beta-400', 'ota', '2.0.1', 201, '2.0', 'ota/201/again.js', repeat('d', 64), 10) $$,
  '23505', null, 'one OTA update per build number on a (platform, channel, runtime version)'
);
select lives_ok(
  $$ insert into app_private.releases (platform, channel, kind, version, build_number, runtime_version, artifact_path, artifact_sha256, artifact_size)
     values ('ios', 'beta-400', 'ota', '2.1.1', 201, '2.1', 'ota/2.1/201/bundle.js', repeat('d', 64), 10) $$,
  'the same build number in another runtime version is another update'
);
select lives_ok(
  $$ update app_private.releases set status = 'rolled_back', rollout_percentage = 10 where id = '00000000-0000-4000-8000-0000000004b1' $$,
  'the service role changes status and rollout'
);
select throws_ok(
  $$ update app_private.releases set artifact_path = 'ios/beta/evil.ipa' where id = '00000000-0000-4000-8000-0000000004b1' $$,
  '42501', null, 'the service role cannot swap the artifact of a published release'
);
select throws_ok($$ delete from app_private.releases $$, '42501', null, 'releases are not deleted (they are rolled back)');
select lives_ok(
  $$ insert into app_private.release_webhook_deliveries (webhook_id, release_id) values ('msg_400', '00000000-0000-4000-8000-0000000004b1') $$,
  'the service role records a delivery'
);
select throws_ok(
  $$ insert into app_private.release_webhook_deliveries (webhook_id, release_id) values ('msg_400', '00000000-0000-4000-8000-0000000004f1') $$,
  '23505', null, 'a webhook-id is applied once'
);
select lives_ok(
  $$ insert into app_private.release_update_policies (platform, channel, minimum_build_number, below_minimum_level)
     values ('android', 'beta-400', 5, 'optional') $$,
  'the service role sets an update policy'
);
select lives_ok(
  $$ insert into app_private.tester_group_members (group_id, user_id) values ('00000000-0000-4000-8000-000000000401', tests.get_supabase_uid('release_outsider')) $$,
  'the service role adds a tester'
);
select lives_ok(
  $$ insert into app_private.tester_groups (id, name) values ('00000000-0000-4000-8000-000000000403', 'Internal 400');
     insert into app_private.tester_group_channels (group_id, channel) values ('00000000-0000-4000-8000-000000000403', 'internal-400') $$,
  'the service role creates a group and grants it a channel'
);
select results_eq(
  $$ select g.name, gc.channel from app_private.tester_groups g join app_private.tester_group_channels gc on gc.group_id = g.id
     where g.id = '00000000-0000-4000-8000-000000000403' $$,
  $$ values ('Internal 400'::text, 'internal-400'::text) $$,
  'the service role reads groups and their channels'
);
select tests.clear_authentication();

-- ------------------------------------------------------------ invariants
select throws_ok(
  $$ update app_private.releases set version = '6.6.6' where id = '00000000-0000-4000-8000-0000000004f1' $$,
  '22023', null, 'a published release is immutable whoever writes (only status and rollout change)'
);
select throws_ok(
  $$ insert into app_private.releases (platform, channel, kind, version, build_number, artifact_path, artifact_url, artifact_sha256, artifact_size)
     values ('ios', 'x', 'binary', '1', 1, 'a.ipa', 'https://example.com/a.ipa', repeat('a', 64), 1) $$,
  '23514', null, 'exactly one artifact: a path or a URL'
);
select throws_ok(
  $$ insert into app_private.releases (platform, channel, kind, version, build_number, artifact_path, artifact_sha256, artifact_size)
     values ('ios', 'x', 'ota', '1', 1, 'a.js', repeat('a', 64), 1) $$,
  '23514', null, 'an OTA update names its runtime version'
);
select throws_ok(
  $$ insert into app_private.releases (platform, channel, kind, version, build_number, artifact_path, artifact_sha256, artifact_size)
     values ('ios', 'x', 'binary', '1', 1, '../secrets/a.ipa', repeat('a', 64), 1) $$,
  '23514', null, 'an artifact path cannot climb out of the bucket'
);
select throws_ok(
  $$ insert into app_private.releases (platform, channel, kind, version, build_number, artifact_path, artifact_sha256, artifact_size)
     values ('ios', 'beta-400', 'binary', '2.0.0', 200, 'ios/beta/200b.ipa', repeat('a', 64), 1) $$,
  '23505', null, 'one binary per build number on a (platform, channel)'
);

-- --------------------------------------------------- function privileges
select ok(
  has_function_privilege('authenticated', 'app_private.receivable_release_channels()', 'execute')
  and has_function_privilege('anon', 'app_private.receivable_release_channels()', 'execute')
  and not has_function_privilege('public', 'app_private.receivable_release_channels()', 'execute'),
  'receivable_release_channels(): EXECUTE for anon and authenticated, not public'
);
select is(
  (select proconfig from pg_proc where oid = 'app_private.receivable_release_channels()'::regprocedure),
  array['search_path=""'],
  'receivable_release_channels pins an empty search_path'
);
select ok(
  not has_function_privilege('anon', 'app_private.maintain_release()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.maintain_release()', 'execute')
  and not has_function_privilege('service_role', 'app_private.maintain_release()', 'execute'),
  'maintain_release(): no API role may execute it (trigger only)'
);

select results_eq(
  $$ select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname = 'app_private' and has_function_privilege('anon', p.oid, 'execute') order by 1 $$,
  $$ values ('app_private.ota_update_hidden(text,text,uuid[],uuid[])'::text), ('app_private.receivable_release_channels()'::text) $$,
  'anon may execute exactly two functions of app_private (the release reads of the Expo manifest endpoint)'
);
select results_eq(
  $$ select c.relname::text collate "C" from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'app_private' and c.relkind in ('r', 'v', 'm', 'p')
       and (has_table_privilege('anon', c.oid, 'select') or has_table_privilege('anon', c.oid, 'insert')
            or has_table_privilege('anon', c.oid, 'update') or has_table_privilege('anon', c.oid, 'delete'))
     order by 1 $$,
  $$ values ('release_deletions'::text collate "C"), ('release_past_rollbacks'::text collate "C"), ('release_update_policies'::text collate "C"), ('releases'::text collate "C") $$,
  'anon reaches exactly the four release tables of app_private (read only)'
);

select * from finish();
rollback;
