-- Down step of 20261127001600_task_writes_rechecked_by_static_query.sql: the tasks'
-- recheck triggers run recheck_write_into_list('editor', 'list_id') again, as
-- 20261127000400_writes_judged_by_the_role_after_waits.sql made them.
drop trigger writer_role_rechecked_on_insert on public.tasks;
drop trigger writer_role_rechecked_on_update on public.tasks;
create trigger writer_role_rechecked_on_insert
  after insert on public.tasks referencing new table as new_rows
  for each statement execute function app_private.recheck_write_into_list('editor', 'list_id');
create trigger writer_role_rechecked_on_update
  after update on public.tasks referencing new table as new_rows
  for each statement execute function app_private.recheck_write_into_list('editor', 'list_id');
comment on trigger writer_role_rechecked_on_insert on public.tasks is
  'A task added while its writer lost the list (the foreign-key check waited for the removal) is refused (require_list_role).';
comment on trigger writer_role_rechecked_on_update on public.tasks is
  'A task moved into a list while its writer lost it is refused (require_list_role).';
drop function app_private.recheck_task_writes();
