-- public.lists (sample to-do app, the scope of sync): RLS and exact policy
-- names, grants and column privileges, the personal list every user gets at
-- signup, the creator becoming owner, and per role (owner, editor, viewer,
-- non-member, anon, service role) who reads, updates and deletes a list;
-- deleting a list takes its memberships, tasks and invites with it.
begin;
select plan(45);

select from tests.create_supabase_user('lists_owner');
select from tests.create_supabase_user('lists_editor');
select from tests.create_supabase_user('lists_viewer');
select from tests.create_supabase_user('lists_stranger');

-- ------------------------------------------------------------ structure
select ok((select relrowsecurity from pg_class where oid = 'public.lists'::regclass), 'RLS is enabled on public.lists');
select policies_are('public', 'lists', array[
  'Members can read their lists',
  'Users can create lists',
  'Editors can update their lists',
  'Owners can delete their lists'
], 'lists has exactly its four policies');
select table_privs_are('public', 'lists', 'authenticated', array['SELECT', 'DELETE'],
  'authenticated reads and deletes lists at table level (inserts and updates are per column)');
select table_privs_are('public', 'lists', 'anon', '{}'::text[], 'anon has no privilege on lists');
select table_privs_are('public', 'lists', 'service_role', array['SELECT', 'INSERT', 'UPDATE', 'DELETE'], 'service_role may do everything');
select is(array(select c from unnest(array['id', 'title', 'color', 'position', 'archived', 'created_by', 'created_at']) c
                where has_column_privilege('authenticated', 'public.lists', c, 'INSERT')),
  array['id', 'title', 'color', 'position', 'archived'], 'authenticated may insert every column but created_by and created_at');
select is(array(select c from unnest(array['id', 'title', 'color', 'position', 'archived', 'created_by', 'created_at']) c
                where has_column_privilege('authenticated', 'public.lists', c, 'UPDATE')),
  array['id', 'title', 'color', 'position', 'archived'],
  'authenticated may update only title, color, position and archived, and id to itself (supabase-js upsert sets it; the sync trigger refuses a change; not created_by, created_at)');
select is((select array_agg(tgname::text order by tgname) from pg_trigger where tgrelid = 'public.lists'::regclass and not tgisinternal),
  array['lists_add_creator_as_owner', 'personal_list_id_reserved', 'tidesync_ids_kept', 'tidesync_refuse_truncate', 'tidesync_scope_history_kept', 'tidesync_track_deletes', 'tidesync_track_inserts', 'tidesync_track_updates', 'unjoinable_pokes_forgotten', 'writer_role_rechecked'],
  'lists makes its creator owner, is synced (a scope table: 132-scope-history-kept; its id kept: 168-synced-ids-never-change) and judges a write by the role after its wait (129-writes-judged-after-waits); a deleted handed-over list takes its pokes along (162-deleted-handed-over-list-leaves-no-pokes)');

-- ------------------------------------------------------------ the personal list at signup
select results_eq($$ select title, created_by from public.lists where id = tests.get_supabase_uid('lists_owner') $$,
  $$ values ('Personal'::text, tests.get_supabase_uid('lists_owner')) $$,
  'a new user has a personal list whose id is the user''s id');
select results_eq($$ select user_id, role from public.list_members where list_id = tests.get_supabase_uid('lists_owner') $$,
  $$ values (tests.get_supabase_uid('lists_owner'), 'owner'::text) $$,
  'the user is the only member and owner of their personal list');
select results_eq($$ select deleted, scope_id from app_private.sync_records where collection = 'lists' and id = tests.get_supabase_uid('lists_owner') $$,
  $$ values (false, tests.get_supabase_uid('lists_owner')) $$,
  'the personal list is synced (its own scope)');

-- ------------------------------------------------------------ creating a list
select tests.authenticate_as('lists_owner');
select lives_ok($$ insert into public.lists (id, title, color) values ('c1000000-0000-4000-8000-000000000001', 'Shared', '#112233') $$,
  'a signed-in user creates a list');
select results_eq($$ select created_by from public.lists where id = 'c1000000-0000-4000-8000-000000000001' $$,
  $$ values ((select auth.uid())) $$, 'the database sets created_by to the creator');
select results_eq($$ select user_id, role from public.list_members where list_id = 'c1000000-0000-4000-8000-000000000001' $$,
  $$ values ((select auth.uid()), 'owner'::text) $$, 'the creator becomes the list''s owner');
select throws_ok($$ insert into public.lists (title, created_by) values ('Forged', tests.get_supabase_uid('lists_stranger')) $$,
  '42501', null, 'a user cannot create a list in someone else''s name (created_by is not writable)');
select throws_ok($$ insert into public.lists (title) values ('') $$, '23514', null, 'a list needs a title (1 to 200 characters)');
select throws_ok($$ insert into public.lists (title, color) values ('Bad color', 'red') $$, '23514', null, 'a color is #rrggbb');
-- What supabase-js upsert() sends (PostgREST: every column it was given in the SET list, the key included).
select lives_ok($$ insert into public.lists (id, title) values ('c1000000-0000-4000-8000-000000000002', 'Upserted')
                   on conflict (id) do update set id = excluded.id, title = excluded.title $$,
  'a user upserts a new list (supabase-js upsert)');
select lives_ok($$ insert into public.lists (id, title) values ('c1000000-0000-4000-8000-000000000002', 'Upserted again')
                   on conflict (id) do update set id = excluded.id, title = excluded.title $$,
  'the owner upserts it again: an update');
