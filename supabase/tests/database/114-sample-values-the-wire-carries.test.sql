-- The sample app's float and date columns hold only what the sync wire
-- carries (migration 20261126002500_sample_values_the_wire_carries): a write
-- as authenticated (what supabase-js does through the Data API) of a NaN or
-- infinite position, or of a due date outside the years 0001 to 9999 AD
-- ('infinity', '-infinity', BC, five-digit years), fails 23514 naming the
-- constraint the push maps to the column; the bounds themselves are taken.
begin;
select plan(24);

select from tests.create_supabase_user('wire_alice');

-- ------------------------------------------------------------ structure
select is(array(select conname::text from pg_constraint where conrelid = 'public.lists'::regclass and contype = 'c' and conname::text like '%position%'),
  array['lists_position_finite'], 'lists.position has its check');
select is(array(select conname::text from pg_constraint where conrelid = 'public.tasks'::regclass and contype = 'c' and conname::text in ('tasks_position_finite', 'tasks_due_date_range') order by conname),
  array['tasks_due_date_range', 'tasks_position_finite'], 'tasks.position and tasks.due_date have theirs');
select ok((select bool_and(convalidated) from pg_constraint where conname in ('lists_position_finite', 'tasks_position_finite', 'tasks_due_date_range')),
  'every row was checked (the constraints are validated)');

-- ------------------------------------------------------------ as authenticated (the Data API)
select tests.authenticate_as('wire_alice');
-- Alice's personal list (its id is her user id) and a task in it.
select lives_ok($$ insert into public.tasks (id, list_id, title) values ('c8000000-0000-4000-8000-000000000001', (select auth.uid()), 'task') $$,
  'a task with the defaults');

select throws_ok($$ insert into public.tasks (list_id, title, position) values ((select auth.uid()), 'nan', 'NaN') $$,
  '23514', 'new row for relation "tasks" violates check constraint "tasks_position_finite"', 'a NaN position is refused (tasks_position_finite)');
select throws_ok($$ insert into public.tasks (list_id, title, position) values ((select auth.uid()), 'inf', 'Infinity') $$,
  '23514', 'new row for relation "tasks" violates check constraint "tasks_position_finite"', 'an Infinity position is refused');
select throws_ok($$ insert into public.tasks (list_id, title, position) values ((select auth.uid()), '-inf', '-Infinity') $$,
  '23514', 'new row for relation "tasks" violates check constraint "tasks_position_finite"', 'a -Infinity position is refused');
select throws_ok($$ update public.tasks set position = 'NaN' where id = 'c8000000-0000-4000-8000-000000000001' $$,
  '23514', 'new row for relation "tasks" violates check constraint "tasks_position_finite"', 'an update to NaN is refused too');
select lives_ok($$ update public.tasks set position = 1.7976931348623157e308 where id = 'c8000000-0000-4000-8000-000000000001' $$,
  'the largest finite double is a position');
select lives_ok($$ update public.tasks set position = -1.7976931348623157e308 where id = 'c8000000-0000-4000-8000-000000000001' $$,
  'and the most negative');

select throws_ok($$ insert into public.tasks (list_id, title, due_date) values ((select auth.uid()), 'inf', 'infinity') $$,
  '23514', 'new row for relation "tasks" violates check constraint "tasks_due_date_range"', 'an infinity due date is refused (tasks_due_date_range)');
select throws_ok($$ insert into public.tasks (list_id, title, due_date) values ((select auth.uid()), '-inf', '-infinity') $$,
  '23514', 'new row for relation "tasks" violates check constraint "tasks_due_date_range"', 'a -infinity due date is refused');
select throws_ok($$ insert into public.tasks (list_id, title, due_date) values ((select auth.uid()), 'bc', '0044-03-15 BC') $$,
  '23514', 'new row for relation "tasks" violates check constraint "tasks_due_date_range"', 'a BC due date is refused');
select throws_ok($$ insert into public.tasks (list_id, title, due_date) values ((select auth.uid()), 'bc', '0001-12-31 BC') $$,
  '23514', 'new row for relation "tasks" violates check constraint "tasks_due_date_range"', 'the day before 0001-01-01 is refused');
select throws_ok($$ update public.tasks set due_date = '12345-01-01' where id = 'c8000000-0000-4000-8000-000000000001' $$,
  '23514', 'new row for relation "tasks" violates check constraint "tasks_due_date_range"', 'a five-digit year is refused');
select throws_ok($$ update public.tasks set due_date = '10000-01-01' where id = 'c8000000-0000-4000-8000-000000000001' $$,
  '23514', 'new row for relation "tasks" violates check constraint "tasks_due_date_range"', 'the day after 9999-12-31 is refused');
select lives_ok($$ update public.tasks set due_date = '0001-01-01' where id = 'c8000000-0000-4000-8000-000000000001' $$,
  '0001-01-01 is a due date');
select lives_ok($$ update public.tasks set due_date = '9999-12-31' where id = 'c8000000-0000-4000-8000-000000000001' $$,
  '9999-12-31 is a due date');
select lives_ok($$ update public.tasks set due_date = null where id = 'c8000000-0000-4000-8000-000000000001' $$,
  'no due date is one');
select results_eq($$ select to_json(position)::text, due_date from public.tasks where id = 'c8000000-0000-4000-8000-000000000001' $$,
  $$ values ('-1.7976931348623157e+308'::text, null::date) $$, 'what the task holds a pull lists as a JSON number');

select throws_ok($$ insert into public.lists (title, position) values ('nan', 'NaN') $$,
  '23514', 'new row for relation "lists" violates check constraint "lists_position_finite"', 'a NaN list position is refused (lists_position_finite)');
select throws_ok($$ update public.lists set position = '-Infinity' where id = (select auth.uid()) $$,
  '23514', 'new row for relation "lists" violates check constraint "lists_position_finite"', 'a -Infinity list position is refused');

-- ------------------------------------------------------------ every writer
select tests.authenticate_as_service_role();
select throws_ok($$ update public.tasks set position = 'Infinity' where id = 'c8000000-0000-4000-8000-000000000001' $$,
  '23514', 'new row for relation "tasks" violates check constraint "tasks_position_finite"', 'the service role is held to it too');
select tests.clear_authentication();
select throws_ok($$ update public.tasks set due_date = 'infinity' where id = 'c8000000-0000-4000-8000-000000000001' $$,
  '23514', 'new row for relation "tasks" violates check constraint "tasks_due_date_range"', 'and the owner (migrations, support fixes)');

select * from finish();
rollback;
