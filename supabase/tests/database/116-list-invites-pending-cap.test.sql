-- A list holds at most app_private.max_pending_invites_per_list() pending
-- invites (migration 20261127000520): the next create_list_invite is refused
-- with 23514; withdrawn, used and expired invites do not count, nor those of
-- a creator who is no longer an owner (redeem refuses them; 20261127001400),
-- which the next create over the cap withdraws (20261128005000);
-- a non-owner gets the same answer as always, full list or not.
begin;
select plan(12);

select from tests.create_supabase_user('cap_owner');
select from tests.create_supabase_user('cap_stranger');
select from tests.create_supabase_user('cap_coowner');

select is(app_private.max_pending_invites_per_list(), 100, 'a list may have 100 pending invites');

select tests.authenticate_as('cap_owner');
insert into public.lists (id, title) values ('f2000000-0000-4000-8000-000000000001', 'Capped');
select lives_ok($$ select public.create_list_invite('f2000000-0000-4000-8000-000000000001', 'viewer') from generate_series(1, 100) $$,
  'an owner creates 100 invites to a list');
select throws_ok($$ select public.create_list_invite('f2000000-0000-4000-8000-000000000001', 'viewer') $$,
  '23514', 'a list has at most 100 pending invites; they stop counting once used or expired, and those of a former owner, or of one who cannot sign in, do not count',
  'the 101st pending invite is refused, saying why');

select tests.authenticate_as('cap_stranger');
select throws_ok($$ select public.create_list_invite('f2000000-0000-4000-8000-000000000001', 'viewer') $$,
  '42501', 'no such list, or you are not its owner', 'a non-owner gets the usual answer (the cap tells nothing of the list)');

select tests.authenticate_as('cap_owner');
delete from app_private.list_invites where id = (select min(id::text)::uuid from app_private.list_invites where list_id = 'f2000000-0000-4000-8000-000000000001');
select lives_ok($$ select public.create_list_invite('f2000000-0000-4000-8000-000000000001', 'viewer') $$, 'a withdrawn invite frees its place');

select tests.clear_authentication();
update app_private.list_invites set created_at = now() - interval '2 days', expires_at = now() - interval '1 day'
 where id = (select min(id::text)::uuid from app_private.list_invites where list_id = 'f2000000-0000-4000-8000-000000000001');
select tests.authenticate_as('cap_owner');
select lives_ok($$ select public.create_list_invite('f2000000-0000-4000-8000-000000000001', 'viewer') $$, 'so does an expired one');

select tests.clear_authentication();
update app_private.list_invites set used_at = now(), used_by = tests.get_supabase_uid('cap_stranger')
 where id = (select max(id::text)::uuid from app_private.list_invites where list_id = 'f2000000-0000-4000-8000-000000000001');
select tests.authenticate_as('cap_owner');
select lives_ok($$ select public.create_list_invite('f2000000-0000-4000-8000-000000000001', 'viewer') $$, 'and a used one');
select throws_ok($$ select public.create_list_invite('f2000000-0000-4000-8000-000000000001', 'owner') $$,
  '23514', null, 'the list is full again');

-- A co-owner fills the cap with 30-day codes and leaves: their codes are dead
-- (redeem refuses them), so they must not keep the other owners from inviting.
select tests.authenticate_as('cap_owner');
insert into public.lists (id, title) values ('f2000000-0000-4000-8000-000000000002', 'Left behind');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role)
values ('f2000000-0000-4000-8000-000000000002', tests.get_supabase_uid('cap_coowner'), 'owner');
select tests.authenticate_as('cap_coowner');
select lives_ok($$ select public.create_list_invite('f2000000-0000-4000-8000-000000000002', 'viewer', interval '30 days') from generate_series(1, 100) $$,
  'a co-owner creates 100 invites valid 30 days');
select tests.authenticate_as('cap_owner');
select throws_ok($$ select public.create_list_invite('f2000000-0000-4000-8000-000000000002', 'viewer') $$,
  '23514', null, 'a co-owner''s pending invites count');
select tests.authenticate_as('cap_coowner');
delete from public.list_members where list_id = 'f2000000-0000-4000-8000-000000000002' and user_id = (select auth.uid());
select tests.authenticate_as('cap_owner');
select lives_ok($$ select public.create_list_invite('f2000000-0000-4000-8000-000000000002', 'viewer') $$,
  'once they left, the remaining owner invites again');
select results_eq($$ select count(*)::int from app_private.list_invites where list_id = 'f2000000-0000-4000-8000-000000000002' and used_at is null $$,
  array[1], 'the former owner''s 100 dead codes were withdrawn to make room (20261128005000), not just left uncounted');

select * from finish();
rollback;
