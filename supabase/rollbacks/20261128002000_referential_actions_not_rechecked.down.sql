-- Down step of 20261128002000_referential_actions_not_rechecked.sql: the tasks'
-- recheck triggers without the WHEN, and the functions' comments, as
-- 20261127001600_task_writes_rechecked_by_static_query.sql and
-- 20261127000400_writes_judged_by_the_role_after_waits.sql left them.
create or replace trigger writer_role_rechecked_on_insert
  after insert on public.tasks referencing new table as new_rows
  for each statement execute function app_private.recheck_task_writes();
create or replace trigger writer_role_rechecked_on_update
  after update on public.tasks referencing new table as new_rows
  for each statement execute function app_private.recheck_task_writes();

comment on function app_private.recheck_task_writes() is
  'Trigger (after insert or update of public.tasks, per statement, with new_rows): as authenticated, the caller must still be an editor of every list the statement wrote tasks into, as last committed (require_list_role). recheck_write_into_list() with a static query.';
comment on function app_private.recheck_write_into_list() is
  'Trigger (after insert or update of a table scoped by a list, per statement, with new_rows; arguments: the least role, the list column): as authenticated, the caller must still hold that role in every list the statement wrote rows into, as last committed (require_list_role).';
