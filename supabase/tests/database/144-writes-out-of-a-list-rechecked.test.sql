-- A write that takes rows out of a list (a delete, a move to another list) is
-- judged by its writer's role as last committed, as one into a list is
-- (migration 20261128003400; 129-writes-judged-after-waits for the rule):
--   - the recheck triggers of tasks, and those of an app's own tables made
--     with docs/security-model.md's step 3, fire after delete (old_rows) and
--     after update with old_rows beside new_rows (an app's table made with
--     the earlier recipe fails here);
--   - an editor removed from a list while his delete, or his move of a task
--     out of it, ran is refused 42501 (before: both went through, the move
--     keeping the owner's task in his own list); the removal is made here by
--     a trigger as the statement runs, standing in for one that commits while
--     the write waits for a row lock (tests/integration/role-loss-races.test.ts);
--   - what the policies allow still goes: an editor's delete and moves, an
--     owner's delete of the list (its cascade is a foreign key's action, run
--     as the table's owner: not rechecked), a statement that deletes nothing;
--   - an app's table whose update trigger has no old table (the earlier
--     recipe) still works, judging the destination only.
begin;
select plan(18);

select from tests.create_supabase_user('wo_alice');
select from tests.create_supabase_user('wo_bob');
select from tests.create_supabase_user('wo_viewer');

create temporary table ids as select
  tests.get_supabase_uid('wo_alice') as alice, tests.get_supabase_uid('wo_bob') as bob,
  'ec000000-0000-4000-8000-00000000000a'::uuid as list_a, 'ec000000-0000-4000-8000-00000000000b'::uuid as list_b,
  'ec000000-0000-4000-8000-0000000000c1'::uuid as task_x, 'ec000000-0000-4000-8000-0000000000c2'::uuid as task_y,
  'ec000000-0000-4000-8000-0000000000c3'::uuid as task_z;
grant select on ids to authenticated;

-- An app's own table scoped by a list, with step 3's four triggers; its policies let every
-- statement through, so that only the recheck judges it.
create table public.tidesync_test_wo_notes (id uuid primary key, list_id uuid not null);
alter table public.tidesync_test_wo_notes enable row level security;
create policy "wo" on public.tidesync_test_wo_notes for all to authenticated using (true) with check (true);
grant select, insert, update, delete on public.tidesync_test_wo_notes to authenticated;
create trigger writer_role_rechecked_on_insert after insert on public.tidesync_test_wo_notes referencing new table as new_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id');
create trigger writer_role_rechecked_on_update after update on public.tidesync_test_wo_notes referencing old table as old_rows new table as new_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id');
create trigger writer_role_rechecked_on_delete after delete on public.tidesync_test_wo_notes referencing old table as old_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id');

-- ------------------------------------------------------------ structure
select is(array(select t.tgname || ' ' || (t.tgoldtable is not null)
                  from pg_trigger t where t.tgrelid = 'public.tasks'::regclass and t.tgfoid = 'app_private.recheck_task_writes()'::regprocedure order by 1),
  array['writer_role_rechecked_on_delete true', 'writer_role_rechecked_on_insert false', 'writer_role_rechecked_on_update true'],
  'tasks: the recheck fires after insert, after update with the old rows, and after delete');
select is_empty($$ select i.tgrelid::regclass::text from pg_trigger i
                    where i.tgfoid in ('app_private.recheck_task_writes()'::regprocedure, 'app_private.recheck_write_into_list()'::regprocedure)
                      and i.tgtype & 4 <> 0 -- INSERT
                      and not (exists (select 1 from pg_trigger u where u.tgrelid = i.tgrelid and u.tgfoid = i.tgfoid and u.tgtype & 16 <> 0 and u.tgoldtable is not null)
                           and exists (select 1 from pg_trigger d where d.tgrelid = i.tgrelid and d.tgfoid = i.tgfoid and d.tgtype & 8 <> 0 and d.tgoldtable is not null)) $$,
  'every table rechecked on insert is rechecked after update with its old rows and after delete (docs/security-model.md, step 3)');

-- ------------------------------------------------------------ the story
-- Alice's list A, Bob an editor of it and the viewer a viewer; Alice's tasks X, Y, Z in A; Bob's list B.
select tests.authenticate_as('wo_alice');
insert into public.lists (id, title) values ((select list_a from ids), 'A');
insert into public.tasks (id, list_id, title) select task_x, list_a, 'x' from ids union all select task_y, list_a, 'y' from ids
  union all select task_z, list_a, 'z' from ids;
insert into public.tidesync_test_wo_notes (id, list_id) select task_x, list_a from ids union all select task_y, list_a from ids;
select tests.authenticate_as('wo_bob');
insert into public.lists (id, title) values ((select list_b from ids), 'B');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role)
  select list_a, bob, 'editor' from ids union all select list_a, tests.get_supabase_uid('wo_viewer'), 'viewer' from ids;

