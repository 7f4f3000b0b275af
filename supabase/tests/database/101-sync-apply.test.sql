-- app_private.sync_apply (the write of POST /v1/sync/batch): it writes as the
-- caller, so the tables' policies, grants and constraints decide; a group the
-- database refuses is retried row by row and only the refused rows fail
-- (with SQLSTATE, constraint, column); rows the policies leave untouched fail
-- as "not_permitted"; it answers with those failures only.
begin;
select plan(29);

select from tests.create_supabase_user('apply_owner');
select from tests.create_supabase_user('apply_viewer');
select from tests.create_supabase_user('apply_stranger');

select tests.authenticate_as('apply_owner');
insert into public.lists (id, title) values ('a2000000-0000-4000-8000-000000000001', 'Shared');
insert into public.tasks (id, list_id, title) values ('a2000000-0000-4000-8000-0000000000a1', 'a2000000-0000-4000-8000-000000000001', 'existing');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values ('a2000000-0000-4000-8000-000000000001', tests.get_supabase_uid('apply_viewer'), 'viewer');

-- ------------------------------------------------------------ an owner's batch
select tests.authenticate_as('apply_owner');
select from set_config('tests.result', app_private.sync_apply($$[
  {"collection": "tasks", "kind": "insert", "columns": ["list_id", "title"], "rows": [
    {"id": "a2000000-0000-4000-8000-0000000000b1", "list_id": "a2000000-0000-4000-8000-000000000001", "title": "fine"},
    {"id": "a2000000-0000-4000-8000-0000000000b2", "list_id": "a2000000-0000-4000-8000-000000000001", "title": ""},
    {"id": "a2000000-0000-4000-8000-0000000000b3", "list_id": "a2000000-0000-4000-8000-000000000001", "title": "also fine"}]},
  {"collection": "tasks", "kind": "update", "columns": ["done"], "rows": [
    {"id": "a2000000-0000-4000-8000-0000000000a1", "done": true}]}
]$$)::text, true);
select is(current_setting('tests.result')::jsonb -> 'failed',
  '[{"collection": "tasks", "id": "a2000000-0000-4000-8000-0000000000b2", "kind": "insert", "sqlstate": "23514", "constraint": "tasks_title_length", "column": null,
     "message": "new row for relation \"tasks\" violates check constraint \"tasks_title_length\""}]'::jsonb,
  'the one row the database refuses fails alone, with its SQLSTATE and constraint');
select results_eq($$ select title from public.tasks where list_id = 'a2000000-0000-4000-8000-000000000001' order by title $$,
  array['also fine', 'existing', 'fine'], 'the other rows of the refused group are written');
select is((select array_agg(k) from jsonb_object_keys(current_setting('tests.result')::jsonb) k), array['failed'],
  'it answers with the refused rows only (the push reads the written rows back itself)');
select results_eq($$ select s.id::text, s.deleted from app_private.sync_records s
                     where s.collection = 'tasks' and s.id::text like 'a2000000-0000-4000-8000-0000000000%' order by s.id $$,
  $$ values ('a2000000-0000-4000-8000-0000000000a1', false), ('a2000000-0000-4000-8000-0000000000b1', false),
            ('a2000000-0000-4000-8000-0000000000b3', false) $$,
  'the written rows have their sync state (the refused one none)');
select is((select created_by from public.tasks where id = 'a2000000-0000-4000-8000-0000000000b1'), (select auth.uid()),
  'the database filled in created_by');

select is(app_private.sync_apply('[{"collection": "tasks", "kind": "delete", "rows": [{"id": "a2000000-0000-4000-8000-0000000000b3"}]}]'),
  '{"failed": []}'::jsonb, 'a delete the policies allow fails nothing');
select results_eq($$ select deleted from app_private.sync_records where collection = 'tasks' and id = 'a2000000-0000-4000-8000-0000000000b3' $$,
  array[true], 'and leaves a tombstone');
select throws_ok($$ select app_private.sync_apply('[{"collection": "nope", "kind": "insert", "rows": []}]') $$, '22023', null, 'an unknown collection is an error');
select throws_ok($$ select app_private.sync_apply('[{"collection": "tasks", "kind": "upsert", "rows": []}]') $$, '22023', null, 'an unknown kind is an error');

-- ------------------------------------------------------------ an update group whose rows change different columns
insert into public.tasks (id, list_id, title, notes) values
  ('a2000000-0000-4000-8000-0000000000d1', 'a2000000-0000-4000-8000-000000000001', 'd1', 'keep'),
  ('a2000000-0000-4000-8000-0000000000d2', 'a2000000-0000-4000-8000-000000000001', 'd2', 'keep'),
  ('a2000000-0000-4000-8000-0000000000d3', 'a2000000-0000-4000-8000-000000000001', 'd3', 'keep');
