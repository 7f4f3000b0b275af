-- An invite code works only while its creator is an owner of the list who
-- can sign in (app_private.invite_is_honoured, migration 20261128001000): an
-- owner Supabase Auth soft-deleted or banned admits nobody, not even through
-- an owner code, and the answer is that of a wrong code; such codes do not
-- count towards the cap of pending invites. A ban lifted, the codes work again.
begin;
select plan(12);

select from tests.create_supabase_user('signin_owner');
select from tests.create_supabase_user('signin_member');
select from tests.create_supabase_user('signin_stranger');
select from tests.create_supabase_user('signin_banned');
select from tests.create_supabase_user('signin_coowner');

-- ------------------------------------------------------------ soft-deleted creator
select tests.authenticate_as('signin_owner');
insert into public.lists (id, title) values ('f3000000-0000-4000-8000-000000000001', 'Soft-deleted owner');
select from set_config('tests.editor_code', public.create_list_invite('f3000000-0000-4000-8000-000000000001', 'editor'), true);
select from set_config('tests.owner_code', public.create_list_invite('f3000000-0000-4000-8000-000000000001', 'owner'), true);
select tests.authenticate_as('signin_member');
select lives_ok(format('select public.accept_list_invite(%L)', current_setting('tests.editor_code')), 'a member joins while the owner can sign in');
select tests.clear_authentication();
update auth.users set deleted_at = now(), email = null where id = tests.get_supabase_uid('signin_owner');
select results_eq($$ select role from public.list_members where list_id = 'f3000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('signin_member') $$,
  array['owner'], 'the soft delete handed the list to the member');
select tests.authenticate_as('signin_stranger');
select throws_ok(format('select public.accept_list_invite(%L)', current_setting('tests.owner_code')),
  'P0002', 'this invite code is not valid (wrong, already used or expired)', 'a soft-deleted owner''s code fails like a wrong one');
select tests.clear_authentication();
select is_empty($$ select 1 from public.list_members where list_id = 'f3000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('signin_stranger') $$,
  'the stranger did not join');
select results_eq($$ select count(*)::int from app_private.list_invites where list_id = 'f3000000-0000-4000-8000-000000000001' and used_at is null $$,
  array[1], 'the code is still there, unused');

-- ------------------------------------------------------------ banned creator
select tests.authenticate_as('signin_banned');
insert into public.lists (id, title) values ('f3000000-0000-4000-8000-000000000002', 'Banned owner');
select from set_config('tests.banned_code', public.create_list_invite('f3000000-0000-4000-8000-000000000002', 'owner'), true);
select tests.clear_authentication();
update auth.users set banned_until = now() + interval '100 years' where id = tests.get_supabase_uid('signin_banned');
select tests.authenticate_as('signin_stranger');
select throws_ok(format('select public.accept_list_invite(%L)', current_setting('tests.banned_code')),
  'P0002', 'this invite code is not valid (wrong, already used or expired)', 'a banned owner''s code fails like a wrong one');
select tests.clear_authentication();
select is_empty($$ select 1 from public.list_members where list_id = 'f3000000-0000-4000-8000-000000000002' and user_id = tests.get_supabase_uid('signin_stranger') $$,
  'the stranger is no owner of the banned owner''s list');
update auth.users set banned_until = now() - interval '1 second' where id = tests.get_supabase_uid('signin_banned');
select tests.authenticate_as('signin_stranger');
select is(public.accept_list_invite(current_setting('tests.banned_code')), 'f3000000-0000-4000-8000-000000000002'::uuid,
  'once the ban is over, the code works again until it expires');

-- ------------------------------------------------------------ the cap
-- A banned co-owner's 100 codes admit nobody: they must not keep the owner from inviting.
select tests.authenticate_as('signin_member');
insert into public.lists (id, title) values ('f3000000-0000-4000-8000-000000000003', 'Capped');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role)
values ('f3000000-0000-4000-8000-000000000003', tests.get_supabase_uid('signin_coowner'), 'owner');
select tests.authenticate_as('signin_coowner');
select lives_ok($$ select public.create_list_invite('f3000000-0000-4000-8000-000000000003', 'viewer', interval '30 days') from generate_series(1, 100) $$,
  'a co-owner creates 100 invites');
select tests.authenticate_as('signin_member');
select throws_ok($$ select public.create_list_invite('f3000000-0000-4000-8000-000000000003', 'viewer') $$,
  '23514', 'a list has at most 100 pending invites; they stop counting once used or expired, and those of a former owner, or of one who cannot sign in, do not count',
  'they count while the co-owner can sign in');
select tests.clear_authentication();
update auth.users set banned_until = now() + interval '1 day' where id = tests.get_supabase_uid('signin_coowner');
select tests.authenticate_as('signin_member');
select lives_ok($$ select public.create_list_invite('f3000000-0000-4000-8000-000000000003', 'viewer') $$,
  'once the co-owner is banned, the other owner invites again');
select tests.clear_authentication();
update auth.users set deleted_at = now(), email = null, banned_until = null where id = tests.get_supabase_uid('signin_coowner');
select tests.authenticate_as('signin_member');
select lives_ok($$ select public.create_list_invite('f3000000-0000-4000-8000-000000000003', 'viewer') $$,
  'and once soft-deleted');

select * from finish();
rollback;
