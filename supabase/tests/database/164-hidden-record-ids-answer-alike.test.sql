-- Every id of a synced row a user cannot see answers an insert alike, as taken
-- (23505 on the table's primary key, the message and detail Postgres gives),
-- also to supabase-js upsert() (insert … on conflict (id) do update): a live
-- task in a list they are no member of (still in the list they were removed
-- from, or moved on to another), and a task deleted there while its tombstone
-- is kept. Before migration 20261128005500 the upsert of a live hidden id went
-- on to its update and a policy refused it (42501), and a tombstone's id was
-- created again: a removed member learnt, id by id, which tasks were still
-- there, moved or deleted. A row the caller can see (a live one: the primary
-- key or the policies answer; a tombstone in their own list: created again)
-- and a new id are as before; the service role is not refused.
-- The trigger (tidesync_hidden_ids_taken) is on every synced table that is no
-- scope table, installed by enable_sync.
begin;
select plan(20);

select from tests.create_supabase_user('hi_alice');
select from tests.create_supabase_user('hi_carol');

-- Alice's list W (Carol an editor of it, then removed) and her private list P.
select tests.authenticate_as('hi_alice');
insert into public.lists (id, title) values
  ('e4000000-0000-4000-8000-000000000001', 'W'),
  ('e4000000-0000-4000-8000-000000000002', 'P');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('e4000000-0000-4000-8000-000000000001', tests.get_supabase_uid('hi_carol'), 'editor');
select tests.authenticate_as('hi_alice');
insert into public.tasks (id, list_id, title) values
  ('e4000000-0000-4000-8000-0000000000a1', 'e4000000-0000-4000-8000-000000000001', 'still in W'),
  ('e4000000-0000-4000-8000-0000000000a2', 'e4000000-0000-4000-8000-000000000001', 'moved to P'),
  ('e4000000-0000-4000-8000-0000000000a3', 'e4000000-0000-4000-8000-000000000001', 'deleted');
delete from public.list_members
 where list_id = 'e4000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('hi_carol');
update public.tasks set list_id = 'e4000000-0000-4000-8000-000000000002' where id = 'e4000000-0000-4000-8000-0000000000a2';
delete from public.tasks where id = 'e4000000-0000-4000-8000-0000000000a3';

-- Carol's own list Lc: a live task and a deleted one.
select tests.authenticate_as('hi_carol');
insert into public.lists (id, title) values ('e4000000-0000-4000-8000-000000000003', 'Lc');
insert into public.tasks (id, list_id, title) values
  ('e4000000-0000-4000-8000-0000000000b1', 'e4000000-0000-4000-8000-000000000003', 'mine'),
  ('e4000000-0000-4000-8000-0000000000b2', 'e4000000-0000-4000-8000-000000000003', 'mine, deleted');
delete from public.tasks where id = 'e4000000-0000-4000-8000-0000000000b2';

-- What each statement answers: every field of the error a client reads (an id in a detail as <id>).
select tests.clear_authentication();
create temporary table answers (label text primary key, answer text not null);
grant insert, select on answers to authenticated, service_role;
create function pg_temp.answer(p_label text, p_id uuid, p_upsert boolean) returns void
language plpgsql as $f$
declare
  v_state text; v_constraint text; v_schema text; v_table text; v_message text; v_detail text;
begin
  execute format('insert into public.tasks (id, list_id, title) values (%L, %L, %L)', p_id, 'e4000000-0000-4000-8000-000000000003', 'probe')
       || case when p_upsert then ' on conflict (id) do update set id = excluded.id, list_id = excluded.list_id, title = excluded.title' else '' end;
  insert into pg_temp.answers values (p_label, 'written');
exception when others then
  get stacked diagnostics v_state = returned_sqlstate, v_constraint = constraint_name, v_schema = schema_name,
                          v_table = table_name, v_message = message_text, v_detail = pg_exception_detail;
  insert into pg_temp.answers
  values (p_label, concat_ws(' | ', v_state, v_constraint, v_schema, v_table, v_message, nullif(replace(v_detail, p_id::text, '<id>'), '')));
end
$f$;

select tests.authenticate_as('hi_carol');
select pg_temp.answer('own live, insert', 'e4000000-0000-4000-8000-0000000000b1', false);
select pg_temp.answer('hidden live, insert', 'e4000000-0000-4000-8000-0000000000a1', false);
select pg_temp.answer('hidden live, upsert', 'e4000000-0000-4000-8000-0000000000a1', true);
select pg_temp.answer('hidden moved, insert', 'e4000000-0000-4000-8000-0000000000a2', false);
select pg_temp.answer('hidden moved, upsert', 'e4000000-0000-4000-8000-0000000000a2', true);
select pg_temp.answer('hidden tombstone, insert', 'e4000000-0000-4000-8000-0000000000a3', false);
select pg_temp.answer('hidden tombstone, upsert', 'e4000000-0000-4000-8000-0000000000a3', true);

-- ------------------------------------------------------------ a hidden id: taken, as Postgres says it
-- (no detail: Postgres names the key only to a role the table's policies do not apply to)
select is((select answer from answers where label = 'own live, insert'),
  '23505 | tasks_pkey | public | tasks | duplicate key value violates unique constraint "tasks_pkey"',
  'Postgres'' own answer to a taken id (a task of the caller''s)');
select is((select answer from answers where label = 'hidden live, insert'), (select answer from answers where label = 'own live, insert'),
  'plain insert of a live task''s id in a list the caller left: taken');
select is((select answer from answers where label = 'hidden live, upsert'), (select answer from answers where label = 'own live, insert'),
  'upsert of a live task''s id in a list the caller left: taken, as a plain insert (no 42501)');
select is((select answer from answers where label = 'hidden moved, insert'), (select answer from answers where label = 'own live, insert'),
  'plain insert of the id of a task moved to another user''s list: taken');
select is((select answer from answers where label = 'hidden moved, upsert'), (select answer from answers where label = 'own live, insert'),
  'upsert of the id of a task moved to another user''s list: taken');
select is((select answer from answers where label = 'hidden tombstone, insert'), (select answer from answers where label = 'own live, insert'),
  'plain insert of the id of a task deleted in a list the caller left: taken, as a live one');
select is((select answer from answers where label = 'hidden tombstone, upsert'), (select answer from answers where label = 'own live, insert'),
  'upsert of the id of a task deleted in a list the caller left: taken, as a live one');
select throws_ok($$ insert into public.tasks (id, list_id, title)
                    values ('e4000000-0000-4000-8000-0000000000a1', 'e4000000-0000-4000-8000-000000000003', 'x') on conflict do nothing $$,
  '23505', 'duplicate key value violates unique constraint "tasks_pkey"', 'upsert ignoring duplicates of a hidden id: taken');

select tests.clear_authentication();
select results_eq($$ select id::text, list_id::text, title from public.tasks where id::text like 'e4000000-0000-4000-8000-0000000000a_' order by id $$,
  $$ values ('e4000000-0000-4000-8000-0000000000a1', 'e4000000-0000-4000-8000-000000000001', 'still in W'),
            ('e4000000-0000-4000-8000-0000000000a2', 'e4000000-0000-4000-8000-000000000002', 'moved to P') $$,
  'the hidden tasks are untouched and the deleted one is not created again');

-- ------------------------------------------------------------ what the caller can see, and new ids: as before
select tests.authenticate_as('hi_carol');
select pg_temp.answer('own live, upsert', 'e4000000-0000-4000-8000-0000000000b1', true);
select pg_temp.answer('own tombstone, insert', 'e4000000-0000-4000-8000-0000000000b2', false);
select pg_temp.answer('new id, insert', 'e4000000-0000-4000-8000-0000000000c1', false);
select pg_temp.answer('new id, upsert', 'e4000000-0000-4000-8000-0000000000c2', true);
select is((select answer from answers where label = 'own live, upsert'), 'written', 'upsert of a task of the caller''s updates it');
select is((select answer from answers where label = 'own tombstone, insert'), 'written',
  'a task deleted in the caller''s own list is created again (its tombstone is theirs to see)');
select is((select answer from answers where label = 'new id, insert'), 'written', 'plain insert of a new id creates the task');
select is((select answer from answers where label = 'new id, upsert'), 'written', 'upsert of a new id creates the task');
select results_eq($$ select id::text, title from public.tasks where list_id = 'e4000000-0000-4000-8000-000000000003' order by id $$,
  $$ values ('e4000000-0000-4000-8000-0000000000b1', 'probe'), ('e4000000-0000-4000-8000-0000000000b2', 'probe'),
            ('e4000000-0000-4000-8000-0000000000c1', 'probe'), ('e4000000-0000-4000-8000-0000000000c2', 'probe') $$,
  'the caller''s list holds what they wrote');

-- ------------------------------------------------------------ the service role: not refused
select tests.authenticate_as_service_role();
select pg_temp.answer('service role, tombstone', 'e4000000-0000-4000-8000-0000000000a3', false);
select pg_temp.answer('service role, live upsert', 'e4000000-0000-4000-8000-0000000000a1', true);
select is((select answer from answers where label = 'service role, tombstone'), 'written',
  'the service role creates a deleted task''s id again (a restore)');
select is((select answer from answers where label = 'service role, live upsert'), 'written',
  'the service role''s upsert of any live task updates it');

-- ------------------------------------------------------------ installed on every synced table but scope tables, by enable_sync
select tests.clear_authentication();
select is((select array_agg(tgrelid::regclass::text order by tgrelid::regclass::text) from pg_catalog.pg_trigger where tgname = 'tidesync_hidden_ids_taken'),
  (select array_agg(relation::text order by relation::text) from app_private.sync_tables where scope_column <> 'id'),
  'every synced table but the scope tables, and only those, has the trigger');
create table public.tidesync_test_hidden_notes (
  id uuid primary key default gen_random_uuid(),
  list_id uuid not null references public.lists (id) on delete cascade
);
alter table public.tidesync_test_hidden_notes enable row level security;
select app_private.enable_sync('public.tidesync_test_hidden_notes', 'list_id');
select ok(exists (select 1 from pg_catalog.pg_trigger where tgname = 'tidesync_hidden_ids_taken' and tgrelid = 'public.tidesync_test_hidden_notes'::regclass),
  'enable_sync installs it on a new synced table');
select app_private.disable_sync('public.tidesync_test_hidden_notes');
select ok(not exists (select 1 from pg_catalog.pg_trigger where tgname = 'tidesync_hidden_ids_taken' and tgrelid = 'public.tidesync_test_hidden_notes'::regclass),
  'disable_sync takes it away');
select is(tests.function_callers('app_private.refuse_hidden_record_id()'), '{}'::text[],
  'no API role calls the trigger function (it reads every user''s sync state)');

select * from finish();
rollback;