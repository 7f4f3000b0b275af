-- A write as authenticated is judged again by the writer's role as last committed
-- (migration 20261127000400; the races themselves, which need two sessions, are in
-- tests/integration/role-loss-races.test.ts):
--   - require_list_role and the recheck triggers: callers, SECURITY DEFINER only
--     where needed, empty search_path; the triggers on lists, tasks, list_members,
--     the list_members ones firing after the triggers whose locks they wait for;
--   - require_list_role raises 42501 for a list where the caller lacks the role;
--   - what the policies allow still goes: an editor's task and rename, an owner
--     stepping down, a member leaving, an owner removing a member and deleting
--     the list (its cascade takes the owner's own membership);
--   - the service role and the owner are not checked.
begin;
select plan(22);

select from tests.create_supabase_user('wj_owner');
select from tests.create_supabase_user('wj_owner2');
select from tests.create_supabase_user('wj_editor');
select from tests.create_supabase_user('wj_viewer');

-- ------------------------------------------------------------ structure
select is(tests.function_callers('app_private.require_list_role(uuid[], text)'), array['authenticated'], 'require_list_role: authenticated only');
select is(tests.function_callers('app_private.recheck_list_write()'), '{}'::text[], 'recheck_list_write (trigger): no API role');
select is(tests.function_callers('app_private.recheck_write_into_list()'), '{}'::text[], 'recheck_write_into_list (trigger): no API role');
select is(tests.function_callers('app_private.recheck_task_writes()'), '{}'::text[], 'recheck_task_writes (trigger): no API role');
select is(tests.function_callers('app_private.recheck_list_member_change()'), '{}'::text[], 'recheck_list_member_change (trigger): no API role');
select is(array(select p.oid::regprocedure::text from pg_proc p
                 where p.oid in ('app_private.require_list_role(uuid[], text)'::regprocedure, 'app_private.recheck_list_write()'::regprocedure,
                                 'app_private.recheck_write_into_list()'::regprocedure, 'app_private.recheck_list_member_change()'::regprocedure,
                                 'app_private.recheck_task_writes()'::regprocedure)
                   and p.proconfig @> array['search_path=""'] and p.provolatile = 'v'
                 order by p.prosecdef desc, 1),
  array['app_private.require_list_role(uuid[],text)', 'app_private.recheck_list_member_change()', 'app_private.recheck_list_write()',
        'app_private.recheck_task_writes()', 'app_private.recheck_write_into_list()'],
  'all five VOLATILE with an empty search_path; only require_list_role is SECURITY DEFINER (the triggers read current_user)');
-- The sample's tables only: an app's own tables have theirs too (docs/security-model.md, step 3).
select is(array(select c.relname || '.' || t.tgname from pg_trigger t join pg_class c on c.oid = t.tgrelid
                 where t.tgname like 'writer_role_rechecked%'
                   and c.oid in ('public.lists'::regclass, 'public.tasks'::regclass, 'public.list_members'::regclass) order by 1),
  array['list_members.writer_role_rechecked_on_delete', 'list_members.writer_role_rechecked_on_update', 'lists.writer_role_rechecked',
        'tasks.writer_role_rechecked_on_delete', 'tasks.writer_role_rechecked_on_insert', 'tasks.writer_role_rechecked_on_update'],
  'the recheck triggers of lists, tasks and list_members');
select is(array(select t.tgname || ' ' || t.tgfoid::regproc::text from pg_trigger t
                 where t.tgrelid = 'public.tasks'::regclass and t.tgname like 'writer_role_rechecked%' order by 1),
  array['writer_role_rechecked_on_delete app_private.recheck_task_writes', 'writer_role_rechecked_on_insert app_private.recheck_task_writes',
        'writer_role_rechecked_on_update app_private.recheck_task_writes'],
  'tasks: its three recheck triggers run the static recheck_task_writes (144-writes-out-of-a-list-rechecked)');
-- AFTER triggers of one event fire in name order: the recheck must come after the list locks.
select is_empty($$ select t.tgname from pg_trigger t
                    where t.tgrelid = 'public.list_members'::regclass and not t.tgisinternal
                      and t.tgtype & 2 = 0 -- AFTER
                      and exists (select 1 from pg_trigger r where r.tgrelid = t.tgrelid and r.tgname like 'writer_role_rechecked%'
                                     and r.tgtype & 28 & t.tgtype <> 0 and r.tgname < t.tgname) $$,
  'on list_members, no after-trigger of the same event fires after the recheck');

-- ------------------------------------------------------------ the rule
select tests.authenticate_as('wj_owner');
insert into public.lists (id, title) values ('e1000000-0000-4000-8000-000000000001', 'Shared'), ('e1000000-0000-4000-8000-000000000002', 'Other');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('e1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('wj_owner2'), 'owner'),
  ('e1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('wj_editor'), 'editor'),
  ('e1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('wj_viewer'), 'viewer'),
  ('e1000000-0000-4000-8000-000000000002', tests.get_supabase_uid('wj_editor'), 'editor');

select tests.authenticate_as('wj_editor');
select throws_ok($$ select app_private.require_list_role(array['e1000000-0000-4000-8000-000000000001'::uuid], 'owner') $$,
  '42501', null, 'require_list_role: an editor is refused where an owner is needed');
select lives_ok($$ select app_private.require_list_role(array['e1000000-0000-4000-8000-000000000001'::uuid], 'editor') $$,
  'require_list_role: an editor passes where an editor is needed');
select lives_ok($$ insert into public.tasks (id, list_id, title) values ('e1000000-0000-4000-8000-0000000000a1', 'e1000000-0000-4000-8000-000000000001', 'milk') $$,
  'an editor still adds a task');
select lives_ok($$ update public.lists set title = 'Shared!' where id = 'e1000000-0000-4000-8000-000000000001' $$, 'an editor still renames the list');
select lives_ok($$ delete from public.list_members where list_id = 'e1000000-0000-4000-8000-000000000002' and user_id = (select auth.uid()) $$,
  'a member still leaves a list');

select tests.authenticate_as('wj_owner2');
select lives_ok($$ update public.list_members set role = 'editor' where list_id = 'e1000000-0000-4000-8000-000000000001' and user_id = (select auth.uid()) $$,
  'an owner still steps down to editor (another owner is left)');
select tests.authenticate_as('wj_owner');
select lives_ok($$ delete from public.list_members where list_id = 'e1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('wj_viewer') $$,
  'an owner still removes a member');

select tests.authenticate_as('wj_editor');
select throws_ok($$ select app_private.require_list_role(array['e1000000-0000-4000-8000-000000000001'::uuid, 'e1000000-0000-4000-8000-000000000002'::uuid], 'editor') $$,
  '42501', null, 'require_list_role: one list the caller has left among them is enough to refuse');

-- The generic trigger, for an app's own table scoped by a list (docs/security-model.md).
select tests.clear_authentication();
create table public.tidesync_test_wj_notes (id uuid primary key, list_id uuid not null);
alter table public.tidesync_test_wj_notes enable row level security;
create policy "wj" on public.tidesync_test_wj_notes for all to authenticated using (true) with check (true);
grant insert on public.tidesync_test_wj_notes to authenticated;
create trigger writer_role_rechecked_on_insert after insert on public.tidesync_test_wj_notes referencing new table as new_rows
  for each statement execute function app_private.recheck_write_into_list('editor', 'list_id');
select tests.authenticate_as('wj_editor');
select throws_ok($$ insert into public.tidesync_test_wj_notes values (gen_random_uuid(), 'e1000000-0000-4000-8000-000000000001'),
                                                        (gen_random_uuid(), 'e1000000-0000-4000-8000-000000000002') $$,
  '42501', null, 'recheck_write_into_list: a statement writing into a list its writer has left is refused');
select lives_ok($$ insert into public.tidesync_test_wj_notes values (gen_random_uuid(), 'e1000000-0000-4000-8000-000000000001') $$,
  'recheck_write_into_list: a statement writing only into lists the writer edits goes');

select tests.authenticate_as('wj_owner');
select lives_ok($$ delete from public.lists where id = 'e1000000-0000-4000-8000-000000000001' $$,
  'an owner still deletes the list (its cascade takes the owner''s own membership)');

-- ------------------------------------------------------------ not checked: the service role, the owner
select tests.authenticate_as_service_role();
select lives_ok($$ insert into public.tasks (id, list_id, title) values ('e1000000-0000-4000-8000-0000000000a2', 'e1000000-0000-4000-8000-000000000002', 'bulk') $$,
  'the service role writes into any list (it bypasses RLS on purpose)');
select tests.clear_authentication();
select lives_ok($$ update public.lists set title = 'Renamed by a migration' where id = 'e1000000-0000-4000-8000-000000000002' $$,
  'the owner (migrations, security definer functions) is not checked');

select * from finish();
rollback;
