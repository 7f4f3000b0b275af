-- Sync retention (app_private.purge_sync_retention): it removes only op
-- results and tombstones older than the window, at most p_batch of each per
-- call, raises sync_heads.purged_through_seq to the highest purged tombstone
-- seq per user, purges expired rate-limit counters, and only service_role
-- (and pg_cron as the owner) may run it. Times are relative to a fixed p_now.
begin;
select plan(27);

select tests.create_supabase_user('retention_alice');
select tests.create_supabase_user('retention_bob');

-- ------------------------------------------------------------ privileges
select ok(has_function_privilege('service_role', 'app_private.purge_sync_retention(timestamptz, integer, integer)', 'execute'),
  'service_role may run the purge');
select ok(not has_function_privilege('authenticated', 'app_private.purge_sync_retention(timestamptz, integer, integer)', 'execute'),
  'authenticated may not run the purge');
select ok(not has_function_privilege('anon', 'app_private.purge_sync_retention(timestamptz, integer, integer)', 'execute'),
  'anon may not run the purge');
select ok(not has_function_privilege('public', 'app_private.purge_sync_retention(timestamptz, integer, integer)', 'execute'),
  'PUBLIC has no execute on the purge');
select is((select prosecdef from pg_proc where oid = 'app_private.purge_sync_retention(timestamptz, integer, integer)'::regprocedure), true,
  'the purge is security definer (it deletes rows no API role may delete)');
select is((select proconfig from pg_proc where oid = 'app_private.purge_sync_retention(timestamptz, integer, integer)'::regprocedure), array['search_path=""'],
  'the purge pins an empty search_path');
select has_index('app_private', 'records', 'records_tombstones_deleted_at_idx', 'tombstones are indexed by age for the purge');

-- ------------------------------------------------------------ fixtures
-- p_now = 2030-01-01; the window is 30 days, so the cutoff is 2029-12-02.
insert into app_private.sync_heads (user_id, last_seq) values
  (tests.get_supabase_uid('retention_alice'), 10),
  (tests.get_supabase_uid('retention_bob'), 5);

insert into app_private.records (user_id, collection, id, version, change_seq, data, deleted, created_at, updated_at, deleted_at) values
  -- alice: an old live record (never purged), tombstones of 40, 35 and 10 days, a recent live record
  (tests.get_supabase_uid('retention_alice'), 'tasks', 'a1000000-0000-4000-8000-000000000001', 1, 1, '{"title": "old but live"}', false, '2029-10-01', '2029-10-01', null),
  (tests.get_supabase_uid('retention_alice'), 'tasks', 'a1000000-0000-4000-8000-000000000002', 2, 2, null, true, '2029-10-01', '2029-11-22', '2029-11-22'),
  (tests.get_supabase_uid('retention_alice'), 'tasks', 'a1000000-0000-4000-8000-000000000003', 3, 3, null, true, '2029-10-01', '2029-11-27', '2029-11-27'),
  (tests.get_supabase_uid('retention_alice'), 'tasks', 'a1000000-0000-4000-8000-000000000004', 4, 4, null, true, '2029-10-01', '2029-12-22', '2029-12-22'),
  (tests.get_supabase_uid('retention_alice'), 'tasks', 'a1000000-0000-4000-8000-000000000005', 5, 5, '{"title": "recent"}', false, '2029-12-30', '2029-12-30', null),
  -- bob: tombstones of 50 and 31 days
  (tests.get_supabase_uid('retention_bob'), 'tasks', 'b1000000-0000-4000-8000-000000000001', 1, 1, null, true, '2029-10-01', '2029-11-12', '2029-11-12'),
  (tests.get_supabase_uid('retention_bob'), 'lists', 'b1000000-0000-4000-8000-000000000002', 2, 2, null, true, '2029-10-01', '2029-12-01', '2029-12-01');

insert into app_private.sync_ops (user_id, op_id, collection, record_id, type, status, result, version, created_at) values
  (tests.get_supabase_uid('retention_bob'), 'b2000000-0000-4000-8000-000000000001', 'tasks', 'b1000000-0000-4000-8000-000000000001', 'delete', 'applied', '{"status": "applied"}', 1, '2029-11-17'),
  (tests.get_supabase_uid('retention_alice'), 'a2000000-0000-4000-8000-000000000001', 'tasks', 'a1000000-0000-4000-8000-000000000002', 'delete', 'applied', '{"status": "applied"}', 2, '2029-11-22'),
  (tests.get_supabase_uid('retention_alice'), 'a2000000-0000-4000-8000-000000000002', 'tasks', 'a1000000-0000-4000-8000-000000000003', 'upsert', 'rejected', '{"status": "rejected"}', null, '2029-11-29'),
  (tests.get_supabase_uid('retention_alice'), 'a2000000-0000-4000-8000-000000000003', 'tasks', 'a1000000-0000-4000-8000-000000000005', 'upsert', 'applied', '{"status": "applied"}', 5, '2029-12-27');

insert into app_private.rate_limit_counters (user_id, operation, window_start, hits) values
  (tests.get_supabase_uid('retention_alice'), 'sync.pull', '2029-12-25', 3),
  (tests.get_supabase_uid('retention_alice'), 'sync.pull', '2029-12-31 23:59', 1);

