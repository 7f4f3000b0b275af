-- public.list_members (who may do what in a list): RLS and exact policy
-- names, grants (nobody inserts memberships directly: invites do), and per
-- role who reads members, changes roles (owners only), removes members
-- (owners) and leaves (anyone); a list always keeps an owner.
begin;
select plan(40);

select from tests.create_supabase_user('members_owner');
select from tests.create_supabase_user('members_editor');
select from tests.create_supabase_user('members_viewer');
select from tests.create_supabase_user('members_stranger');

-- ------------------------------------------------------------ structure
select ok((select relrowsecurity from pg_class where oid = 'public.list_members'::regclass), 'RLS is enabled on public.list_members');
select policies_are('public', 'list_members', array[
  'Members can read the members of their lists',
  'Owners can change the roles of members',
  'Owners can remove members and members can leave'
], 'list_members has exactly its three policies (no insert policy)');
select table_privs_are('public', 'list_members', 'authenticated', array['SELECT', 'DELETE'],
  'authenticated reads and deletes memberships; it never inserts them');
select is(array(select c from unnest(array['list_id', 'user_id', 'role', 'created_at']) c
                where has_column_privilege('authenticated', 'public.list_members', c, 'UPDATE')),
  array['role'], 'authenticated may update only the role of a membership');
select table_privs_are('public', 'list_members', 'anon', '{}'::text[], 'anon has no privilege on list_members');
select table_privs_are('public', 'list_members', 'service_role', array['SELECT', 'INSERT', 'UPDATE', 'DELETE'], 'service_role may do everything');
-- the last condition of the update and delete policies: it locks the list first (migration 20261128002500)
select ok(has_function_privilege('authenticated', 'app_private.lock_list_for_member_change(uuid, text, boolean)', 'execute'),
  'authenticated runs lock_list_for_member_change (its policies call it as the caller)');
select ok(not has_function_privilege('anon', 'app_private.lock_list_for_member_change(uuid, text, boolean)', 'execute'),
  'anon may not run lock_list_for_member_change');
select ok(not has_function_privilege('service_role', 'app_private.lock_list_for_member_change(uuid, text, boolean)', 'execute'),
  'service_role may not run lock_list_for_member_change (it bypasses the policies)');

