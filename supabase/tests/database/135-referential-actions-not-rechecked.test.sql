-- A foreign key's action (on delete set null, cascade) is not the user's write
-- (migration 20261128002000_referential_actions_not_rechecked): Postgres runs it
-- as the referencing table's owner with RLS off but fires its AFTER triggers as
-- the user, so the recheck triggers of step 3 (docs/security-model.md) carry
-- `when (current_user = 'authenticated')`, evaluated as the statement ends:
--   - every trigger of recheck_task_writes() and recheck_write_into_list() has
--     that WHEN (an app's own table made with the earlier recipe fails here);
--   - Bob deletes his own task, and his own list, while a row in a list he has
--     left (or was never in) points at the task `on delete set null`: tasks
--     (a self-reference added here) and a table of the app's own;
--   - the user's own statements are still judged, and so is one an app's
--     SECURITY INVOKER trigger runs for them (RLS judges it too); a SECURITY
--     DEFINER trigger's statement is not (nor is it by RLS).
begin;
select plan(12);

select from tests.create_supabase_user('ra_alice');
select from tests.create_supabase_user('ra_bob');

create temporary table ids as select
  tests.get_supabase_uid('ra_alice') as alice, tests.get_supabase_uid('ra_bob') as bob,
  'ea000000-0000-4000-8000-00000000000a'::uuid as list_a, 'ea000000-0000-4000-8000-00000000000b'::uuid as list_b,
  'ea000000-0000-4000-8000-0000000000c1'::uuid as bobs_task, 'ea000000-0000-4000-8000-0000000000c2'::uuid as alices_task,
  'ea000000-0000-4000-8000-0000000000c3'::uuid as bobs_other, 'ea000000-0000-4000-8000-0000000000c4'::uuid as alices_other,
  'ea000000-0000-4000-8000-0000000000c5'::uuid as bobs_third, 'ea000000-0000-4000-8000-0000000000d1'::uuid as note;
grant select on ids to authenticated;

-- A task may point at another (subtasks), and an app's own table scoped by a list points at tasks;
-- its policies let every statement through, so that only the recheck judges it; its recheck
-- triggers are step 3's.
alter table public.tasks add column tidesync_test_parent_id uuid references public.tasks (id) on delete set null;
grant insert (tidesync_test_parent_id), update (tidesync_test_parent_id) on public.tasks to authenticated;
create table public.tidesync_test_ra_notes (id uuid primary key, list_id uuid not null, task_id uuid references public.tasks (id) on delete set null, body text,
  task_named uuid); -- a reference without a foreign key, cleared by the app's own trigger below
alter table public.tidesync_test_ra_notes enable row level security;
create policy "ra" on public.tidesync_test_ra_notes for all to authenticated using (true) with check (true);
grant select, insert, update on public.tidesync_test_ra_notes to authenticated;
create trigger writer_role_rechecked_on_insert after insert on public.tidesync_test_ra_notes referencing new table as new_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id');
create trigger writer_role_rechecked_on_update after update on public.tidesync_test_ra_notes referencing old table as old_rows new table as new_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id');
create trigger writer_role_rechecked_on_delete after delete on public.tidesync_test_ra_notes referencing old table as old_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id');

-- ------------------------------------------------------------ structure
select is_empty($$ select t.tgrelid::regclass::text || '.' || t.tgname from pg_trigger t
                    where t.tgfoid in ('app_private.recheck_task_writes()'::regprocedure, 'app_private.recheck_write_into_list()'::regprocedure)
                      and pg_get_triggerdef(t.oid) not like '% FOR EACH STATEMENT WHEN ((CURRENT_USER = ''authenticated''::name)) EXECUTE %' $$,
  'every recheck trigger of tasks and of an app''s own tables fires only for a statement run as authenticated (docs/security-model.md, step 3)');

-- ------------------------------------------------------------ the story
-- Alice's list A, Bob an editor of it; Bob's task in A; Alice's task and note in A point at it.
select tests.authenticate_as('ra_alice');
insert into public.lists (id, title) values ((select list_a from ids), 'A');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) select list_a, bob, 'editor' from ids;
select tests.authenticate_as('ra_bob');
insert into public.lists (id, title) values ((select list_b from ids), 'B');
insert into public.tasks (id, list_id, title) values ((select bobs_task from ids), (select list_a from ids), 'Bob''s');
select tests.authenticate_as('ra_alice');
insert into public.tasks (id, list_id, title, tidesync_test_parent_id) values ((select alices_task from ids), (select list_a from ids), 'sub', (select bobs_task from ids));
insert into public.tidesync_test_ra_notes (id, list_id, task_id, body) values ((select note from ids), (select list_a from ids), (select bobs_task from ids), 'about it');
-- Bob moves his task into his list B (the references stay); Alice removes Bob from A.
select tests.authenticate_as('ra_bob');
update public.tasks set list_id = (select list_b from ids) where id = (select bobs_task from ids);
select tests.authenticate_as('ra_alice');
delete from public.list_members where list_id = (select list_a from ids) and user_id = (select bob from ids);

