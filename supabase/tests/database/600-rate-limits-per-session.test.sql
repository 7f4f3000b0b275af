-- Rate-limit counters per session (migration 20261122060000): a budget is the
-- user's (session null → the nil uuid, shared by every session) or one
-- session's own; hit_rate_limit counts each separately in the same window,
-- the purge still removes expired windows in bounded batches, and no API
-- role may call the counter function (only the api function's own role).
begin;
select plan(13);

select from tests.create_supabase_user('rl_alice');
delete from app_private.rate_limit_counters;

select has_pk('app_private', 'rate_limit_counters', 'the counters have a primary key');
select col_is_pk('app_private', 'rate_limit_counters', array['user_id', 'operation', 'session_id', 'window_start'],
  'a counter is per user, operation, session and window');
select col_default_is('app_private', 'rate_limit_counters', 'session_id', '00000000-0000-0000-0000-000000000000'::uuid,
  'a counter written without a session is the user''s shared budget');

-- ------------------------------------------------------------ counting
select is((select hits from app_private.hit_rate_limit(tests.get_supabase_uid('rl_alice'), 'sync.batch', 3600, 'a1000000-0000-4000-8000-000000000001')),
  1, 'the phone''s first push counts 1 against its session');
select is((select hits from app_private.hit_rate_limit(tests.get_supabase_uid('rl_alice'), 'sync.batch', 3600, 'a1000000-0000-4000-8000-000000000001')),
  2, 'its second counts 2');
select is((select hits from app_private.hit_rate_limit(tests.get_supabase_uid('rl_alice'), 'sync.batch', 3600, 'a1000000-0000-4000-8000-000000000002')),
  1, 'the tablet (another session of the same user) starts its own count');
select is((select hits from app_private.hit_rate_limit(tests.get_supabase_uid('rl_alice'), 'sync.batch', 3600, null)),
  1, 'a per-user budget of the same operation is a third, separate counter');
select is((select hits from app_private.hit_rate_limit(tests.get_supabase_uid('rl_alice'), 'sync.batch', 3600, null)),
  2, 'and is shared by every call without a session');
select is((select hits from app_private.hit_rate_limit(tests.get_supabase_uid('rl_alice'), 'sync.batch', 3600)),
  3, 'the three-argument form (callers from before the session budgets) charges the user''s budget');
select is((select count(*)::integer from app_private.rate_limit_counters where user_id = tests.get_supabase_uid('rl_alice')),
  3, 'three counters: two sessions and the user''s');

-- ------------------------------------------------------------ purge
insert into app_private.rate_limit_counters (user_id, operation, session_id, window_start, hits) values
  (tests.get_supabase_uid('rl_alice'), 'sync.pull', 'a1000000-0000-4000-8000-000000000001', '2029-12-25', 3),
  (tests.get_supabase_uid('rl_alice'), 'sync.pull', 'a1000000-0000-4000-8000-000000000002', '2029-12-25', 4);
select is(app_private.purge_rate_limit_counters('2030-01-01', 1), 1, 'the purge removes at most p_batch expired counters, across sessions');
select is(app_private.purge_rate_limit_counters('2030-01-01', 1), 1, 'and the next expired one on the next call');

-- ------------------------------------------------------------ privileges
select ok(not has_function_privilege('authenticated', 'app_private.hit_rate_limit(uuid, text, integer, uuid)', 'execute')
      and not has_function_privilege('anon', 'app_private.hit_rate_limit(uuid, text, integer, uuid)', 'execute')
      and not has_function_privilege('service_role', 'app_private.hit_rate_limit(uuid, text, integer, uuid)', 'execute'),
  'no API role may count requests (or spend another user''s budget)');

select * from finish();
rollback;