select tests.authenticate_as('members_owner');
insert into public.lists (id, title) values ('d1000000-0000-4000-8000-000000000001', 'Team');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('d1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('members_editor'), 'editor'),
  ('d1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('members_viewer'), 'viewer');

-- ------------------------------------------------------------ reads
select tests.authenticate_as('members_viewer');
select results_eq($$ select role from public.list_members where list_id = 'd1000000-0000-4000-8000-000000000001' order by role $$,
  array['editor', 'owner', 'viewer'], 'a member (even a viewer) sees every member of the list and their roles');
select tests.authenticate_as('members_stranger');
select is_empty($$ select 1 from public.list_members where list_id = 'd1000000-0000-4000-8000-000000000001' $$,
  'a non-member sees no member of the list');
select throws_ok($$ insert into public.list_members (list_id, user_id, role) values ('d1000000-0000-4000-8000-000000000001', (select auth.uid()), 'owner') $$,
  '42501', null, 'a non-member cannot add themselves to a list');

-- ------------------------------------------------------------ nobody inserts directly
select tests.authenticate_as('members_owner');
select throws_ok($$ insert into public.list_members (list_id, user_id, role) values ('d1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('members_stranger'), 'viewer') $$,
  '42501', null, 'not even an owner inserts a membership directly (invites do)');

-- ------------------------------------------------------------ role changes
select tests.authenticate_as('members_editor');
select results_eq($$ with u as (update public.list_members set role = 'owner' where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = (select auth.uid()) returning 1)
                    select count(*)::int from u $$, array[0], 'an editor cannot promote themselves');
select results_eq($$ with u as (update public.list_members set role = 'editor' where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('members_viewer') returning 1)
                    select count(*)::int from u $$, array[0], 'an editor cannot change another member''s role');
select tests.authenticate_as('members_viewer');
select results_eq($$ with u as (update public.list_members set role = 'viewer' where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('members_owner') returning 1)
                    select count(*)::int from u $$, array[0], 'a viewer cannot demote the owner');
select tests.authenticate_as('members_stranger');
select results_eq($$ with u as (update public.list_members set role = 'viewer' where list_id = 'd1000000-0000-4000-8000-000000000001' returning 1)
                    select count(*)::int from u $$, array[0], 'a non-member cannot change roles');
select tests.clear_authentication();
select results_eq($$ select user_id, role from public.list_members where list_id = 'd1000000-0000-4000-8000-000000000001' order by role $$,
  $$ values (tests.get_supabase_uid('members_editor'), 'editor'::text), (tests.get_supabase_uid('members_owner'), 'owner'::text),
            (tests.get_supabase_uid('members_viewer'), 'viewer'::text) $$,
  'the refused role changes left every role as it was');

select tests.authenticate_as('members_owner');
select results_eq($$ with u as (update public.list_members set role = 'editor' where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('members_viewer') returning role)
                    select role from u $$, array['editor'], 'the owner promotes a viewer to editor');
select throws_ok($$ update public.list_members set role = 'admin' where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('members_viewer') $$,
  '23514', null, 'roles are owner, editor or viewer');
select throws_ok($$ update public.list_members set role = 'editor' where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = (select auth.uid()) $$,
  '23514', 'a list must keep an owner: make another member owner first, or delete the list', 'the last owner cannot demote themselves');
select throws_ok($$ update public.list_members set user_id = tests.get_supabase_uid('members_stranger') where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('members_viewer') $$,
  '42501', null, 'a membership cannot be handed to another user');
select tests.clear_authentication();
select throws_ok($$ update public.list_members set list_id = tests.get_supabase_uid('members_owner') where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('members_viewer') $$,
  '23514', null, 'even a role that bypasses RLS cannot move a membership to another list (only the role changes)');
select results_eq($$ select granted from app_private.sync_access where user_id = tests.get_supabase_uid('members_viewer') and scope_id = 'd1000000-0000-4000-8000-000000000001' $$,
  array[true], 'a role change is not an access change');

-- ------------------------------------------------------------ the last owner
select tests.authenticate_as('members_owner');
select throws_ok($$ delete from public.list_members where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = (select auth.uid()) $$,
  '23514', 'a list must keep an owner: make another member owner first, or delete the list', 'the last owner cannot leave');
select throws_ok($$ delete from public.list_members where list_id = (select auth.uid()) and user_id = (select auth.uid()) $$,
  '23514', null, 'nor leave their personal list');
select lives_ok($$ update public.list_members set role = 'owner' where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('members_editor') $$,
  'the owner makes the editor a second owner');
select results_eq($$ with u as (update public.list_members set role = 'editor' where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = (select auth.uid()) returning 1)
                    select count(*)::int from u $$, array[1], 'with another owner, an owner may step down');
-- Now members_editor is the one owner, members_owner an editor.

-- ------------------------------------------------------------ removal and leaving
select results_eq($$ with d as (delete from public.list_members where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('members_viewer') returning 1)
                    select count(*)::int from d $$, array[0], 'an editor cannot remove another member');
select tests.authenticate_as('members_stranger');
select results_eq($$ with d as (delete from public.list_members where list_id = 'd1000000-0000-4000-8000-000000000001' returning 1)
                    select count(*)::int from d $$, array[0], 'a non-member cannot remove members');
select tests.authenticate_as('members_editor');
select results_eq($$ with d as (delete from public.list_members where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('members_viewer') returning 1)
                    select count(*)::int from d $$, array[1], 'an owner removes a member');
select tests.authenticate_as('members_viewer');
select is_empty($$ select 1 from public.lists where id = 'd1000000-0000-4000-8000-000000000001' $$, 'a removed member no longer sees the list');
select tests.clear_authentication();
select results_eq($$ select granted from app_private.sync_access where user_id = tests.get_supabase_uid('members_viewer') and scope_id = 'd1000000-0000-4000-8000-000000000001' $$,
  array[false], 'the removal is logged as lost access (for the member''s next pull)');
select tests.authenticate_as('members_owner');
select results_eq($$ with d as (delete from public.list_members where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = (select auth.uid()) returning 1)
                    select count(*)::int from d $$, array[1], 'a member (not the last owner) leaves the list');
select is_empty($$ select 1 from public.lists where id = 'd1000000-0000-4000-8000-000000000001' $$, 'after leaving, the list is gone from their view');

-- ------------------------------------------------------------ anon and service role
select tests.authenticate_as_anon();
select throws_ok($$ select 1 from public.list_members $$, '42501', null, 'anon cannot read memberships');
select throws_ok($$ delete from public.list_members $$, '42501', null, 'anon cannot delete memberships');
select tests.authenticate_as_service_role();
select results_eq($$ select user_id from public.list_members where list_id = 'd1000000-0000-4000-8000-000000000001' $$,
  $$ values (tests.get_supabase_uid('members_editor')) $$, 'the service role sees every membership: one owner left');
select throws_ok($$ delete from public.list_members where list_id = 'd1000000-0000-4000-8000-000000000001' $$,
  '23514', null, 'not even the service role leaves a list without an owner');

-- ------------------------------------------------------------ account deletion
select tests.clear_authentication();
delete from auth.users where id = tests.get_supabase_uid('members_editor');
select is_empty($$ select 1 from public.lists where id = 'd1000000-0000-4000-8000-000000000001' $$,
  'deleting the account of the last member deletes the list nobody could reach any more');

select * from finish();
rollback;
