-- A personal list's id is its user's id, and only that user may create a list
-- with it (migrations 20261127000500, 20261127001200: refused as a taken id,
-- 23505 on lists_pkey, like any id a row has): per role, who may delete a
-- personal list and who may create one with a user's id afterwards.
begin;
select plan(16);

select from tests.create_supabase_user('pl_user');
select from tests.create_supabase_user('pl_stranger');
select from tests.create_supabase_user('pl_coowner');

select is((select count(*)::integer from public.lists where id = tests.get_supabase_uid('pl_user')), 1, 'pl_user has a personal list at signup');

-- ------------------------------------------------------------ the helper
select ok(not has_function_privilege('anon', 'app_private.is_another_users_id(uuid)', 'EXECUTE'), 'anon cannot call is_another_users_id');
select tests.authenticate_as('pl_user');
select is(app_private.is_another_users_id(tests.get_supabase_uid('pl_user')), false, 'the caller''s own id is not another user''s');
select is(app_private.is_another_users_id(tests.get_supabase_uid('pl_stranger')), true, 'another user''s id is');
select is(app_private.is_another_users_id(gen_random_uuid()), false, 'an id nobody has is not');

-- ------------------------------------------------------------ the user deletes it, a stranger cannot take the id
select lives_ok($$ delete from public.lists where id = tests.get_supabase_uid('pl_user') $$, 'its user (an owner) deletes their personal list');
select tests.authenticate_as('pl_stranger');
select throws_ok(format('insert into public.lists (id, title) values (%L, %L)', tests.get_supabase_uid('pl_user'), 'Personal'),
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'a stranger cannot create a list whose id is another user''s id: it is taken, as any id a row has');
select tests.authenticate_as_anon();
select throws_ok(format('insert into public.lists (id, title) values (%L, %L)', tests.get_supabase_uid('pl_user'), 'Personal'),
  '42501', null, 'anon cannot either');

-- ------------------------------------------------------------ only its user re-creates it
select tests.authenticate_as('pl_user');
select lives_ok(format('insert into public.lists (id, title) values (%L, %L)', tests.get_supabase_uid('pl_user'), 'Personal'),
  'its user re-creates their personal list');
select results_eq(format('select user_id, role from public.list_members where list_id = %L', tests.get_supabase_uid('pl_user')),
  format('values (%L::uuid, %L::text)', tests.get_supabase_uid('pl_user'), 'owner'), 'and owns it again');

-- ------------------------------------------------------------ another owner of it deletes it, and cannot re-create it
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values (tests.get_supabase_uid('pl_user'), tests.get_supabase_uid('pl_coowner'), 'owner');
select tests.authenticate_as('pl_coowner');
-- ------------------------------------------------------------ a member's upsert meets the primary key (migration 20261128008400)
select results_eq(format('insert into public.lists (id, title) values (%L, %L) on conflict (id) do update set title = excluded.title returning title',
    tests.get_supabase_uid('pl_user'), 'Ours'),
  $$ values ('Ours'::text) $$, 'a member''s upsert of another user''s personal list goes on to its update (the policies decide)');
select tests.authenticate_as('pl_stranger');
select throws_ok(format('insert into public.lists (id, title) values (%L, %L) on conflict (id) do update set title = excluded.title',
    tests.get_supabase_uid('pl_user'), 'Squat'),
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'a non-member''s upsert is answered as a taken id');
select tests.authenticate_as('pl_coowner');
select lives_ok($$ delete from public.lists where id = tests.get_supabase_uid('pl_user') $$, 'another owner of a shared personal list may delete it (as any list)');
select throws_ok(format('insert into public.lists (id, title) values (%L, %L)', tests.get_supabase_uid('pl_user'), 'Taken'),
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'but not create a list with its user''s id (taken)');

-- ------------------------------------------------------------ the trigger, pinned
select ok(not has_function_privilege('authenticated', 'app_private.refuse_another_users_list_id()', 'EXECUTE'), 'no API role calls the trigger function');
select policy_cmd_is('public', 'lists', 'Users can create lists', 'insert', 'the insert policy is the plain one again');

select * from finish();
rollback;
