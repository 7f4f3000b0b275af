-- app_private.releases.expo_client (20261128003100_ota_expo_client.sql): an
-- OTA update's public Expo config, a JSON object, published by the release
-- manager with the update and never changed after; a binary has none; callers
-- read it as they read the release (channels they may receive).
begin;
select plan(11);

do $$ begin
  perform tests.create_supabase_user('expo_client_outsider');
end $$;

insert into app_private.tester_groups (id, name, everyone) values ('00000000-0000-4000-8000-000000000141', 'Everyone 141', true);
insert into app_private.tester_group_channels (group_id, channel) values ('00000000-0000-4000-8000-000000000141', 'prod-141');

-- ------------------------------------------------------------ structure
select col_type_is('app_private', 'releases', 'expo_client', 'jsonb', 'expo_client is jsonb');
select col_is_null('app_private', 'releases', 'expo_client', 'expo_client is optional (null: none)');
select ok(
  has_column_privilege('service_role', 'app_private.releases', 'expo_client', 'insert')
  and not has_column_privilege('service_role', 'app_private.releases', 'expo_client', 'update')
  and not has_column_privilege('authenticated', 'app_private.releases', 'expo_client', 'insert')
  and not has_column_privilege('anon', 'app_private.releases', 'expo_client', 'insert'),
  'only the release manager sets expo_client, and only when publishing'
);

-- ---------------------------------------------- published by the release manager
select tests.authenticate_as_service_role();
select lives_ok(
  $$ insert into app_private.releases (platform, channel, kind, version, build_number, runtime_version, artifact_path, artifact_sha256, artifact_size, expo_client)
     values ('ios', 'prod-141', 'ota', '1.0.1', 1, '1.0', 'ota/141/1.js', repeat('a', 64), 10,
             '{"name": "Tide", "slug": "tide", "extra": {"eas": {"projectId": "p"}}}') $$,
  'the release manager publishes an OTA update with its Expo config'
);
select throws_ok(
  $$ insert into app_private.releases (platform, channel, kind, version, build_number, artifact_path, artifact_sha256, artifact_size, expo_client)
     values ('ios', 'prod-141', 'binary', '1.0.0', 100, 'ios/141/100.ipa', repeat('a', 64), 10, '{"name": "Tide"}') $$,
  '23514', null, 'a binary has no Expo config'
);
select throws_ok(
  $$ insert into app_private.releases (platform, channel, kind, version, build_number, runtime_version, artifact_path, artifact_sha256, artifact_size, expo_client)
     values ('ios', 'prod-141', 'ota', '1.0.2', 2, '1.0', 'ota/141/2.js', repeat('a', 64), 10, '[{"name": "Tide"}]') $$,
  '23514', null, 'an Expo config is a JSON object, not an array'
);
select throws_ok(
  $$ update app_private.releases set expo_client = '{"name": "Evil"}' where channel = 'prod-141' and build_number = 1 $$,
  '42501', null, 'the release manager cannot change the Expo config of a published update'
);
select tests.clear_authentication();

-- The owner (not subject to the grants) is held by the trigger, as for the artifact.
select throws_ok(
  $$ update app_private.releases set expo_client = '{"name": "Evil"}' where channel = 'prod-141' and build_number = 1 $$,
  '22023', 'a published release is immutable: publish a new build instead', 'a published update keeps its Expo config'
);
select lives_ok(
  $$ update app_private.releases set status = 'paused' where channel = 'prod-141' and build_number = 1 $$,
  'its status still changes'
);

-- ------------------------------------------------------------- who reads it
select tests.authenticate_as('expo_client_outsider');
select results_eq(
  $$ select expo_client ->> 'name' from app_private.releases where channel = 'prod-141' $$,
  array['Tide'],
  'a caller who may receive the channel reads the config with the update'
);
select tests.clear_authentication();
delete from app_private.tester_group_channels where group_id = '00000000-0000-4000-8000-000000000141';
select tests.authenticate_as('expo_client_outsider');
select is_empty($$ select expo_client from app_private.releases where channel = 'prod-141' $$,
  'one who may not receive it reads nothing of it');
select tests.clear_authentication();

select * from finish();
rollback;
