-- Storage objects never make the purge fail half-way: while a user still owns
-- objects in storage.objects (Supabase Storage's table, stood in here with the
-- one column the check reads), the hook refuses, that account alone is rolled
-- back and retried on the next run, and the other due accounts are deleted.
begin;
select plan(5);

create schema storage;
create table storage.objects (id uuid primary key default gen_random_uuid(), owner uuid);
-- As on Supabase, the migration role (hosted `postgres`) may read storage.objects.
do $$
begin
  execute format('grant usage on schema storage to %I', (select nspowner::regrole::text from pg_namespace where nspname = 'app_private'));
  execute format('grant select on storage.objects to %I', (select nspowner::regrole::text from pg_namespace where nspname = 'app_private'));
end
$$;

select from tests.create_supabase_user('storage_keeper');
select from tests.create_supabase_user('storage_free');
insert into storage.objects (owner) values (tests.get_supabase_uid('storage_keeper'));

select tests.authenticate_as('storage_keeper');
select from app_private.request_account_deletion(7);
select tests.authenticate_as('storage_free');
select from app_private.request_account_deletion(7);
select tests.clear_authentication();

select results_eq($$ select users_deleted from app_private.run_account_deletions(now() + interval '8 days') $$, $$ values (1) $$,
  'the purge deletes the account without Storage objects and skips the other');
select is((select count(*)::int from auth.users where id = tests.get_supabase_uid('storage_keeper')), 1,
  'the account that still owns Storage objects is kept, whole');
select is((select count(*)::int from app_private.account_deletion_requests where user_id = tests.get_supabase_uid('storage_keeper')), 1,
  'its request stays, to be retried');

delete from storage.objects;  -- what the app's Storage API clean-up does
select results_eq($$ select users_deleted from app_private.run_account_deletions(now() + interval '8 days') $$, $$ values (1) $$,
  'once its objects are removed, the next run deletes it');
select is((select count(*)::int from auth.users where raw_user_meta_data ->> 'test_identifier' = 'storage_keeper'), 0, 'the account is gone');

select * from finish();
rollback;
