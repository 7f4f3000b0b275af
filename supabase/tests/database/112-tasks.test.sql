-- public.tasks (every task belongs to a list): RLS and exact policy names,
-- grants and column privileges, and per role (owner, editor, viewer,
-- non-member, anon, service role) who reads, adds, changes, moves and
-- deletes tasks. A refused write is asserted with its message: the policy's own
-- ('new row violates row-level security policy'), or a missing privilege's; the
-- recheck triggers raise 42501 as well, so the code alone would not tell a
-- wrongly written policy from them.
begin;
select plan(42);

select from tests.create_supabase_user('tasks_owner');
select from tests.create_supabase_user('tasks_editor');
select from tests.create_supabase_user('tasks_viewer');
select from tests.create_supabase_user('tasks_stranger');

-- ------------------------------------------------------------ structure
select ok((select relrowsecurity from pg_class where oid = 'public.tasks'::regclass), 'RLS is enabled on public.tasks');
select policies_are('public', 'tasks', array[
  'Members can read the tasks of their lists',
  'Editors can add tasks to their lists',
  'Editors can change the tasks of their lists',
  'Editors can delete the tasks of their lists'
], 'tasks has exactly its four policies');
select table_privs_are('public', 'tasks', 'authenticated', array['SELECT', 'DELETE'],
  'authenticated reads and deletes tasks at table level (inserts and updates are per column)');
select is(array(select c from unnest(array['id', 'list_id', 'title', 'notes', 'done', 'due_date', 'position', 'created_by', 'created_at']) c
                where has_column_privilege('authenticated', 'public.tasks', c, 'INSERT')),
  array['id', 'list_id', 'title', 'notes', 'done', 'due_date', 'position'], 'authenticated may insert every column but created_by and created_at');
select is(array(select c from unnest(array['id', 'list_id', 'title', 'notes', 'done', 'due_date', 'position', 'created_by', 'created_at']) c
                where has_column_privilege('authenticated', 'public.tasks', c, 'UPDATE')),
  array['id', 'list_id', 'title', 'notes', 'done', 'due_date', 'position'],
  'authenticated may update neither created_by nor created_at; id only to itself (supabase-js upsert sets it; the sync trigger refuses a change)');
select table_privs_are('public', 'tasks', 'anon', '{}'::text[], 'anon has no privilege on tasks');
select table_privs_are('public', 'tasks', 'service_role', array['SELECT', 'INSERT', 'UPDATE', 'DELETE'], 'service_role may do everything');
select is((select array_agg(tgname::text order by tgname) from pg_trigger where tgrelid = 'public.tasks'::regclass and not tgisinternal),
  array['tidesync_hidden_ids_taken', 'tidesync_ids_kept', 'tidesync_refuse_truncate', 'tidesync_track_deletes', 'tidesync_track_inserts', 'tidesync_track_updates', 'writer_role_rechecked_on_delete', 'writer_role_rechecked_on_insert', 'writer_role_rechecked_on_update'],
  'tasks is synced, keeps its ids (168-synced-ids-never-change), answers a hidden id as taken and judges a write by the role after its wait (164-hidden-record-ids-answer-alike, 129-writes-judged-after-waits, 144-writes-out-of-a-list-rechecked)');

