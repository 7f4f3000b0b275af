-- The head check of app_private.records (every version allocated from the
-- user's sync_heads row first) as the statement-level triggers of
-- 20261122030000 run it: for the caller's own rows, for multi-row
-- statements, for upserts and for a role without JWT claims (the per-row
-- checks and the foreign-owner path are in 110-sync-records).
begin;
select plan(10);

do $$ begin
  perform tests.create_supabase_user('head_carol');
end $$;

select ok(not has_function_privilege('authenticated', 'app_private.records_check_head()', 'execute')
      and not has_function_privilege('authenticated', 'app_private.records_check_foreign_owner()', 'execute')
      and not has_function_privilege('anon', 'app_private.records_check_head()', 'execute'),
  'the API roles cannot call the head-check trigger functions');

select tests.authenticate_as('head_carol');
select throws_ok($$ insert into app_private.records (user_id, collection, id, version, change_seq, data)
                    values ((select auth.uid()), 'tasks', gen_random_uuid(), 1, 1, '{}') $$,
  '23514', null, 'a record of a user without a head is refused');
select lives_ok($$ insert into app_private.sync_heads (user_id, last_seq) values ((select auth.uid()), 3) $$, 'carol creates her head');
select throws_ok($$ insert into app_private.records (user_id, collection, id, version, change_seq, data)
                    values ((select auth.uid()), 'tasks', gen_random_uuid(), 4, 4, '{}') $$,
  '23514', null, 'an inserted version above the head is refused');
select throws_ok($$ insert into app_private.records (user_id, collection, id, version, change_seq, data)
                    values ((select auth.uid()), 'tasks', gen_random_uuid(), 1, 1, '{}'),
                           ((select auth.uid()), 'tasks', gen_random_uuid(), 2, 2, '{}'),
                           ((select auth.uid()), 'tasks', gen_random_uuid(), 5, 5, '{}') $$,
  '23514', null, 'one version above the head refuses the whole multi-row statement');
select is_empty($$ select 1 from app_private.records $$, 'nothing of the refused statements was written');
select lives_ok($$ insert into app_private.records (user_id, collection, id, version, change_seq, data)
                   values ((select auth.uid()), 'tasks', 'c0000000-0000-4000-8000-000000000001', 1, 1, '{}'),
                          ((select auth.uid()), 'tasks', 'c0000000-0000-4000-8000-000000000002', 2, 2, '{}') $$,
  'versions up to the head are accepted');
select throws_ok($$ insert into app_private.records (user_id, collection, id, version, change_seq, data)
                    values ((select auth.uid()), 'tasks', 'c0000000-0000-4000-8000-000000000001', 9, 9, '{}')
                    on conflict (user_id, collection, id) do update
                      set version = excluded.version, change_seq = excluded.change_seq, data = excluded.data $$,
  '23514', null, 'an upsert to a version above the head is refused');
select lives_ok($$ insert into app_private.records (user_id, collection, id, version, change_seq, data)
                   values ((select auth.uid()), 'tasks', 'c0000000-0000-4000-8000-000000000001', 3, 3, '{"a": 1}')
                   on conflict (user_id, collection, id) do update
                     set version = excluded.version, change_seq = excluded.change_seq, data = excluded.data $$,
  'an upsert to an allocated version is accepted');

select tests.clear_authentication();
select throws_ok($$ update app_private.records set version = 50, change_seq = 50
                    where user_id = tests.get_supabase_uid('head_carol') and id = 'c0000000-0000-4000-8000-000000000002' $$,
  '23514', null, 'a role without JWT claims (bypassing RLS) is head-checked too');

select * from finish();
rollback;
