-- Storage objects never make the purge fail half-way, nor let it leave them
-- behind: while a user still owns objects in storage.objects (Supabase
-- Storage's table, from the stand-in) by `owner` (deprecated) or `owner_id`
-- (what Storage sets on upload), the purge refuses, that account alone is
-- rolled back and retried on the next run, and the other due accounts are
-- deleted; also when an app has replaced the before_account_purge hook (the
-- check is the purge's own, migration 20261126001810).
begin;
select plan(13);

-- The stand-in's storage schema (Supabase Storage's tables; the migration role,
-- like hosted `postgres`, may read storage.objects): one bucket, two objects.
insert into storage.buckets (id, name) values ('avatars-504', 'avatars-504');

select from tests.create_supabase_user('storage_keeper');
select from tests.create_supabase_user('storage_owner_id_keeper');
select from tests.create_supabase_user('storage_free');
insert into storage.objects (bucket_id, name, owner) values ('avatars-504', 'storage_keeper/face.png', tests.get_supabase_uid('storage_keeper'));
-- What current Storage writes on upload: owner_id (text, the JWT's sub), no owner.
insert into storage.objects (bucket_id, name, owner_id)
values ('avatars-504', 'storage_owner_id_keeper/face.png', tests.get_supabase_uid('storage_owner_id_keeper')::text);

-- Their ids, to ask about them once they may be gone.
select from set_config('tests.keeper', tests.get_supabase_uid('storage_keeper')::text, true);
select from set_config('tests.owner_id_keeper', tests.get_supabase_uid('storage_owner_id_keeper')::text, true);

select tests.authenticate_as('storage_keeper');
select from app_private.request_account_deletion(7);
select tests.authenticate_as('storage_owner_id_keeper');
select from app_private.request_account_deletion(7);
select tests.authenticate_as('storage_free');
select from app_private.request_account_deletion(7);
select tests.clear_authentication();

select results_eq($$ select users_deleted from app_private.run_account_deletions(now() + interval '8 days') $$, $$ values (1) $$,
  'the purge deletes the account without Storage objects and skips the others');
select is((select count(*)::int from auth.users where id = current_setting('tests.keeper')::uuid), 1,
  'the account that still owns Storage objects (owner) is kept, whole');
select is((select count(*)::int from auth.users where id = current_setting('tests.owner_id_keeper')::uuid), 1,
  'the account that still owns Storage objects by owner_id only is kept too');
select is((select count(*)::int from app_private.account_deletion_requests
            where user_id in (current_setting('tests.keeper')::uuid, current_setting('tests.owner_id_keeper')::uuid)), 2,
  'their requests stay, to be retried');
select is((select count(*)::int from storage.objects o where o.bucket_id = 'avatars-504'
              and not exists (select 1 from auth.users u where u.id = o.owner or u.id::text = o.owner_id)), 0,
  'no object outlived its owner''s account');

-- Storage refuses a direct delete unless the transaction sets this, as its API does.
select from set_config('storage.allow_delete_query', 'true', true);
delete from storage.objects where bucket_id = 'avatars-504';  -- what the app's Storage API clean-up does
select results_eq($$ select users_deleted from app_private.run_account_deletions(now() + interval '8 days') $$, $$ values (2) $$,
  'once their objects are removed, the next run deletes them');
select is((select count(*)::int from auth.users where raw_user_meta_data ->> 'test_identifier' in ('storage_keeper', 'storage_owner_id_keeper')), 0,
  'the accounts are gone');

-- An app replaces the hook with its own (docs/account-deletion.md; here one
-- that revokes nothing and checks nothing): the purge still checks Storage.
create or replace function app_private.before_account_purge(p_user_id uuid)
returns void language plpgsql volatile security definer set search_path = '' as $$ begin null; end $$;
select from tests.create_supabase_user('storage_custom_hook');
insert into storage.objects (bucket_id, name, owner_id)
values ('avatars-504', 'storage_custom_hook/face.png', tests.get_supabase_uid('storage_custom_hook')::text);
select tests.authenticate_as('storage_custom_hook');
select from app_private.request_account_deletion(7);
select tests.clear_authentication();
select results_eq($$ select users_deleted from app_private.run_account_deletions(now() + interval '8 days') $$, $$ values (0) $$,
  'with an app''s own hook in place, an account whose objects remain is still not deleted');

-- More refused accounts than p_batch, all due before a free one: the run goes
-- past them (each tried once) and deletes the free one at once, rather than
-- trying the same refused p_batch on every run (migration 20261126002900).
select from generate_series(1, 3) i, lateral tests.create_supabase_user('storage_refused_' || i);
insert into storage.objects (bucket_id, name, owner_id)
select 'avatars-504', 'storage_refused_' || i || '/face.png', tests.get_supabase_uid('storage_refused_' || i)::text from generate_series(1, 3) i;
select from tests.create_supabase_user('storage_free_later');
select from set_config('tests.free_later', tests.get_supabase_uid('storage_free_later')::text, true);
select tests.authenticate_as('storage_refused_1');
select from app_private.request_account_deletion(1);
select tests.authenticate_as('storage_refused_2');
select from app_private.request_account_deletion(1);
select tests.authenticate_as('storage_refused_3');
select from app_private.request_account_deletion(1);
select tests.authenticate_as('storage_free_later');
select from app_private.request_account_deletion(7);
select tests.clear_authentication();
update app_private.account_deletion_requests set scheduled_for = scheduled_for + interval '1 hour'
 where user_id = current_setting('tests.free_later')::uuid;
-- Due: the three refused (1 day), storage_custom_hook (7 days, refused), then the free one.
select results_eq($$ select users_deleted from app_private.run_account_deletions(now() + interval '8 days', 2) $$, $$ values (1) $$,
  'with more refused accounts due first than p_batch (2), the run still deletes the free account due after them');
select is((select count(*)::int from auth.users where id = current_setting('tests.free_later')::uuid), 0,
  'the free account is gone on the first run');
select is((select count(*)::int from auth.users where raw_user_meta_data ->> 'test_identifier' like 'storage_refused_%'), 3,
  'the refused accounts are all kept, to be retried');

select is(tests.function_callers('app_private.refuse_purge_while_storage_objects_remain(uuid)'), '{}'::text[],
  'no API role may call the purge''s Storage check');
select is((select proconfig from pg_catalog.pg_proc where oid = 'app_private.refuse_purge_while_storage_objects_remain(uuid)'::regprocedure),
  array['search_path=""'], 'the Storage check has an empty search_path');

select * from finish();
rollback;
