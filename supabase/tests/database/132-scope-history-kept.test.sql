-- A deleted scope row's id (a list's) is created again, while its change
-- entries are kept, only by a member of it when it was deleted (migration
-- 20261128000710): anyone else, as authenticated, is refused as for a taken
-- id (23505 on the primary key), since the new scope's pulls and the
-- sync_records policy would show them the scope's whole history. The owner's
-- delete and re-create in one transaction, the database owner, and an id
-- whose history the purge has taken are not refused. enable_sync installs the
-- trigger on every scope table and disable_sync takes it away.
begin;
select plan(16);

select from tests.create_supabase_user('sh_owner');
select from tests.create_supabase_user('sh_member');
select from tests.create_supabase_user('sh_removed');
select from tests.create_supabase_user('sh_left_before');
select from tests.create_supabase_user('sh_stranger');

-- ------------------------------------------------------------ the list, its members, its delete
-- The owner's list with a task, shared with three others (memberships written by the database
-- owner, as an invite does). This file is one transaction: a loss of access in an earlier one
-- is written as such (its txid).
select tests.authenticate_as('sh_owner');
insert into public.lists (id, title) values ('d1000000-0000-4000-8000-000000000001', 'Team');
insert into public.tasks (id, list_id, title) values ('d2000000-0000-4000-8000-000000000001', 'd1000000-0000-4000-8000-000000000001', 't1');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('d1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('sh_member'), 'viewer'),
  ('d1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('sh_removed'), 'editor'),
  ('d1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('sh_left_before'), 'viewer');
delete from public.list_members where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('sh_left_before');
update app_private.sync_access set txid = '1'
 where user_id = tests.get_supabase_uid('sh_left_before') and scope_id = 'd1000000-0000-4000-8000-000000000001';
-- sh_removed is removed, then a task enters the list after them (same transaction as the delete).
delete from public.list_members where list_id = 'd1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('sh_removed');
select tests.authenticate_as('sh_owner');
insert into public.tasks (id, list_id, title) values ('d2000000-0000-4000-8000-000000000002', 'd1000000-0000-4000-8000-000000000001', 't2');
select lives_ok($$ delete from public.lists where id = 'd1000000-0000-4000-8000-000000000001' $$, 'the owner deletes the list');

-- ------------------------------------------------------------ who may create its id again
select tests.authenticate_as('sh_stranger');
select throws_ok($$ insert into public.lists (id, title) values ('d1000000-0000-4000-8000-000000000001', 'Mine') $$,
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'someone who was never a member: refused as a taken id');
select tests.authenticate_as('sh_left_before');
select throws_ok($$ insert into public.lists (id, title) values ('d1000000-0000-4000-8000-000000000001', 'Mine') $$,
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'a member who left in an earlier transaction than the delete: refused');
select tests.authenticate_as('sh_removed');
select throws_ok($$ insert into public.lists (id, title) values ('d1000000-0000-4000-8000-000000000001', 'Mine') $$,
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'a member removed before a task entered the list: refused');
select is((select count(*)::int from app_private.sync_changes where id = 'd2000000-0000-4000-8000-000000000002'), 0,
  'and still reads no entry of the task that entered after them (a former member reads those from before only)');
select tests.clear_authentication();
select is((select count(*)::int from public.lists where id = 'd1000000-0000-4000-8000-000000000001'), 0, 'the refused creates left no list');
select tests.authenticate_as('sh_member');
select lives_ok($$ insert into public.lists (id, title) values ('d1000000-0000-4000-8000-000000000001', 'Again') $$,
  'a member when it was deleted (they read all of it then) creates it again');
select results_eq($$ select user_id, role from public.list_members where list_id = 'd1000000-0000-4000-8000-000000000001' $$,
  $$ values (tests.get_supabase_uid('sh_member'), 'owner'::text) $$, 'and owns the new list');
select tests.authenticate_as('sh_stranger');
select throws_ok($$ insert into public.lists (id, title) values ('d1000000-0000-4000-8000-000000000001', 'Mine') $$,
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'a live list''s id stays taken (the primary key)');

-- ------------------------------------------------------------ the owner's delete and re-create; the database owner; a forgotten history
select tests.authenticate_as('sh_owner');
insert into public.lists (id, title) values ('d1000000-0000-4000-8000-000000000002', 'Trip');
select lives_ok($$ delete from public.lists where id = 'd1000000-0000-4000-8000-000000000002';
                  insert into public.lists (id, title) values ('d1000000-0000-4000-8000-000000000002', 'Trip again') $$,
  'the owner deletes a list and creates it again in one transaction (a push''s delete and re-create)');
insert into public.lists (id, title) values ('d1000000-0000-4000-8000-000000000003', 'Old');
delete from public.lists where id = 'd1000000-0000-4000-8000-000000000003';
select tests.clear_authentication();
select lives_ok($$ insert into public.lists (id, title) values ('d1000000-0000-4000-8000-000000000003', 'Restored') $$,
  'the database owner (a restore, a support fix) is not refused');
delete from public.lists where id = 'd1000000-0000-4000-8000-000000000003';
delete from app_private.sync_changes where scope_id = 'd1000000-0000-4000-8000-000000000003';
select tests.authenticate_as('sh_stranger');
select lives_ok($$ insert into public.lists (id, title) values ('d1000000-0000-4000-8000-000000000003', 'New') $$,
  'once the purge has taken the scope''s entries, anyone may take the id');

-- ------------------------------------------------------------ installed on scope tables, by enable_sync
select tests.clear_authentication();
select is((select array_agg(tgrelid::regclass::text order by tgrelid::regclass::text) from pg_catalog.pg_trigger where tgname = 'tidesync_scope_history_kept'),
  (select array_agg(relation::text order by relation::text) from app_private.sync_tables where scope_column = 'id'),
  'every scope table, and only those, has the trigger');
create table public.tidesync_test_history_projects (id uuid primary key);
alter table public.tidesync_test_history_projects enable row level security;
select app_private.enable_sync('public.tidesync_test_history_projects', 'id');
select ok(exists (select 1 from pg_catalog.pg_trigger where tgname = 'tidesync_scope_history_kept' and tgrelid = 'public.tidesync_test_history_projects'::regclass),
  'enable_sync installs it on a new scope table');
select app_private.disable_sync('public.tidesync_test_history_projects');
select ok(not exists (select 1 from pg_catalog.pg_trigger where tgname = 'tidesync_scope_history_kept' and tgrelid = 'public.tidesync_test_history_projects'::regclass),
  'disable_sync takes it away');
select is(tests.function_callers('app_private.refuse_hidden_scope_history()'), '{}'::text[],
  'no API role calls the trigger function (it reads every user''s bookkeeping)');

select * from finish();
rollback;
