-- app_private.sync_records has no foreign keys (migration
-- 20261126000100_sync_records_without_row_checks): what they did on the
-- referenced side is done explicitly, and a write naming a creator who does
-- not exist is still refused, by the usage row's foreign key.
--   - deleting a user (directly, as Supabase Auth's admin API does) nulls
--     created_by of the sync state of rows they created; the rows stay;
--   - disable_sync() deletes the table's sync state (the cascade did);
--   - a write whose actor is no user fails (23503), writing nothing;
--   - the trigger function: no API role, empty search_path.
begin;
select plan(9);

select from tests.create_supabase_user('nofk_alice');
select from tests.create_supabase_user('nofk_bob');

select is((select count(*)::integer from pg_constraint where conrelid = 'app_private.sync_records'::regclass and contype = 'f'), 0,
  'sync_records has no foreign keys (no per-row check on every synced write)');
select is(tests.function_callers('app_private.forget_deleted_creators()'), '{}'::text[], 'forget_deleted_creators (trigger): no API role');
select ok((select p.proconfig @> array['search_path=""'] and p.prosecdef from pg_proc p where p.oid = 'app_private.forget_deleted_creators()'::regprocedure),
  'forget_deleted_creators: SECURITY DEFINER with an empty search_path');

-- ------------------------------------------------------------ a deleted creator is forgotten, their rows stay
select tests.authenticate_as('nofk_alice');
insert into public.lists (id, title) values ('c3000000-0000-4000-8000-000000000001', 'Shared');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values ('c3000000-0000-4000-8000-000000000001', tests.get_supabase_uid('nofk_bob'), 'editor');
select tests.authenticate_as('nofk_bob');
insert into public.tasks (id, list_id, title) values ('c3000000-0000-4000-8000-0000000000b1', 'c3000000-0000-4000-8000-000000000001', 'Bob''s task');
select tests.clear_authentication();

select is((select created_by from app_private.sync_records where collection = 'tasks' and id = 'c3000000-0000-4000-8000-0000000000b1'),
          tests.get_supabase_uid('nofk_bob'), 'the sync state names the user who created the row');

create temporary table deleted_bob as select tests.get_supabase_uid('nofk_bob') as id;
delete from auth.users where id = (select id from deleted_bob);

select is((select row(created_by is null, deleted)::text from app_private.sync_records where collection = 'tasks' and id = 'c3000000-0000-4000-8000-0000000000b1'),
          '(t,f)', 'after the user is deleted the row''s sync state stays and no longer names them');
select is_empty($$ select 1 from app_private.sync_records where created_by = (select id from deleted_bob) $$,
  'no sync state names a deleted user');

-- ------------------------------------------------------------ a write by no user is refused, nothing written
select from set_config('request.jwt.claims', json_build_object('sub', (select id from deleted_bob), 'role', 'authenticated')::text, true);
select throws_ok(
  $$ insert into public.lists (id, title) values ('c3000000-0000-4000-8000-000000000002', 'Ghost') $$,
  '23503', null, 'a write whose actor is no user fails on the usage row''s foreign key');
select from set_config('request.jwt.claims', '', true);
select is_empty($$ select 1 from app_private.sync_records where id = 'c3000000-0000-4000-8000-000000000002' $$,
  'and leaves no sync state behind');

-- ------------------------------------------------------------ disable_sync deletes the table's sync state itself
create table public.tidesync_test_nofk_notes (id uuid primary key default gen_random_uuid(), list_id uuid not null references public.lists (id), body text not null default '');
alter table public.tidesync_test_nofk_notes enable row level security;
select app_private.enable_sync('public.tidesync_test_nofk_notes', 'list_id');
insert into public.tidesync_test_nofk_notes (list_id) values ('c3000000-0000-4000-8000-000000000001'), ('c3000000-0000-4000-8000-000000000001');
select app_private.disable_sync('public.tidesync_test_nofk_notes');
select is((select count(*)::integer from app_private.sync_records where collection = 'tidesync_test_nofk_notes')
          + (select count(*)::integer from app_private.sync_changes where collection = 'tidesync_test_nofk_notes'), 0,
  'disable_sync removes the sync state and change entries of the table');

select * from finish();
rollback;
