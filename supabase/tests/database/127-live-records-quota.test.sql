-- The live-records quota is the database's (migration
-- 20261126002100_live_records_quota_in_database): a write as `authenticated`
-- (what supabase-js does through the Data API, and the push) that takes a
-- user's live records above app_private.max_live_records_per_user() fails
-- with 23514 and a message a supabase-js user can act on; changing or
-- deleting rows is never refused; the owner's writes (bulk imports) are exempt.
-- The usage is set just below the quota by the owner rather than by writing
-- 100,000 rows.
begin;
select plan(16);

select from tests.create_supabase_user('quota_alice');
select from tests.create_supabase_user('quota_bob');

create temporary table quota as select app_private.max_live_records_per_user() as max;
grant select on quota to authenticated;

-- ------------------------------------------------------------ the one source of the number
select is(app_private.max_live_records_per_user(), 100000, 'the quota is api-v1.md''s default: 100,000 live records per user');
select is(tests.function_callers('app_private.max_live_records_per_user()'), '{}'::text[], 'max_live_records_per_user: no API role calls it');
select is(tests.function_callers('app_private.refuse_live_records_over_quota()'), '{}'::text[], 'refuse_live_records_over_quota (trigger): no API role');
select ok((select p.proconfig @> array['search_path=""'] and not p.prosecdef from pg_proc p where p.oid = 'app_private.refuse_live_records_over_quota()'::regprocedure),
  'refuse_live_records_over_quota: SECURITY INVOKER with an empty search_path');
select trigger_is('app_private', 'sync_usage', 'sync_usage_10_live_records_quota', 'app_private', 'refuse_live_records_over_quota',
  'sync_usage has the quota trigger');

-- ------------------------------------------------------------ as authenticated: up to the quota, not beyond
-- Alice's usage one below the quota (as the owner: exempt).
insert into app_private.sync_usage (user_id, live_records)
values (tests.get_supabase_uid('quota_alice'), (select max from quota) - 1)
on conflict (user_id) do update set live_records = excluded.live_records;

select tests.authenticate_as('quota_alice');
select lives_ok($$ insert into public.tasks (id, list_id, title) values ('c7000000-0000-4000-8000-000000000001', (select auth.uid()), 'the last one') $$,
  'a user may write up to the quota');
select throws_ok($$ insert into public.tasks (list_id, title) values ((select auth.uid()), 'one too many') $$,
  '23514', 'at most 100000 live records per user; delete some first',
  'one more live record fails with 23514 (check_violation) and says the quota and what to do');
select throws_ok($$ insert into public.lists (title) values ('a new list') $$,
  '23514', 'at most 100000 live records per user; delete some first', 'in every synced table');
select lives_ok($$ update public.tasks set title = 'renamed', done = true where id = 'c7000000-0000-4000-8000-000000000001' $$,
  'changing a live record is not limited');

-- What supabase-js gets (PostgREST forwards code, message, details and hint; 23514 is HTTP 400), and what the push reads.
create temporary table refused (sqlstate text, constraint_name text, table_name text, message text, detail text, hint text);
grant insert, select on refused to authenticated;
do $$
declare
  v_state text; v_constraint text; v_table text; v_message text; v_detail text; v_hint text;
begin
  insert into public.tasks (list_id, title) select (select auth.uid()), 'bulk ' || g from generate_series(1, 3) g;
exception when others then
  get stacked diagnostics v_state = returned_sqlstate, v_constraint = constraint_name, v_table = table_name,
                          v_message = message_text, v_detail = pg_exception_detail, v_hint = pg_exception_hint;
  insert into pg_temp.refused values (v_state, v_constraint, v_table, v_message, v_detail, v_hint);
end
$$;
select results_eq($$ select sqlstate, constraint_name, table_name, message from refused $$,
  $$ values ('23514', 'max_live_records_per_user', 'sync_usage', 'at most 100000 live records per user; delete some first') $$,
  'a bulk insert over the quota is refused whole: constraint max_live_records_per_user (the push maps it to QUOTA_EXCEEDED)');
select ok((select detail like '%to 100003 %' and hint like 'Delete records you created%' from refused),
  'the detail says the count the write would have made, the hint what to do');

select lives_ok($$ delete from public.tasks where id = 'c7000000-0000-4000-8000-000000000001' $$, 'deleting is always allowed');
select lives_ok($$ insert into public.tasks (list_id, title) values ((select auth.uid()), 'room again') $$, 'a delete makes room');
select tests.clear_authentication();
select is((select live_records from app_private.sync_usage where user_id = tests.get_supabase_uid('quota_alice')), (select max from quota),
  'the refused writes counted nothing');

-- ------------------------------------------------------------ rows others created in the user's lists do not count
insert into public.list_members (list_id, user_id, role)
values (tests.get_supabase_uid('quota_alice'), tests.get_supabase_uid('quota_bob'), 'editor');
select tests.authenticate_as('quota_bob');
select lives_ok($$ insert into public.tasks (list_id, title) values ((select tests.get_supabase_uid('quota_alice')), 'Bob''s, in Alice''s list') $$,
  'another member writes into the list of a user at the quota: those rows are theirs');

-- ------------------------------------------------------------ the owner's writes are exempt (bulk imports)
select tests.clear_authentication();
select from set_config('request.jwt.claims', json_build_object('sub', tests.get_supabase_uid('quota_alice'), 'role', 'authenticated')::text, true);
insert into public.tasks (list_id, title) select tests.get_supabase_uid('quota_alice'), 'imported ' || g from generate_series(1, 5) g;
select from set_config('request.jwt.claims', '', true);
select is((select live_records from app_private.sync_usage where user_id = tests.get_supabase_uid('quota_alice')), (select max from quota) + 5,
  'the owner may import rows in a user''s name beyond the quota (they count; the user then has to delete before adding)');

select * from finish();
rollback;
