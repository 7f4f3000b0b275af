-- Storage objects never make the purge fail half-way: while a user still owns
-- objects in storage.objects (Supabase Storage's table, from the stand-in),
-- the hook refuses, that account alone is rolled back and retried on the next
-- run, and the other due accounts are deleted.
begin;
select plan(5);

-- The stand-in's storage schema (Supabase Storage's tables; the migration role,
-- like hosted `postgres`, may read storage.objects): one bucket, one object.
insert into storage.buckets (id, name) values ('avatars-504', 'avatars-504');

select from tests.create_supabase_user('storage_keeper');
select from tests.create_supabase_user('storage_free');
insert into storage.objects (bucket_id, name, owner) values ('avatars-504', 'storage_keeper/face.png', tests.get_supabase_uid('storage_keeper'));

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

delete from storage.objects where bucket_id = 'avatars-504';  -- what the app's Storage API clean-up does
select results_eq($$ select users_deleted from app_private.run_account_deletions(now() + interval '8 days') $$, $$ values (1) $$,
  'once its objects are removed, the next run deletes it');
select is((select count(*)::int from auth.users where raw_user_meta_data ->> 'test_identifier' = 'storage_keeper'), 0, 'the account is gone');

select * from finish();
rollback;