select throws_ok($$ update public.lists set id = 'c1000000-0000-4000-8000-000000000003' where id = 'c1000000-0000-4000-8000-000000000002' $$,
  '23514', 'the id of a synced row cannot change (table public.lists)',
  'a list''s id cannot change (refused before the policy or the primary key could answer: 168-synced-ids-never-change)');

-- Members joined through invites in real use; here the test inserts them directly.
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('c1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('lists_editor'), 'editor'),
  ('c1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('lists_viewer'), 'viewer');
insert into public.tasks (id, list_id, title) values ('c1000000-0000-4000-8000-0000000000a1', 'c1000000-0000-4000-8000-000000000001', 'a task');

-- ------------------------------------------------------------ viewer
select tests.authenticate_as('lists_viewer');
select results_eq($$ select title from public.lists where id = 'c1000000-0000-4000-8000-000000000001' $$, array['Shared'], 'a viewer reads the list');
select results_eq($$ with u as (update public.lists set title = 'viewer was here' where id = 'c1000000-0000-4000-8000-000000000001' returning 1)
                    select count(*)::int from u $$, array[0], 'a viewer cannot update the list');
select results_eq($$ with d as (delete from public.lists where id = 'c1000000-0000-4000-8000-000000000001' returning 1)
                    select count(*)::int from d $$, array[0], 'a viewer cannot delete the list');
select is_empty($$ select 1 from public.lists where id = tests.get_supabase_uid('lists_owner') $$, 'a viewer does not see the owner''s personal list');

-- ------------------------------------------------------------ editor
select tests.authenticate_as('lists_editor');
select results_eq($$ with u as (update public.lists set title = 'Renamed', archived = true where id = 'c1000000-0000-4000-8000-000000000001' returning 1)
                    select count(*)::int from u $$, array[1], 'an editor updates the list''s fields');
select throws_ok($$ update public.lists set created_by = (select auth.uid()) where id = 'c1000000-0000-4000-8000-000000000001' $$,
  '42501', null, 'an editor cannot rewrite created_by');
select results_eq($$ with d as (delete from public.lists where id = 'c1000000-0000-4000-8000-000000000001' returning 1)
                    select count(*)::int from d $$, array[0], 'an editor cannot delete the list');

-- ------------------------------------------------------------ non-member
select tests.authenticate_as('lists_stranger');
select is_empty($$ select 1 from public.lists where id = 'c1000000-0000-4000-8000-000000000001' $$, 'a non-member does not see the list');
select results_eq($$ select id from public.lists $$, $$ values (tests.get_supabase_uid('lists_stranger')) $$,
  'a non-member sees only their own personal list');
select results_eq($$ with u as (update public.lists set title = 'pwned' where id = 'c1000000-0000-4000-8000-000000000001' returning 1)
                    select count(*)::int from u $$, array[0], 'a non-member cannot update the list');
select results_eq($$ with d as (delete from public.lists where id = 'c1000000-0000-4000-8000-000000000001' returning 1)
                    select count(*)::int from d $$, array[0], 'a non-member cannot delete the list');
select throws_ok($$ update public.lists set id = gen_random_uuid() where id = (select auth.uid()) $$, '23514', null,
  'nobody changes a list''s id');

-- ------------------------------------------------------------ anon
select tests.authenticate_as_anon();
select throws_ok($$ select 1 from public.lists $$, '42501', null, 'anon cannot read lists');
select throws_ok($$ insert into public.lists (title) values ('anon list') $$, '42501', null, 'anon cannot create lists');
select throws_ok($$ update public.lists set title = 'anon' $$, '42501', null, 'anon cannot update lists');
select throws_ok($$ delete from public.lists $$, '42501', null, 'anon cannot delete lists');

-- ------------------------------------------------------------ service role
select tests.authenticate_as_service_role();
select results_eq($$ select title, archived from public.lists where id = 'c1000000-0000-4000-8000-000000000001' $$,
  $$ values ('Renamed'::text, true) $$, 'the service role reads every list (it bypasses RLS)');
select results_eq($$ with u as (update public.lists set archived = false where id = 'c1000000-0000-4000-8000-000000000001' returning 1)
                    select count(*)::int from u $$, array[1], 'the service role updates any list');

-- ------------------------------------------------------------ owner deletes the list
select tests.authenticate_as('lists_owner');
select lives_ok($$ select public.create_list_invite('c1000000-0000-4000-8000-000000000001', 'viewer') $$, 'the owner has a pending invite');
select results_eq($$ with d as (delete from public.lists where id = 'c1000000-0000-4000-8000-000000000001' returning 1)
                    select count(*)::int from d $$, array[1], 'the owner deletes the list');
select tests.clear_authentication();
select is_empty($$ select 1 from public.list_members where list_id = 'c1000000-0000-4000-8000-000000000001' $$,
  'deleting a list removes all its memberships');
select is_empty($$ select 1 from public.tasks where list_id = 'c1000000-0000-4000-8000-000000000001' $$,
  'deleting a list removes its tasks');
select is_empty($$ select 1 from app_private.list_invites where list_id = 'c1000000-0000-4000-8000-000000000001' $$,
  'deleting a list removes its invites');
select results_eq($$ select collection, deleted from app_private.sync_records
                    where id in ('c1000000-0000-4000-8000-000000000001', 'c1000000-0000-4000-8000-0000000000a1') order by collection $$,
  $$ values ('lists'::text, true), ('tasks'::text, true) $$,
  'the list and its task leave tombstones for sync');
select results_eq($$ select user_id, granted from app_private.sync_access
                    where scope_id = 'c1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('lists_editor') $$,
  $$ values (tests.get_supabase_uid('lists_editor'), false) $$,
  'the former members lose access to the deleted list');

select * from finish();
rollback;
