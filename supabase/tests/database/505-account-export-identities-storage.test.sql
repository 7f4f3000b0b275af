-- The export's doors added by 20261126001700: my_account() answers the
-- caller's user metadata, my_identities() and my_storage_objects() the
-- caller's identities and owned Storage objects; only about the caller, only
-- to authenticated.
begin;
select plan(10);

select from tests.create_supabase_user('export_carol');
select from tests.create_supabase_user('export_dave');
update auth.users set raw_user_meta_data = raw_user_meta_data || '{"nickname": "caz"}' where id = tests.get_supabase_uid('export_carol');
insert into auth.identities (provider_id, user_id, identity_data, provider, created_at)
values ('carol-github-1', tests.get_supabase_uid('export_carol'), '{"sub": "carol-github-1"}', 'github', now()),
       ('dave-github-1', tests.get_supabase_uid('export_dave'), '{"sub": "dave-github-1"}', 'github', now());
insert into storage.buckets (id, name) values ('export-505', 'export-505');
insert into storage.objects (bucket_id, name, owner, owner_id, metadata)
values ('export-505', 'carol/a.png', tests.get_supabase_uid('export_carol'), tests.get_supabase_uid('export_carol')::text,
        '{"size": 123, "mimetype": "image/png"}'),
       ('export-505', 'carol/b.txt', null, tests.get_supabase_uid('export_carol')::text, '{"size": 4, "mimetype": "text/plain"}'),
       ('export-505', 'dave/a.png', tests.get_supabase_uid('export_dave'), tests.get_supabase_uid('export_dave')::text, '{}');

select ok(has_function_privilege('authenticated', 'app_private.my_identities()', 'EXECUTE')
      and not has_function_privilege('anon', 'app_private.my_identities()', 'EXECUTE')
      and not has_function_privilege('service_role', 'app_private.my_identities()', 'EXECUTE'), 'only authenticated may call my_identities()');
select ok(has_function_privilege('authenticated', 'app_private.my_storage_objects()', 'EXECUTE')
      and not has_function_privilege('anon', 'app_private.my_storage_objects()', 'EXECUTE')
      and not has_function_privilege('service_role', 'app_private.my_storage_objects()', 'EXECUTE'), 'only authenticated may call my_storage_objects()');
select ok(has_function_privilege('authenticated', 'app_private.my_account()', 'EXECUTE')
      and not has_function_privilege('anon', 'app_private.my_account()', 'EXECUTE')
      and not has_function_privilege('service_role', 'app_private.my_account()', 'EXECUTE'), 'my_account() is still for authenticated only');
select is((select array_agg(p.proconfig[1]) from pg_catalog.pg_proc p
            where p.oid in ('app_private.my_identities()'::regprocedure, 'app_private.my_storage_objects()'::regprocedure)
              and p.prosecdef),
  array['search_path=""', 'search_path=""'], 'both are security definer with an empty search_path');

select tests.authenticate_as('export_carol');
select is((select user_metadata ->> 'nickname' from app_private.my_account()), 'caz', 'my_account() answers the caller''s user metadata');
select results_eq($$ select provider, provider_id from app_private.my_identities() $$, $$ values ('github', 'carol-github-1') $$,
  'my_identities() lists the caller''s identities only');
select results_eq($$ select name, size, mime_type from app_private.my_storage_objects() order by name $$,
  $$ values ('carol/a.png', 123::bigint, 'image/png'), ('carol/b.txt', 4::bigint, 'text/plain') $$,
  'my_storage_objects() lists the objects the caller owns (by owner or owner_id), and no one else''s');

select tests.authenticate_as_anon();
select throws_ok($$ select * from app_private.my_identities() $$, '42501', null, 'anon cannot call my_identities()');
select throws_ok($$ select * from app_private.my_storage_objects() $$, '42501', null, 'anon cannot call my_storage_objects()');
select tests.clear_authentication();
select is((select count(*)::int from app_private.my_identities()) + (select count(*)::int from app_private.my_storage_objects()), 0,
  'without a caller they answer nothing');

select * from finish();
rollback;