select tests.authenticate_as('tasks_owner');
insert into public.lists (id, title) values ('e1000000-0000-4000-8000-000000000001', 'Shared');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('e1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('tasks_editor'), 'editor'),
  ('e1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('tasks_viewer'), 'viewer'),
  -- the viewer's personal list is shared with the editor as viewer: a list the editor may not write
  (tests.get_supabase_uid('tasks_viewer'), tests.get_supabase_uid('tasks_editor'), 'viewer');

-- ------------------------------------------------------------ owner
select tests.authenticate_as('tasks_owner');
select lives_ok($$ insert into public.tasks (id, list_id, title) values ('e1000000-0000-4000-8000-0000000000a1', 'e1000000-0000-4000-8000-000000000001', 'owner task') $$,
  'the owner adds a task');
select results_eq($$ select created_by, done from public.tasks where id = 'e1000000-0000-4000-8000-0000000000a1' $$,
  $$ values ((select auth.uid()), false) $$, 'the database sets created_by; defaults apply');
select throws_ok($$ insert into public.tasks (list_id, title, created_by) values ('e1000000-0000-4000-8000-000000000001', 'forged', tests.get_supabase_uid('tasks_editor')) $$,
  '42501', 'permission denied for table tasks', 'a task cannot be created in someone else''s name');
select throws_ok($$ insert into public.tasks (list_id, title) values ('e1000000-0000-4000-8000-000000000001', repeat('x', 201)) $$,
  '23514', null, 'a title is 1 to 200 characters');

-- ------------------------------------------------------------ editor
select tests.authenticate_as('tasks_editor');
select results_eq($$ select title from public.tasks where list_id = 'e1000000-0000-4000-8000-000000000001' $$, array['owner task'], 'an editor reads the list''s tasks');
select lives_ok($$ insert into public.tasks (id, list_id, title) values ('e1000000-0000-4000-8000-0000000000b1', 'e1000000-0000-4000-8000-000000000001', 'editor task') $$,
  'an editor adds a task');
select results_eq($$ with u as (update public.tasks set done = true where id = 'e1000000-0000-4000-8000-0000000000a1' returning 1) select count(*)::int from u $$,
  array[1], 'an editor changes a task someone else created');
select throws_ok($$ update public.tasks set created_by = (select auth.uid()) where id = 'e1000000-0000-4000-8000-0000000000a1' $$,
  '42501', 'permission denied for table tasks', 'an editor cannot rewrite created_by');
select throws_ok($$ update public.tasks set list_id = tests.get_supabase_uid('tasks_viewer') where id = 'e1000000-0000-4000-8000-0000000000b1' $$,
  '42501', 'new row violates row-level security policy for table "tasks"', 'an editor cannot move a task into a list where they are only a viewer');
select throws_ok($$ insert into public.tasks (list_id, title) values (tests.get_supabase_uid('tasks_viewer'), 'sneaky') $$,
  '42501', 'new row violates row-level security policy for table "tasks"', 'an editor cannot add a task to a list where they are only a viewer');
select lives_ok($$ update public.tasks set list_id = (select auth.uid()) where id = 'e1000000-0000-4000-8000-0000000000b1' $$,
  'an editor moves a task to another list they can write (their personal list)');
select results_eq($$ with d as (delete from public.tasks where id = 'e1000000-0000-4000-8000-0000000000b1' returning 1) select count(*)::int from d $$,
  array[1], 'an editor deletes a task');
-- What supabase-js upsert() sends (PostgREST: every column it was given in the SET list, the key included).
select lives_ok($$ insert into public.tasks (id, list_id, title) values ('e1000000-0000-4000-8000-0000000000b2', 'e1000000-0000-4000-8000-000000000001', 'upserted')
                   on conflict (id) do update set id = excluded.id, list_id = excluded.list_id, title = excluded.title $$,
  'an editor upserts a new task (supabase-js upsert)');
select lives_ok($$ insert into public.tasks (id, list_id, title) values ('e1000000-0000-4000-8000-0000000000b2', 'e1000000-0000-4000-8000-000000000001', 'upserted again')
                   on conflict (id) do update set id = excluded.id, list_id = excluded.list_id, title = excluded.title $$,
  'an editor upserts an existing task');
select results_eq($$ select title from public.tasks where id = 'e1000000-0000-4000-8000-0000000000b2' $$, array['upserted again'], 'the second upsert updated the task');
select throws_ok($$ update public.tasks set id = 'e1000000-0000-4000-8000-0000000000b3' where id = 'e1000000-0000-4000-8000-0000000000b2' $$,
  '23514', null, 'a task''s id cannot change');
delete from public.tasks where id = 'e1000000-0000-4000-8000-0000000000b2';

-- ------------------------------------------------------------ viewer
select tests.authenticate_as('tasks_viewer');
select results_eq($$ select title, done from public.tasks where list_id = 'e1000000-0000-4000-8000-000000000001' $$,
  $$ values ('owner task'::text, true) $$, 'a viewer reads the list''s tasks');
select throws_ok($$ insert into public.tasks (list_id, title) values ('e1000000-0000-4000-8000-000000000001', 'viewer task') $$,
  '42501', 'new row violates row-level security policy for table "tasks"', 'a viewer cannot add a task');
select results_eq($$ with u as (update public.tasks set title = 'viewer edit' where id = 'e1000000-0000-4000-8000-0000000000a1' returning 1) select count(*)::int from u $$,
  array[0], 'a viewer cannot change a task');
select results_eq($$ with d as (delete from public.tasks where id = 'e1000000-0000-4000-8000-0000000000a1' returning 1) select count(*)::int from d $$,
  array[0], 'a viewer cannot delete a task');
select results_eq($$ with u as (update public.tasks set list_id = (select auth.uid()) where id = 'e1000000-0000-4000-8000-0000000000a1' returning 1) select count(*)::int from u $$,
  array[0], 'a viewer cannot take a task away into their own list');

-- ------------------------------------------------------------ non-member
select tests.authenticate_as('tasks_stranger');
select is_empty($$ select 1 from public.tasks where list_id = 'e1000000-0000-4000-8000-000000000001' $$, 'a non-member sees none of the list''s tasks');
select throws_ok($$ insert into public.tasks (list_id, title) values ('e1000000-0000-4000-8000-000000000001', 'intruder') $$,
  '42501', 'new row violates row-level security policy for table "tasks"', 'a non-member cannot add a task to the list');
select results_eq($$ with u as (update public.tasks set title = 'pwned' where id = 'e1000000-0000-4000-8000-0000000000a1' returning 1) select count(*)::int from u $$,
  array[0], 'a non-member cannot change a task of the list');
select results_eq($$ with d as (delete from public.tasks where id = 'e1000000-0000-4000-8000-0000000000a1' returning 1) select count(*)::int from d $$,
  array[0], 'a non-member cannot delete a task of the list');
select lives_ok($$ insert into public.tasks (list_id, title) values ((select auth.uid()), 'my own') $$, 'a user adds tasks to their personal list');

-- ------------------------------------------------------------ anon
select tests.authenticate_as_anon();
select throws_ok($$ select 1 from public.tasks $$, '42501', 'permission denied for table tasks', 'anon cannot read tasks');
select throws_ok($$ insert into public.tasks (list_id, title) values ('e1000000-0000-4000-8000-000000000001', 'anon') $$, '42501', 'permission denied for table tasks', 'anon cannot add tasks');
select throws_ok($$ update public.tasks set done = false $$, '42501', 'permission denied for table tasks', 'anon cannot change tasks');
select throws_ok($$ delete from public.tasks $$, '42501', 'permission denied for table tasks', 'anon cannot delete tasks');

-- ------------------------------------------------------------ service role
select tests.authenticate_as_service_role();
select results_eq($$ select count(*)::int from public.tasks where list_id = 'e1000000-0000-4000-8000-000000000001' $$, array[1],
  'the service role reads every task (it bypasses RLS)');
select lives_ok($$ insert into public.tasks (list_id, title, created_by) values ('e1000000-0000-4000-8000-000000000001', 'by the server', tests.get_supabase_uid('tasks_owner')) $$,
  'the service role writes any task, created_by included');
select throws_ok($$ insert into public.tasks (title) values ('no list') $$, '23502', null, 'a task needs a list (not even the service role writes one without)');

select tests.clear_authentication();
select results_eq($$ select title, done from public.tasks where id = 'e1000000-0000-4000-8000-0000000000a1' $$,
  $$ values ('owner task'::text, true) $$, 'after all that, the owner''s task holds only the editor''s change');

select * from finish();
rollback;