select is(app_private.sync_apply($$[
  {"collection": "tasks", "kind": "update", "columns": ["done", "notes", "title"], "rows": [
    {"id": "a2000000-0000-4000-8000-0000000000d1", "title": "d1 edited"},
    {"id": "a2000000-0000-4000-8000-0000000000d2", "done": true},
    {"id": "a2000000-0000-4000-8000-0000000000d3", "notes": null, "done": true}]}
]$$), '{"failed": []}'::jsonb, 'an update group of rows that each change other columns fails nothing');
select results_eq($$ select title, notes, done from public.tasks where id::text like 'a2000000-0000-4000-8000-0000000000d%' order by id $$,
  $$ values ('d1 edited'::text, 'keep'::text, false), ('d2', 'keep', true), ('d3', null, true) $$,
  'each row gets only the columns it carries (a null included); the others keep their values');
select results_eq($$ select (select array_agg(k order by k) from jsonb_object_keys(s.field_versions) k) from app_private.sync_records s
                     where s.collection = 'tasks' and s.id::text like 'a2000000-0000-4000-8000-0000000000d%' order by s.id $$,
  $$ values (array['*', 'title']), (array['*', 'done']), (array['*', 'done', 'notes']) $$,
  'a new field version only for the columns each row changed');

-- A trigger on UPDATE OF title fires exactly for the rows that change the title, as a direct write's would.
select tests.clear_authentication();
create function pg_temp.note_title_update() returns trigger language plpgsql as $f$
begin
  perform set_config('tests.title_updates', current_setting('tests.title_updates', true) || new.title || ';', true);
  return new;
end $f$;
create trigger tests_title_updates before update of title on public.tasks for each row execute function pg_temp.note_title_update();
select tests.authenticate_as('apply_owner');
select set_config('tests.title_updates', '', true);
select is(app_private.sync_apply($$[
  {"collection": "tasks", "kind": "update", "columns": ["done", "title"], "rows": [
    {"id": "a2000000-0000-4000-8000-0000000000d1", "title": "d1 again"},
    {"id": "a2000000-0000-4000-8000-0000000000d2", "done": false},
    {"id": "a2000000-0000-4000-8000-0000000000d3", "title": "d3 again", "done": false}]}
]$$), '{"failed": []}'::jsonb, 'with an UPDATE OF trigger on the table the group is still written');
select is(current_setting('tests.title_updates'), 'd1 again;d3 again;', 'the UPDATE OF title trigger fired for the rows that change the title only');
select results_eq($$ select title, done from public.tasks where id::text like 'a2000000-0000-4000-8000-0000000000d%' order by id $$,
  $$ values ('d1 again'::text, false), ('d2', false), ('d3 again', false) $$, 'every row has its change');
select tests.clear_authentication();
drop trigger tests_title_updates on public.tasks;

-- No UPDATE OF trigger watching a column the group writes (tidesync_ids_kept watches id, which a push
-- never sets; this one, position): the group is one statement.
create function pg_temp.count_update_statement() returns trigger language plpgsql as $f$
begin
  perform set_config('tests.update_statements', (current_setting('tests.update_statements')::int + 1)::text, true);
  return null;
end $f$;
create trigger tests_update_statements after update on public.tasks for each statement execute function pg_temp.count_update_statement();
create trigger tests_position_updates before update of position on public.tasks for each row execute function pg_temp.note_title_update();
select tests.authenticate_as('apply_owner');
select set_config('tests.update_statements', '0', true);
select is(app_private.sync_apply($$[
  {"collection": "tasks", "kind": "update", "columns": ["done", "title"], "rows": [
    {"id": "a2000000-0000-4000-8000-0000000000d1", "title": "d1 once more"},
    {"id": "a2000000-0000-4000-8000-0000000000d2", "done": true}]}
]$$), '{"failed": []}'::jsonb, 'an update group beside UPDATE OF triggers on columns it does not write');
select is(current_setting('tests.update_statements'), '1', 'written in one statement: no UPDATE OF trigger watches a column it writes');
select tests.clear_authentication();
drop trigger tests_update_statements on public.tasks;
drop trigger tests_position_updates on public.tasks;

-- A row retried alone names only its own columns: the one it may not write fails it alone.
select tests.authenticate_as('apply_owner');
select from set_config('tests.result', app_private.sync_apply($$[
  {"collection": "tasks", "kind": "update", "columns": ["created_by", "title"], "rows": [
    {"id": "a2000000-0000-4000-8000-0000000000d1", "created_by": "a2000000-0000-4000-8000-000000000001"},
    {"id": "a2000000-0000-4000-8000-0000000000d2", "title": "d2 edited"}]}
]$$)::text, true);
select is((select jsonb_agg(jsonb_build_array(f ->> 'id', f ->> 'sqlstate')) from jsonb_array_elements(current_setting('tests.result')::jsonb -> 'failed') f),
  '[["a2000000-0000-4000-8000-0000000000d1", "42501"]]'::jsonb,
  'a row changing a column the caller may not update fails alone (42501)');
select results_eq($$ select title from public.tasks where id = 'a2000000-0000-4000-8000-0000000000d2' $$,
  array['d2 edited'], 'the other row of its group, retried with only its own column, is written');
select tests.clear_authentication();

