-- A user keeps at most signed_out_devices_kept() signed-out devices (the most
-- recently signed out): registering a new one deletes the older ones. Signed-in
-- devices stay, and a pruned installation can register again.
begin;
select plan(6);

select from tests.create_supabase_user('prune_dan');
select has_function('app_private', 'signed_out_devices_kept', 'one function says how many signed-out devices a user keeps (20 below)');

-- Her phone, signed in; then 25 installations signed out one after the other.
insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, session_id, last_seen_at)
values (tests.get_supabase_uid('prune_dan'), 'a3080000-0000-4000-8000-000000000001', 'ios', '1.0.0', 1, tests.get_session_id('prune_dan'), now());
insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, last_seen_at, revoked_at)
select tests.get_supabase_uid('prune_dan'), ('a3080000-0000-4000-8000-0000000001' || lpad(g::text, 2, '0'))::uuid, 'ios', '1.0.0', 1,
       now(), now() - (g || ' minutes')::interval
  from generate_series(1, 25) g;

select is((select count(*)::int from app_private.devices where user_id = tests.get_supabase_uid('prune_dan') and revoked_at is not null), 20,
  'of 25 signed-out devices the 20 most recently signed out are kept');
select is((select count(*)::int from app_private.devices where user_id = tests.get_supabase_uid('prune_dan') and revoked_at is not null
            and installation_id > 'a3080000-0000-4000-8000-000000000120'), 0,
  'the five signed out longest ago are the ones deleted');
select is((select count(*)::int from app_private.devices where user_id = tests.get_supabase_uid('prune_dan') and revoked_at is null), 1,
  'the signed-in device stays');

-- The oldest pruned installation is registered again (a session start).
insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, last_seen_at, revoked_at)
values (tests.get_supabase_uid('prune_dan'), 'a3080000-0000-4000-8000-000000000125', 'ios', '1.0.0', 1, now(), now());
select is((select count(*)::int from app_private.devices where user_id = tests.get_supabase_uid('prune_dan') and installation_id = 'a3080000-0000-4000-8000-000000000125'), 1,
  'a pruned installation can be registered again (the newest signed-out device now)');

select is((select app_private.signed_out_devices_kept()), 20, 'that number is 20');

select * from finish();
rollback;
