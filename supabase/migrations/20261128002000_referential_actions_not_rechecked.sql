-- What: the tasks' recheck triggers (writer_role_rechecked_on_insert and
-- _on_update) fire only for a statement run as `authenticated`: `when
-- (current_user = 'authenticated')`. The recipe of docs/security-model.md
-- ("Making a new table syncable", step 3) gives an app's own table's recheck
-- triggers the same WHEN.
-- Why: a foreign key's `on delete set null` (or `set default`, or `on update
-- cascade`) is an UPDATE that Postgres runs as the referencing table's owner
-- with RLS off, but whose AFTER triggers it fires later, back as the user whose
-- statement caused it: inside the trigger function current_user is
-- `authenticated` and nothing tells the action from the user's own write. The
-- recheck then judged the referencing rows as the user's write into their
-- scope: Bob could not delete his own task (nor his list, whose cascade
-- deletes it) while a row in a list he had left, or had never been in, pointed
-- at it with `on delete set null`: `42501`, the push's `FORBIDDEN`. A
-- statement trigger's WHEN is evaluated when its statement ends, as the role
-- that ran it: the table's owner for a foreign key's action. So the rule is
-- the policies' own: the recheck judges the statements RLS judged, those run
-- as `authenticated` (the user's, and one that an app's SECURITY INVOKER
-- trigger or function runs for them), and not a foreign key's action nor a
-- SECURITY DEFINER function's statement, which RLS does not judge either.
-- The timing of the judgement is unchanged: the function still runs after the
-- foreign-key checks whose locks the user's write waited for.
-- The functions keep their own current_user test (a trigger made with the
-- earlier recipe, without the WHEN, behaves as before).
-- Tests: pgTAP 135-referential-actions-not-rechecked (also: every trigger of
-- the two recheck functions carries the WHEN), 129-writes-judged-after-waits;
-- tests/integration/referential-actions.test.ts, role-loss-races.test.ts.
-- Down step: supabase/rollbacks/20261128002000_referential_actions_not_rechecked.down.sql

-- create or replace: the triggers keep their oid, their comments and their order.
create or replace trigger writer_role_rechecked_on_insert
  after insert on public.tasks referencing new table as new_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_task_writes();
create or replace trigger writer_role_rechecked_on_update
  after update on public.tasks referencing new table as new_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_task_writes();

comment on function app_private.recheck_task_writes() is
  'Trigger (after insert or update of public.tasks, per statement, with new_rows, when (current_user = ''authenticated'')): the caller must still be an editor of every list the statement wrote tasks into, as last committed (require_list_role). The WHEN, evaluated as the statement ends, leaves out a foreign key''s action (set null, set default, cascade), which Postgres runs as the table''s owner but whose triggers it fires as the user. recheck_write_into_list() with a static query.';
comment on function app_private.recheck_write_into_list() is
  'Trigger (after insert or update of a table scoped by a list, per statement, with new_rows, when (current_user = ''authenticated''); arguments: the least role, the list column): the caller must still hold that role in every list the statement wrote rows into, as last committed (require_list_role). The WHEN, evaluated as the statement ends, leaves out a foreign key''s action (set null, set default, cascade), which Postgres runs as the table''s owner but whose triggers it fires as the user (docs/security-model.md, step 3).';