-- ------------------------------------------------------------ a viewer's batch
select tests.authenticate_as('apply_viewer');
select is(app_private.sync_apply($$[
  {"collection": "tasks", "kind": "update", "columns": ["title"], "rows": [{"id": "a2000000-0000-4000-8000-0000000000a1", "title": "viewer edit"}]},
  {"collection": "tasks", "kind": "delete", "rows": [{"id": "a2000000-0000-4000-8000-0000000000b1"}]}
]$$) -> 'failed',
  '[{"collection": "tasks", "id": "a2000000-0000-4000-8000-0000000000a1", "kind": "update", "sqlstate": "not_permitted"},
    {"collection": "tasks", "id": "a2000000-0000-4000-8000-0000000000b1", "kind": "delete", "sqlstate": "not_permitted"}]'::jsonb,
  'rows a viewer may read but not write fail as not_permitted');
select is((app_private.sync_apply($$[
  {"collection": "tasks", "kind": "insert", "columns": ["list_id", "title"], "rows": [
    {"id": "a2000000-0000-4000-8000-0000000000c1", "list_id": "a2000000-0000-4000-8000-000000000001", "title": "viewer task"}]}
]$$) -> 'failed' -> 0 ->> 'sqlstate'), '42501', 'a viewer''s insert is refused by the policy (42501)');
select is(app_private.sync_apply($$[
  {"collection": "tasks", "kind": "insert", "columns": ["list_id", "title", "created_by"], "rows": [
    {"id": "a2000000-0000-4000-8000-0000000000c2", "list_id": "a2000000-0000-4000-8000-000000000001", "title": "x", "created_by": "a2000000-0000-4000-8000-000000000001"}]}
]$$) -> 'failed' -> 0 ->> 'sqlstate', '42501', 'a column the caller may not write is refused (42501), not written');

-- ------------------------------------------------------------ a stranger's batch
select tests.authenticate_as('apply_stranger');
select is(app_private.sync_apply($$[
  {"collection": "tasks", "kind": "update", "columns": ["title"], "rows": [{"id": "a2000000-0000-4000-8000-0000000000a1", "title": "pwned"}]}
]$$) -> 'failed' -> 0 ->> 'sqlstate', 'not_permitted', 'a non-member''s update writes nothing (the row is not theirs to see)');
select tests.clear_authentication();
select results_eq($$ select title, done from public.tasks where id = 'a2000000-0000-4000-8000-0000000000a1' $$,
  $$ values ('existing'::text, true) $$, 'the task holds only the owner''s change');
select results_eq($$ select count(*)::int from public.tasks where id in ('a2000000-0000-4000-8000-0000000000c1', 'a2000000-0000-4000-8000-0000000000c2') $$,
  array[0], 'none of the refused inserts happened');

-- ------------------------------------------------------------ a delete of the row version it was planned against
-- The push names the version (xmin) it read of a row it could not lock; the row changed since
-- (here: updated in a subtransaction, whose xid is the new version's xmin) is left alone.
select tests.authenticate_as('apply_owner');
insert into public.tasks (id, list_id, title) values
  ('a2000000-0000-4000-8000-0000000000e1', 'a2000000-0000-4000-8000-000000000001', 'e1'),
  ('a2000000-0000-4000-8000-0000000000e2', 'a2000000-0000-4000-8000-000000000001', 'e2');
select from set_config('tests.read_xmin', (select xmin::text from public.tasks where id = 'a2000000-0000-4000-8000-0000000000e1'), true);
savepoint edit;
update public.tasks set title = 'e1 edited' where id = 'a2000000-0000-4000-8000-0000000000e1';
release savepoint edit;
select isnt((select xmin::text from public.tasks where id = 'a2000000-0000-4000-8000-0000000000e1'), current_setting('tests.read_xmin'),
  'the edit made a new row version');
select is(app_private.sync_apply(format($$[
  {"collection": "tasks", "kind": "delete", "rows": [
    {"id": "a2000000-0000-4000-8000-0000000000e1", "xmin": "%s"},
    {"id": "a2000000-0000-4000-8000-0000000000e2", "xmin": "%s"}]}
]$$, current_setting('tests.read_xmin'), (select xmin::text from public.tasks where id = 'a2000000-0000-4000-8000-0000000000e2'))::jsonb) -> 'failed',
  '[{"collection": "tasks", "id": "a2000000-0000-4000-8000-0000000000e1", "kind": "delete", "sqlstate": "not_permitted"}]'::jsonb,
  'a delete naming a row version the row no longer has deletes nothing, reported as a row the delete left alone');
select results_eq($$ select title from public.tasks where id in ('a2000000-0000-4000-8000-0000000000e1', 'a2000000-0000-4000-8000-0000000000e2') $$,
  array['e1 edited'], 'the edited row stays; the row still at the version named is deleted');
select is(app_private.sync_apply(format($$[{"collection": "tasks", "kind": "delete", "rows": [{"id": "a2000000-0000-4000-8000-0000000000e1", "xmin": "%s"}]}]$$,
  (select xmin::text from public.tasks where id = 'a2000000-0000-4000-8000-0000000000e1'))::jsonb) -> 'failed', '[]'::jsonb,
  'named at its current version, it is deleted');
select tests.clear_authentication();

select * from finish();
rollback;