select tests.authenticate_as('ra_bob');
select lives_ok($$ delete from public.tasks where id = (select bobs_task from ids) $$,
  'Bob deletes his own task, which a task and a note in a list he has left point at (on delete set null)');
select tests.clear_authentication();
select results_eq($$ select (select tidesync_test_parent_id from public.tasks where id = (select alices_task from ids)),
                            (select task_id from public.tidesync_test_ra_notes where id = (select note from ids)) $$,
  $$ values (null::uuid, null::uuid) $$, 'the references are cleared');
select ok((select s.field_versions ? 'tidesync_test_parent_id' from app_private.sync_records s where s.collection = 'tasks' and s.id = (select alices_task from ids)),
  'and Alice''s task''s change is recorded for her devices');

-- A reference from a list Bob was never in (tasks have no guard on tidesync_test_parent_id), to a task in his
-- list: he deletes the list, whose cascade deletes the task.
select tests.authenticate_as('ra_bob');
insert into public.tasks (id, list_id, title) values ((select bobs_other from ids), (select list_b from ids), 'Bob''s other');
select tests.authenticate_as('ra_alice');
insert into public.tasks (id, list_id, title, tidesync_test_parent_id) values ((select alices_other from ids), (select alice from ids), 'hers', (select bobs_other from ids));
select tests.authenticate_as('ra_bob');
select lives_ok($$ delete from public.lists where id = (select list_b from ids) $$,
  'Bob deletes his own list, whose task a task in Alice''s private list points at');
select tests.clear_authentication();
select results_eq($$ select count(*)::int, count(tidesync_test_parent_id)::int from public.tasks where id in ((select bobs_other from ids), (select alices_other from ids)) $$,
  $$ values (1, 0) $$, 'his task is gone, her reference cleared');

-- ------------------------------------------------------------ the user's own writes are still judged
select tests.authenticate_as('ra_bob');
select throws_ok($$ insert into public.tidesync_test_ra_notes (id, list_id, body) values (gen_random_uuid(), (select list_a from ids), 'x') $$,
  '42501', null, 'Bob''s own insert into a list he has left is refused');
select throws_ok($$ update public.tidesync_test_ra_notes set body = 'x' where id = (select note from ids) $$,
  '42501', null, 'so is his own update of a row in it');
select lives_ok($$ insert into public.tidesync_test_ra_notes (id, list_id, body) values (gen_random_uuid(), (select bob from ids), 'mine') $$,
  'his insert into his own list goes');

-- An app's own trigger clearing a reference by hand: run as the user (SECURITY INVOKER), its
-- statement is the user's write.
select tests.clear_authentication();
create function pg_temp.ra_forget_task() returns trigger language plpgsql set search_path = '' as $$
begin
  update public.tidesync_test_ra_notes set task_named = null where task_named = old.id;
  return null;
end $$;
create trigger ra_forget_task after delete on public.tasks for each row execute function pg_temp.ra_forget_task();
select tests.authenticate_as('ra_bob');
insert into public.tasks (id, list_id, title) values ((select bobs_third from ids), (select bob from ids), 'third');
select tests.authenticate_as('ra_alice');
update public.tidesync_test_ra_notes set task_named = (select bobs_third from ids) where id = (select note from ids);
select tests.authenticate_as('ra_bob');
select throws_ok($$ delete from public.tasks where id = (select bobs_third from ids) $$,
  '42501', null, 'a SECURITY INVOKER trigger''s update runs as Bob: the recheck judges it as his write into A');
select tests.clear_authentication();
alter function pg_temp.ra_forget_task() security definer;
select tests.authenticate_as('ra_bob');
select lives_ok($$ delete from public.tasks where id = (select bobs_third from ids) $$,
  'a SECURITY DEFINER trigger''s update is the owner''s, as a foreign key''s action: not judged');
select tests.clear_authentication();
select is((select task_named from public.tidesync_test_ra_notes where id = (select note from ids)), null::uuid, 'and it cleared the note''s reference');

select * from finish();
rollback;
