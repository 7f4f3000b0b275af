-- Down step of 20261128003400_writes_out_of_a_list_rechecked.sql: no recheck
-- after a delete of tasks, the update's of the new rows only, and the two
-- functions as 20261127001600, 20261127000400 and 20261128002000 left them.
-- An app's own table given a delete trigger of recheck_write_into_list() (step 3
-- of docs/security-model.md as this migration wrote it) needs that trigger
-- dropped too: the function as it was reads new_rows only.
drop trigger writer_role_rechecked_on_delete on public.tasks;
create or replace trigger writer_role_rechecked_on_update
  after update on public.tasks referencing new table as new_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_task_writes();
comment on trigger writer_role_rechecked_on_update on public.tasks is
  'A task moved into a list while its writer lost it is refused (require_list_role).';

create or replace function app_private.recheck_task_writes()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  v_lists uuid[];
begin
  if current_user = 'authenticated' then
    select array_agg(distinct n.list_id) into v_lists from new_rows n;
    -- The role of the tasks policies ("Editors can add tasks…", "Editors can change the tasks…").
    perform app_private.require_list_role(v_lists, 'editor');
  end if;
  return null;
end;
$$;
comment on function app_private.recheck_task_writes() is
  'Trigger (after insert or update of public.tasks, per statement, with new_rows, when (current_user = ''authenticated'')): the caller must still be an editor of every list the statement wrote tasks into, as last committed (require_list_role). The WHEN, evaluated as the statement ends, leaves out a foreign key''s action (set null, set default, cascade), which Postgres runs as the table''s owner but whose triggers it fires as the user. recheck_write_into_list() with a static query.';

create or replace function app_private.recheck_write_into_list()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  v_lists uuid[];
begin
  if current_user = 'authenticated' then
    execute format('select array_agg(distinct n.%I) from new_rows n', tg_argv[1]) into v_lists;
    perform app_private.require_list_role(v_lists, tg_argv[0]);
  end if;
  return null;
end;
$$;
comment on function app_private.recheck_write_into_list() is
  'Trigger (after insert or update of a table scoped by a list, per statement, with new_rows, when (current_user = ''authenticated''); arguments: the least role, the list column): the caller must still hold that role in every list the statement wrote rows into, as last committed (require_list_role). The WHEN, evaluated as the statement ends, leaves out a foreign key''s action (set null, set default, cascade), which Postgres runs as the table''s owner but whose triggers it fires as the user (docs/security-model.md, step 3).';