-- ------------------------------------------------------------ the API roles cannot run it
select tests.authenticate_as('retention_alice');
select throws_ok($$ select * from app_private.purge_sync_retention('2030-01-01', 2) $$, '42501', null,
  'a signed-in user cannot run the purge');
select tests.authenticate_as_anon();
select throws_ok($$ select * from app_private.purge_sync_retention('2030-01-01', 2) $$, '42501', null,
  'anon cannot run the purge');

-- ------------------------------------------------------------ bounded batches
select tests.authenticate_as_service_role();
select results_eq($$ select ops_purged, tombstones_purged, rate_limit_counters_purged from app_private.purge_sync_retention('2030-01-01', 2) $$,
  $$ values (2, 2, 1) $$,
  'first run: at most 2 op results and 2 tombstones (the oldest), and the expired counter');
select tests.clear_authentication();
select results_eq($$ select id::text from app_private.records where deleted order by id $$,
  $$ values ('a1000000-0000-4000-8000-000000000003'), ('a1000000-0000-4000-8000-000000000004'), ('b1000000-0000-4000-8000-000000000002') $$,
  'the two oldest tombstones (bob 50 days, alice 40 days) are gone');
select results_eq($$ select op_id::text from app_private.sync_ops order by op_id $$,
  $$ values ('a2000000-0000-4000-8000-000000000002'), ('a2000000-0000-4000-8000-000000000003') $$,
  'the two oldest op results (bob 45 days, alice 40 days) are gone');
select results_eq($$ select user_id, purged_through_seq from app_private.sync_heads where user_id in (tests.get_supabase_uid('retention_alice'), tests.get_supabase_uid('retention_bob')) order by last_seq desc $$,
  $$ values (tests.get_supabase_uid('retention_alice'), 2::bigint), (tests.get_supabase_uid('retention_bob'), 1::bigint) $$,
  'purged_through_seq rose to each user''s highest purged tombstone seq');
select results_eq($$ select window_start from app_private.rate_limit_counters where user_id = tests.get_supabase_uid('retention_alice') $$,
  $$ values ('2029-12-31 23:59'::timestamptz) $$,
  'only the expired rate-limit counter was purged');

select tests.authenticate_as_service_role();
select results_eq($$ select ops_purged, tombstones_purged, rate_limit_counters_purged from app_private.purge_sync_retention('2030-01-01', 2) $$,
  $$ values (1, 2, 0) $$,
  'second run: the rest of the expired rows');
select results_eq($$ select ops_purged, tombstones_purged, rate_limit_counters_purged from app_private.purge_sync_retention('2030-01-01', 2) $$,
  $$ values (0, 0, 0) $$,
  'third run: nothing left to purge');
select tests.clear_authentication();

select results_eq($$ select id::text, deleted from app_private.records where user_id in (tests.get_supabase_uid('retention_alice'), tests.get_supabase_uid('retention_bob')) order by id $$,
  $$ values ('a1000000-0000-4000-8000-000000000001', false), ('a1000000-0000-4000-8000-000000000004', true), ('a1000000-0000-4000-8000-000000000005', false) $$,
  'live records (however old) and tombstones inside the window stay');
select results_eq($$ select op_id::text from app_private.sync_ops where user_id in (tests.get_supabase_uid('retention_alice'), tests.get_supabase_uid('retention_bob')) $$,
  $$ values ('a2000000-0000-4000-8000-000000000003') $$,
  'op results inside the window stay');
select results_eq($$ select purged_through_seq from app_private.sync_heads where user_id = tests.get_supabase_uid('retention_alice') $$,
  array[3::bigint], 'alice: purged through seq 3 (her tombstone of 35 days)');
select results_eq($$ select purged_through_seq from app_private.sync_heads where user_id = tests.get_supabase_uid('retention_bob') $$,
  array[2::bigint], 'bob: purged through seq 2');
select results_eq($$ select last_seq from app_private.sync_heads where user_id = tests.get_supabase_uid('retention_alice') $$,
  array[10::bigint], 'the purge never moves last_seq');

-- ------------------------------------------------------------ the window and its arguments
select results_eq($$ select ops_purged, tombstones_purged from app_private.purge_sync_retention('2030-01-01', 5000, 4) $$,
  $$ values (1, 1) $$,
  'a shorter p_retention_days purges younger rows (alice''s 10-day tombstone and 5-day op result)');
select results_eq($$ select purged_through_seq from app_private.sync_heads where user_id = tests.get_supabase_uid('retention_alice') $$,
  array[4::bigint], 'purged_through_seq follows');
select results_eq($$ select ops_purged, tombstones_purged from app_private.purge_sync_retention('2029-01-01') $$,
  $$ values (0, 0) $$,
  'an earlier p_now purges nothing');
select results_eq($$ select purged_through_seq from app_private.sync_heads where user_id = tests.get_supabase_uid('retention_alice') $$,
  array[4::bigint], 'and purged_through_seq never moves back');
select throws_ok($$ select * from app_private.purge_sync_retention('2030-01-01', 0) $$, '22023', null, 'p_batch must be positive');
select throws_ok($$ select * from app_private.purge_sync_retention(null) $$, '22023', null, 'p_now is required');

select * from finish();
rollback;
