-- The stand-in's storage schema (scripts/db/supabase-standin.sql) is what
-- Supabase Storage's migrations leave: buckets and objects owned by
-- supabase_storage_admin, RLS on with no policy (only the service role, which
-- bypasses RLS, reaches objects until a project adds policies), ALL granted to
-- the API roles. On a real Supabase stack the same assertions hold.
begin;
select plan(12);

select has_table('storage', 'buckets', 'storage.buckets exists');
select has_table('storage', 'objects', 'storage.objects exists');
select columns_are('storage', 'objects', array[
  'id', 'bucket_id', 'name', 'owner', 'owner_id', 'created_at', 'updated_at', 'last_accessed_at', 'metadata', 'user_metadata', 'version', 'path_tokens'
], 'storage.objects has the columns the artifact store relies on (Supabase''s, as of Storage''s current migrations)');
select is((select relrowsecurity from pg_class where oid = 'storage.objects'::regclass), true, 'RLS is on for storage.objects');
select is((select relrowsecurity from pg_class where oid = 'storage.buckets'::regclass), true, 'RLS is on for storage.buckets');

insert into storage.buckets (id, name, public) values ('standin-402', 'standin-402', false);
insert into storage.objects (bucket_id, name, metadata) values ('standin-402', 'ios/beta/1.ipa', '{"size": 3}');
select tests.authenticate_as_anon();
select is_empty($$ select 1 from storage.objects where bucket_id = 'standin-402' $$, 'anon sees no object of a bucket without policies');
select tests.clear_authentication();
select tests.authenticate_as_service_role();
select results_eq($$ select path_tokens from storage.objects where bucket_id = 'standin-402' $$, $$ values (array['ios', 'beta', '1.ipa']) $$,
  'the service role reaches every object; path_tokens is generated from the name');
select tests.clear_authentication();
select is((select pg_get_userbyid(relowner) from pg_class where oid = 'storage.objects'::regclass)::text, 'supabase_storage_admin',
  'storage.objects is owned by supabase_storage_admin');

-- Storage's 0055-prevent-direct-deletes: a direct delete leaves the files behind, so it is refused
-- unless storage.allow_delete_query is 'true', as Storage's API sets it in its own transactions.
select throws_ok($$ delete from storage.objects where bucket_id = 'standin-402' $$, '42501',
  'Direct deletion from storage tables is not allowed. Use the Storage API instead.',
  'a direct delete from storage.objects is refused');
select throws_ok($$ delete from storage.buckets where id = 'standin-402' $$, '42501',
  'Direct deletion from storage tables is not allowed. Use the Storage API instead.',
  'a direct delete from storage.buckets is refused');
select from set_config('storage.allow_delete_query', 'true', true);
select lives_ok($$ delete from storage.objects where bucket_id = 'standin-402' $$,
  'with storage.allow_delete_query set, as Storage''s API sets it, objects are deleted');
select lives_ok($$ delete from storage.buckets where id = 'standin-402' $$, 'and buckets');

select * from finish();
rollback;
