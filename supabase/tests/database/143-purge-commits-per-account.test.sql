-- The account purge pg_cron runs commits after each account (migrations
-- 20261128003300, 20261128004100): app_private.purge_run_command() returns
-- the DO block pg_cron's job runs (a block may commit; a procedure that
-- commits could have no fixed search_path), which refuses inside a
-- transaction block before doing anything and runs each account through
-- app_private.begin_purge_attempt, which takes the next due request and
-- records the attempt (committed first: pgTAP 151), and
-- app_private.purge_account, which carries it out or rolls it back alone.
-- Its commits need a top-level statement, which pgTAP's transaction is not:
-- what the commits change for others (a push, a cancel, a pull during the
-- run) is tests/integration/account-purge-per-account.test.ts.
begin;
select plan(17);

select is((select p.prokind::text || ':' || p.prosecdef::text || ':' || array_to_string(p.proconfig, ',') from pg_proc p
            where p.oid = 'app_private.purge_run_command(timestamptz, integer)'::regprocedure), 'f:false:search_path=""',
  'purge_run_command is a function with an empty search_path (what the advisors ask of every routine)');
select is((select count(*)::int from pg_proc p where p.proname = 'purge_due_accounts' and p.pronamespace = 'app_private'::regnamespace), 0,
  'no procedure is left: one that commits can have no SET clause, so no fixed search_path');
select is(tests.function_callers('app_private.purge_run_command(timestamptz, integer)'), array['service_role'],
  'purge_run_command: the owner (pg_cron) and service_role only');
select is((select array_agg(p.oid::regprocedure::text order by p.oid::regprocedure::text) from pg_proc p
            where p.oid in ('app_private.begin_purge_attempt(timestamptz, timestamptz)'::regprocedure,
                            'app_private.purge_account(uuid, timestamptz)'::regprocedure,
                            'app_private.forget_purged_installations()'::regprocedure)
              and p.prosecdef and p.proconfig[1] = 'search_path=""'),
  array['app_private.begin_purge_attempt(timestamp with time zone,timestamp with time zone)', 'app_private.forget_purged_installations()',
        'app_private.purge_account(uuid,timestamp with time zone)'],
  'what it runs each account and the sweep with is security definer with an empty search_path');
select is(tests.function_callers('app_private.purge_account(uuid, timestamptz)'), array['service_role'],
  'purge_account: the owner and service_role only');
select is(tests.function_callers('app_private.forget_purged_installations()'), array['service_role'],
  'forget_purged_installations: the owner and service_role only');

-- Two accounts due long ago (other requests are due later): the first still
-- owns a Storage object (refused), the second can go.
insert into storage.buckets (id, name) values ('avatars-143', 'avatars-143');
select from tests.create_supabase_user('purge143_keeper');
select from tests.create_supabase_user('purge143_free');
insert into storage.objects (bucket_id, name, owner_id)
values ('avatars-143', 'keeper/face.png', tests.get_supabase_uid('purge143_keeper')::text);
-- Their ids, to ask about them once they may be gone.
create temporary table ids as
  select tests.get_supabase_uid('purge143_keeper') as keeper, tests.get_supabase_uid('purge143_free') as free;
insert into app_private.account_deletion_requests (user_id, requested_at, scheduled_for)
values ((select keeper from ids), '1999-12-25', '2000-01-01 00:00:00+00'),
       ((select free from ids), '1999-12-25', '2000-01-01 00:00:01+00');

select throws_ok(app_private.purge_run_command('2000-01-02', 20), '2D000', null,
  'run inside a transaction block, the block refuses (invalid transaction termination)');
select is((select count(*)::int from app_private.account_deletion_requests
            where user_id in ((select keeper from ids), (select free from ids))), 2,
  'and did nothing: both requests are still there');
select throws_ok($$ select app_private.purge_run_command('2000-01-02', 0) $$, '22023', null,
  'a batch below 1 is refused');

select is(app_private.begin_purge_attempt('2000-01-02', clock_timestamp()),
  (select request_id from app_private.account_deletion_requests where user_id = (select keeper from ids)),
  'the first due account is taken');
select results_eq($$ select deleted, lists_handed_over from app_private.purge_account(
                       (select request_id from app_private.account_deletion_requests where user_id = (select keeper from ids)), '2000-01-02') $$,
  $$ values (false, 0) $$,
  'and refused (Storage objects left): not deleted');
select is((select count(*)::int from auth.users where id = (select keeper from ids)), 1,
  'the refused account is kept, whole');
create temporary table free_request as
  select request_id from app_private.account_deletion_requests where user_id = (select free from ids);
select is(app_private.begin_purge_attempt('2000-01-02', '2000-01-01'), (select request_id from free_request),
  'the next one is the due account not tried in this run');
select results_eq($$ select deleted from app_private.purge_account((select request_id from free_request), '2000-01-02') $$,
  array[true],
  'it is deleted');
select is((select count(*)::int from auth.users where id = (select free from ids)), 0,
  'it is gone');
select is(app_private.begin_purge_attempt('2000-01-02', '2000-01-01'), null::uuid,
  'no request due is left untried in this run (the run stops)');

-- The function form takes the same accounts in one transaction.
-- Storage refuses a direct delete unless the transaction sets this, as its API does.
select from set_config('storage.allow_delete_query', 'true', true);
delete from storage.objects where bucket_id = 'avatars-143';
select results_eq($$ select users_deleted, lists_handed_over from app_private.run_account_deletions('2000-01-02', 20) $$,
  $$ values (1, 0) $$,
  'run_account_deletions, the one-transaction form, deletes the account once its objects are gone');

select * from finish();
rollback;
