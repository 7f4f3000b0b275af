-- A deleted user's id stays reserved as a list id (migration
-- 20261128004650): after the account purge deleted the user, their personal
-- list and its sync history, another user's list with that id is refused as a
-- taken id (23505 on lists_pkey, the answer for a live user's id), so an
-- account created again with that id (auth.admin.createUser({ id })) gets its
-- personal list. However the user goes (the purge or a plain delete of the
-- auth.users row). A sign-up that finds a list with its id (a personal list
-- handed over with the earlier account) is refused, not left without one.
begin;
select plan(17);

select from tests.create_supabase_user('ret_gone');
select from tests.create_supabase_user('ret_squatter');
select from tests.create_supabase_user('ret_dropped');
select from tests.create_supabase_user('ret_sharer');
select from tests.create_supabase_user('ret_heir');

create temporary table ids (name text primary key, id uuid) on commit drop;
insert into ids select n, tests.get_supabase_uid(n) from unnest(array['ret_gone', 'ret_dropped', 'ret_sharer']) n;
grant select on ids to public;

-- The sign-up of a user with the id of one that was deleted, as auth.admin.createUser({ id }) does.
create function pg_temp.sign_up_again(p_id uuid, p_identifier text) returns void language sql as $$
  insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at, is_anonymous)
  values ('00000000-0000-0000-0000-000000000000', p_id, 'authenticated', 'authenticated', p_identifier || '@test.tidesync.dev',
          '{"provider": "email", "providers": ["email"]}', jsonb_build_object('test_identifier', p_identifier), now(), now(), false);
  insert into auth.sessions (id, user_id, aal, created_at, updated_at, user_agent)
  values (gen_random_uuid(), p_id, 'aal1', now(), now(), 'pgTAP test session');
$$;

-- ------------------------------------------------------------ the purge deletes the user, their personal list and its history
select tests.authenticate_as('ret_gone');
insert into public.tasks (list_id, title) values (tests.get_supabase_uid('ret_gone'), 'In the personal list');
select from app_private.request_account_deletion(7);
select tests.clear_authentication();
select from set_config('role', (select nspowner::regrole::text from pg_namespace where nspname = 'app_private'), true);
select results_eq($$ select users_deleted from app_private.run_account_deletions(now() + interval '8 days') $$,
  $$ values (1) $$, 'the purge deletes the user');
select tests.clear_authentication();
select is_empty($$ select 1 from public.lists where id = (select id from ids where name = 'ret_gone')
                  union all select 1 from app_private.sync_changes where scope_id = (select id from ids where name = 'ret_gone')
                  union all select 1 from app_private.sync_records where scope_id = (select id from ids where name = 'ret_gone') $$,
  'the personal list and its sync history went with the user: nothing of that list keeps its id');

-- ------------------------------------------------------------ nobody else takes the id
select tests.authenticate_as('ret_squatter');
select is(app_private.is_another_users_id((select id from ids where name = 'ret_gone')), true,
  'a deleted user''s id is still another user''s id');
select throws_ok(format('insert into public.lists (id, title) values (%L, %L)', (select id from ids where name = 'ret_gone'), 'Squat'),
  '23505', 'duplicate key value violates unique constraint "lists_pkey"',
  'another user cannot create a list with a deleted user''s id: taken, as for a live user''s id');
select throws_ok(format('insert into public.lists (id, title) values (%L, %L)', tests.get_supabase_uid('ret_heir'), 'Squat'),
  '23505', 'duplicate key value violates unique constraint "lists_pkey"',
  'the same answer as for a live user''s id');
select is(app_private.is_another_users_id(gen_random_uuid()), false, 'an id nobody had is still free');

-- ------------------------------------------------------------ deleted otherwise: a plain delete of the auth.users row
select tests.clear_authentication();
delete from auth.users where id = (select id from ids where name = 'ret_dropped');
-- Its list's history gone too, as purge_sync_retention leaves it past retention_days.
delete from app_private.sync_changes where scope_id = (select id from ids where name = 'ret_dropped');
delete from app_private.sync_records where scope_id = (select id from ids where name = 'ret_dropped');
select tests.authenticate_as('ret_squatter');
select throws_ok(format('insert into public.lists (id, title) values (%L, %L)', (select id from ids where name = 'ret_dropped'), 'Squat'),
  '23505', 'duplicate key value violates unique constraint "lists_pkey"',
  'nor with the id of a user deleted straight from auth.users, once the history of their list is gone');

-- ------------------------------------------------------------ the account created again gets its personal list
select tests.clear_authentication();
select lives_ok($$ select pg_temp.sign_up_again((select id from ids where name = 'ret_gone'), 'ret_reborn') $$,
  'an account is created again with the deleted user''s id');
select results_eq($$ select l.created_by, m.user_id, m.role from public.lists l join public.list_members m on m.list_id = l.id
                     where l.id = (select id from ids where name = 'ret_gone') $$,
  $$ select id, id, 'owner'::text from ids where name = 'ret_gone' $$,
  'it has its personal list again (id = its id), owned by it alone');
select tests.authenticate_as('ret_reborn');
select lives_ok($$ insert into public.tasks (list_id, title) values ((select id from ids where name = 'ret_gone'), 'Mine') $$,
  'and writes into it');
select lives_ok($$ delete from public.lists where id = (select id from ids where name = 'ret_gone') $$, 'deletes it');
select lives_ok(format('insert into public.lists (id, title) values (%L, %L)', (select id from ids where name = 'ret_gone'), 'Personal'),
  'and creates it again, as any user');
select tests.authenticate_as('ret_squatter');
select throws_ok(format('insert into public.lists (id, title) values (%L, %L)', (select id from ids where name = 'ret_gone'), 'Squat'),
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'its id is refused to others, as before the deletion');

-- ------------------------------------------------------------ a personal list handed over: the sign-up says so
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values ((select id from ids where name = 'ret_sharer'), tests.get_supabase_uid('ret_heir'), 'editor');
delete from auth.users where id = (select id from ids where name = 'ret_sharer');
select is((select m.user_id from public.list_members m where m.list_id = (select id from ids where name = 'ret_sharer') and m.role = 'owner'),
  tests.get_supabase_uid('ret_heir'), 'a shared personal list is handed over with its id');
select throws_ok($$ select pg_temp.sign_up_again((select id from ids where name = 'ret_sharer'), 'ret_sharer_again') $$,
  '23505', null, 'an account created again with that id is refused, not left without a personal list');

-- ------------------------------------------------------------ the reservations' table
select ok((select relrowsecurity from pg_class where oid = 'app_private.retired_user_ids'::regclass),
  'the table of deleted users'' ids has row-level security');
select ok(not exists (select 1 from information_schema.role_table_grants
                       where table_schema = 'app_private' and table_name = 'retired_user_ids'
                         and grantee in ('anon', 'authenticated', 'service_role', 'PUBLIC')),
  'and no API role holds a privilege on it');

select * from finish();
rollback;
