-- Changing the id of a synced row answers alike whatever the new id is: 23514
-- "the id of a synced row cannot change (table …)", raised before the
-- primary key is checked. authenticated may name `id` in an update of
-- public.lists and public.tasks (supabase-js upsert() sends SET id =
-- excluded.id); before migration 20261128006600 only the AFTER statement
-- trigger (track_sync_changes) refused a change, which runs after the primary
-- key's check: `update public.tasks set id = X` answered 23505 (tasks_pkey)
-- when X was a live task, visible or not, and 23514 when X was deleted or had
-- never existed. A member removed from a list so learnt, id by id, which of
-- its tasks were still there. The trigger (tidesync_ids_kept, before update of
-- id, per row) is on every synced table, installed by enable_sync.
begin;
select plan(12);

select from tests.create_supabase_user('ik_alice');
select from tests.create_supabase_user('ik_carol');

-- Alice's list W, Carol an editor of it, then removed; a live task and a deleted one stay there.
select tests.authenticate_as('ik_alice');
insert into public.lists (id, title) values ('e5000000-0000-4000-8000-000000000001', 'W');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('e5000000-0000-4000-8000-000000000001', tests.get_supabase_uid('ik_carol'), 'editor');
select tests.authenticate_as('ik_alice');
insert into public.tasks (id, list_id, title) values
  ('e5000000-0000-4000-8000-0000000000a1', 'e5000000-0000-4000-8000-000000000001', 'still in W'),
  ('e5000000-0000-4000-8000-0000000000a2', 'e5000000-0000-4000-8000-000000000001', 'deleted');
delete from public.tasks where id = 'e5000000-0000-4000-8000-0000000000a2';
delete from public.list_members
 where list_id = 'e5000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('ik_carol');

-- Carol's own list Lc (and a second one, L2) with two tasks.
select tests.authenticate_as('ik_carol');
insert into public.lists (id, title) values
  ('e5000000-0000-4000-8000-000000000003', 'Lc'),
  ('e5000000-0000-4000-8000-000000000004', 'L2');
insert into public.tasks (id, list_id, title) values
  ('e5000000-0000-4000-8000-0000000000b1', 'e5000000-0000-4000-8000-000000000003', 'mine'),
  ('e5000000-0000-4000-8000-0000000000b2', 'e5000000-0000-4000-8000-000000000003', 'mine too');

-- What each id change answers (SQLSTATE | message).
select tests.clear_authentication();
create temporary table answers (label text primary key, answer text not null);
grant insert, select on answers to authenticated, service_role;
create function pg_temp.answer(p_label text, p_table text, p_from uuid, p_to uuid) returns void
language plpgsql as $f$
declare
  v_state text; v_message text;
begin
  execute format('update %s set id = %L where id = %L', p_table, p_to, p_from);
  insert into pg_temp.answers values (p_label, 'written');
exception when others then
  get stacked diagnostics v_state = returned_sqlstate, v_message = message_text;
  insert into pg_temp.answers values (p_label, concat_ws(' | ', v_state, v_message));
end
$f$;

select tests.authenticate_as('ik_carol');
select pg_temp.answer('task: never existed', 'public.tasks', 'e5000000-0000-4000-8000-0000000000b1', 'e5000000-0000-4000-8000-0000000000ff');
select pg_temp.answer('task: hidden live', 'public.tasks', 'e5000000-0000-4000-8000-0000000000b1', 'e5000000-0000-4000-8000-0000000000a1');
select pg_temp.answer('task: hidden deleted', 'public.tasks', 'e5000000-0000-4000-8000-0000000000b1', 'e5000000-0000-4000-8000-0000000000a2');
select pg_temp.answer('task: own other', 'public.tasks', 'e5000000-0000-4000-8000-0000000000b1', 'e5000000-0000-4000-8000-0000000000b2');
select pg_temp.answer('list: never existed', 'public.lists', 'e5000000-0000-4000-8000-000000000003', 'e5000000-0000-4000-8000-0000000000fe');
select pg_temp.answer('list: hidden live', 'public.lists', 'e5000000-0000-4000-8000-000000000003', 'e5000000-0000-4000-8000-000000000001');
select pg_temp.answer('list: own other', 'public.lists', 'e5000000-0000-4000-8000-000000000003', 'e5000000-0000-4000-8000-000000000004');

-- ------------------------------------------------------------ every new id answers alike
select is((select answer from answers where label = 'task: never existed'),
  '23514 | the id of a synced row cannot change (table public.tasks)', 'a task''s id changed to one that never existed: refused');
select is((select answer from answers where label = 'task: hidden live'), (select answer from answers where label = 'task: never existed'),
  'to the id of a live task in a list the caller left: the same answer (no 23505 on tasks_pkey)');
select is((select answer from answers where label = 'task: hidden deleted'), (select answer from answers where label = 'task: never existed'),
  'to the id of a task deleted there: the same answer');
select is((select answer from answers where label = 'task: own other'), (select answer from answers where label = 'task: never existed'),
  'to the id of another task of the caller''s: the same answer');
select is((select answer from answers where label = 'list: never existed'),
  '23514 | the id of a synced row cannot change (table public.lists)', 'a list''s id changed to one that never existed: refused');
select is((select answer from answers where label = 'list: hidden live'), (select answer from answers where label = 'list: never existed'),
  'to the id of a list the caller left: the same answer');
select is((select answer from answers where label = 'list: own other'), (select answer from answers where label = 'list: never existed'),
  'to the id of another list of the caller''s: the same answer');

-- ------------------------------------------------------------ an upsert (the id set to itself) still writes
select lives_ok($$ insert into public.tasks (id, list_id, title) values ('e5000000-0000-4000-8000-0000000000b1', 'e5000000-0000-4000-8000-000000000003', 'upserted')
                   on conflict (id) do update set id = excluded.id, list_id = excluded.list_id, title = excluded.title $$,
  'supabase-js upsert of a task of the caller''s (SET id = excluded.id) updates it');

-- ------------------------------------------------------------ installed on every synced table, by enable_sync
select tests.clear_authentication();
select is((select array_agg(tgrelid::regclass::text order by tgrelid::regclass::text) from pg_catalog.pg_trigger where tgname = 'tidesync_ids_kept'),
  (select array_agg(relation::text order by relation::text) from app_private.sync_tables),
  'every synced table, and only those, has the trigger');
create table public.tidesync_test_kept_notes (
  id uuid primary key default gen_random_uuid(),
  list_id uuid not null references public.lists (id) on delete cascade
);
alter table public.tidesync_test_kept_notes enable row level security;
select app_private.enable_sync('public.tidesync_test_kept_notes', 'list_id');
select ok(exists (select 1 from pg_catalog.pg_trigger where tgname = 'tidesync_ids_kept' and tgrelid = 'public.tidesync_test_kept_notes'::regclass),
  'enable_sync installs it on a new synced table');
select app_private.disable_sync('public.tidesync_test_kept_notes');
select ok(not exists (select 1 from pg_catalog.pg_trigger where tgname = 'tidesync_ids_kept' and tgrelid = 'public.tidesync_test_kept_notes'::regclass),
  'disable_sync takes it away');
select is(tests.function_callers('app_private.refuse_synced_id_change()'), '{}'::text[],
  'no API role calls the trigger function');

select * from finish();
rollback;
