-- A Storage bucket the user owns (storage.buckets.owner, deprecated, or
-- owner_id: what Storage sets when a signed-in user creates one) keeps the
-- account from the purge, as an object does (pgTAP 504): Storage's buckets
-- have no foreign key to auth.users, so a purged user's id stayed in them,
-- against docs/account-deletion.md (nothing references the user's id).
-- Migration 20261128007400.
begin;
select plan(4);

select from tests.create_supabase_user('bucket_owner');
select from tests.create_supabase_user('bucket_owner_id');
select from tests.create_supabase_user('bucket_free');
insert into storage.buckets (id, name, owner) values ('owned-172', 'owned-172', tests.get_supabase_uid('bucket_owner'));
insert into storage.buckets (id, name, owner_id) values ('owned-id-172', 'owned-id-172', tests.get_supabase_uid('bucket_owner_id')::text);
select from set_config('tests.bucket_owner', tests.get_supabase_uid('bucket_owner')::text, true);
select from set_config('tests.bucket_owner_id', tests.get_supabase_uid('bucket_owner_id')::text, true);

select tests.authenticate_as('bucket_owner');
select from app_private.request_account_deletion(7);
select tests.authenticate_as('bucket_owner_id');
select from app_private.request_account_deletion(7);
select tests.authenticate_as('bucket_free');
select from app_private.request_account_deletion(7);
select tests.clear_authentication();

select results_eq($$ select users_deleted from app_private.run_account_deletions(now() + interval '8 days') $$, $$ values (1) $$,
  'the purge deletes the account that owns no bucket and skips the two that do');
select is((select count(*)::int from auth.users
            where id in (current_setting('tests.bucket_owner')::uuid, current_setting('tests.bucket_owner_id')::uuid)), 2,
  'an account owning a bucket (owner or owner_id) is kept, its request retried next run');
select is((select count(*)::int from storage.buckets b
            where b.id in ('owned-172', 'owned-id-172')
              and not exists (select 1 from auth.users u where u.id = b.owner or u.id::text = b.owner_id)), 0,
  'no bucket outlived its owner''s account');

select from set_config('storage.allow_delete_query', 'true', true);
delete from storage.buckets where id in ('owned-172', 'owned-id-172');  -- what the app's Storage API clean-up does
select results_eq($$ select users_deleted from app_private.run_account_deletions(now() + interval '8 days') $$, $$ values (2) $$,
  'once their buckets are removed, the next run deletes them');

select * from finish();
rollback;