-- While Bob's statement runs, after its policy check, Alice's removal of him lands: a row
-- trigger that removes him as the tables' owner does.
create function pg_temp.wo_bob_removed_meanwhile() returns trigger language plpgsql security definer set search_path = '' as $$
begin
  delete from public.list_members m using pg_temp.ids i where m.list_id = i.list_a and m.user_id = i.bob;
  return case tg_op when 'DELETE' then old else new end;
end $$;
create trigger wo_bob_removed_meanwhile before update or delete on public.tasks for each row execute function pg_temp.wo_bob_removed_meanwhile();
create trigger wo_bob_removed_meanwhile before update or delete on public.tidesync_test_wo_notes for each row execute function pg_temp.wo_bob_removed_meanwhile();

select tests.authenticate_as('wo_bob');
select throws_ok($$ delete from public.tasks where id = (select task_y from ids) $$,
  '42501', format('your role in list %s does not allow this write (as last committed: it may have changed while the write waited)', (select list_a from ids)),
  'Bob''s delete of a task, during which he lost the list, is refused');
select throws_ok($$ update public.tasks set list_id = (select list_b from ids) where id = (select task_x from ids) $$,
  '42501', format('your role in list %s does not allow this write (as last committed: it may have changed while the write waited)', (select list_a from ids)),
  'so is his move of a task out of it into his own list');
select throws_ok($$ update public.tasks set title = 'bob' where id = (select task_x from ids) $$,
  '42501', format('your role in list %s does not allow this write (as last committed: it may have changed while the write waited)', (select list_a from ids)),
  'and, as before, his edit of a task in it');
select throws_ok($$ delete from public.tidesync_test_wo_notes where id = (select task_y from ids) $$,
  '42501', format('your role in list %s does not allow this write (as last committed: it may have changed while the write waited)', (select list_a from ids)),
  'an app''s own table (step 3): his delete is refused');
select throws_ok($$ update public.tidesync_test_wo_notes set list_id = (select list_b from ids) where id = (select task_x from ids) $$,
  '42501', format('your role in list %s does not allow this write (as last committed: it may have changed while the write waited)', (select list_a from ids)),
  'and so is his move out of the list');
select tests.clear_authentication();
select results_eq($$ select t.id, t.list_id from public.tasks t where t.id in (select task_x from ids union all select task_y from ids) order by 1 $$,
  $$ select task_x, list_a from ids union all select task_y, list_a from ids $$,
  'Alice''s tasks are still hers, in her list');
select results_eq($$ select (select count(*)::int from public.list_members m, ids i where m.list_id = i.list_a and m.user_id = i.bob) $$,
  array[1], '(each refusal rolled the removal back with the write)');
drop trigger wo_bob_removed_meanwhile on public.tasks;
drop trigger wo_bob_removed_meanwhile on public.tidesync_test_wo_notes;

-- ------------------------------------------------------------ what the policies allow still goes
select tests.authenticate_as('wo_bob');
select lives_ok($$ update public.tasks set list_id = (select list_b from ids) where id = (select task_x from ids) $$,
  'an editor of both lists moves a task from one into the other');
select lives_ok($$ update public.tasks set list_id = (select list_a from ids) where id = (select task_x from ids) $$,
  'and back');
select lives_ok($$ delete from public.tasks where id = (select task_y from ids) $$, 'an editor deletes a task');
select lives_ok($$ update public.tidesync_test_wo_notes set list_id = (select list_b from ids) where id = (select task_x from ids) $$,
  'an app''s own table: an editor of both lists moves a row');
select lives_ok($$ delete from public.tidesync_test_wo_notes where id = (select task_x from ids) $$, 'and deletes it');
select tests.authenticate_as('wo_viewer');
select results_eq($$ with d as (delete from public.tasks where id = (select task_z from ids) returning 1) select count(*)::int from d $$,
  array[0], 'a viewer''s delete deletes nothing, and the recheck of no row refuses nothing');

-- An app's table whose update trigger was made with the earlier recipe (new rows only).
select tests.clear_authentication();
create or replace trigger writer_role_rechecked_on_update after update on public.tidesync_test_wo_notes referencing new table as new_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id');
insert into public.tidesync_test_wo_notes (id, list_id) select task_z, list_a from ids;
select tests.authenticate_as('wo_bob');
select lives_ok($$ update public.tidesync_test_wo_notes set list_id = (select list_b from ids) where id = (select task_z from ids) $$,
  'a table rechecked with the earlier recipe still updates (judging the destination only)');

select tests.authenticate_as('wo_alice');
select lives_ok($$ delete from public.lists where id = (select list_a from ids) $$,
  'Alice deletes her list: its tasks go by the cascade, a foreign key''s action, not rechecked');
select tests.clear_authentication();
select is((select count(*)::int from public.tasks t, ids i where t.list_id = i.list_a), 0, 'with its tasks');

select * from finish();
rollback;
