-- Every synced table scoped by a list (its scope column a foreign key to
-- public.lists; not a membership table) has step 3's three recheck triggers
-- (docs/security-model.md): writer_role_rechecked_on_insert (new rows),
-- _on_update (old and new rows) and _on_delete (old rows), each per statement,
-- after, when (current_user = 'authenticated'). Without them a member removed
-- while his write waited for a lock still wrote into the list
-- (tests/integration/sync-recipe-rechecks.test.ts). app_private.list_writes_not_rechecked()
-- names the tables and what they lack; `npm run generate` refuses them by it
-- (migration 20261128005600). Any function may judge (tasks runs its static
-- one); the names are the rule.
begin;
select plan(11);

select is_empty($$ select * from app_private.list_writes_not_rechecked() $$,
  'every synced table scoped by a list rechecks its inserts, updates and deletes (docs/security-model.md, step 3)');
select is(tests.function_callers('app_private.list_writes_not_rechecked()'), '{}', 'no API role may run it');

-- docs/sync.md's table before its recipe held the triggers.
create table public.tidesync_test_rc_notes (
  id uuid primary key default gen_random_uuid(),
  list_id uuid not null references public.lists (id) on delete cascade,
  body text not null
);
alter table public.tidesync_test_rc_notes enable row level security;
grant select, insert (id, list_id, body), update (id, list_id, body), delete on public.tidesync_test_rc_notes to authenticated;
select app_private.enable_sync('public.tidesync_test_rc_notes', 'list_id');

select results_eq($$ select table_name, scope_column, missing from app_private.list_writes_not_rechecked() $$,
  $$ values ('public.tidesync_test_rc_notes', 'list_id', array['writer_role_rechecked_on_insert', 'writer_role_rechecked_on_update', 'writer_role_rechecked_on_delete']) $$,
  'a synced table scoped by a list without the triggers is named, with all three');

-- The earlier recipe: insert, and update with its new rows only.
create trigger writer_role_rechecked_on_insert after insert on public.tidesync_test_rc_notes referencing new table as new_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id');
create trigger writer_role_rechecked_on_update after update on public.tidesync_test_rc_notes referencing new table as new_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id');
select results_eq($$ select missing from app_private.list_writes_not_rechecked() $$,
  $$ values (array['writer_role_rechecked_on_update', 'writer_role_rechecked_on_delete']) $$,
  'one made with the earlier recipe lacks the update''s old rows and the delete');

-- Without the WHEN, a foreign key's action would be judged as the user's write (pgTAP 135).
create or replace trigger writer_role_rechecked_on_update after update on public.tidesync_test_rc_notes referencing old table as old_rows new table as new_rows
  for each statement execute function app_private.recheck_write_into_list('editor', 'list_id');
create trigger writer_role_rechecked_on_delete after delete on public.tidesync_test_rc_notes referencing old table as old_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id');
select results_eq($$ select missing from app_private.list_writes_not_rechecked() $$,
  $$ values (array['writer_role_rechecked_on_update']) $$, 'a trigger without the WHEN does not count');

create or replace trigger writer_role_rechecked_on_update after update on public.tidesync_test_rc_notes referencing old table as old_rows new table as new_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id');
select is_empty($$ select * from app_private.list_writes_not_rechecked() $$, 'with step 3''s three triggers the table is not named');

alter table public.tidesync_test_rc_notes disable trigger writer_role_rechecked_on_delete;
select results_eq($$ select missing from app_private.list_writes_not_rechecked() $$,
  $$ values (array['writer_role_rechecked_on_delete']) $$, 'a disabled one does not count');
alter table public.tidesync_test_rc_notes enable replica trigger writer_role_rechecked_on_delete;
select results_eq($$ select missing from app_private.list_writes_not_rechecked() $$,
  $$ values (array['writer_role_rechecked_on_delete']) $$, 'a replica-only one (it never fires for PostgREST or the api function) does not count');
alter table public.tidesync_test_rc_notes enable always trigger writer_role_rechecked_on_delete;
select is_empty($$ select * from app_private.list_writes_not_rechecked() $$, 'one enabled always counts');
alter table public.tidesync_test_rc_notes enable trigger writer_role_rechecked_on_delete;

-- Not scoped by a list: a table that is not synced, and a synced one whose scope is another scope table.
create table public.tidesync_test_rc_unsynced (id uuid primary key, list_id uuid not null references public.lists (id));
create table public.tidesync_test_rc_boards (id uuid primary key, created_by uuid not null references auth.users (id) on delete cascade);
alter table public.tidesync_test_rc_boards enable row level security;
create table public.tidesync_test_rc_board_members (board_id uuid primary key references public.tidesync_test_rc_boards (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade);
select app_private.enable_sync_membership('public.tidesync_test_rc_board_members', 'board_id', 'user_id');
select app_private.enable_sync('public.tidesync_test_rc_boards', 'id');
create table public.tidesync_test_rc_cards (id uuid primary key, board_id uuid not null references public.tidesync_test_rc_boards (id) on delete cascade);
alter table public.tidesync_test_rc_cards enable row level security;
select app_private.enable_sync('public.tidesync_test_rc_cards', 'board_id');
select is_empty($$ select * from app_private.list_writes_not_rechecked() $$,
  'tables not synced, scope tables, membership tables and tables of another scope are not named');

-- Any function may judge: the names and the shape are the rule (tasks runs a static one).
select ok(exists (select 1 from pg_trigger t where t.tgrelid = 'public.tasks'::regclass
                   and t.tgfoid = 'app_private.recheck_task_writes()'::regprocedure),
  '(tasks is judged by its own static function, and is not named)');

select * from finish();
rollback;
