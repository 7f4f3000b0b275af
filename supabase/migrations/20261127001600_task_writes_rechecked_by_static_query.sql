-- What: the tasks' recheck triggers (writer_role_rechecked_on_insert and
-- _on_update, 20261127000400) run app_private.recheck_task_writes(), which
-- reads the statement's list ids with a static query, instead of the generic
-- recheck_write_into_list('editor', 'list_id'), which builds that query with
-- format() and EXECUTEs it on every statement. Same rule, same order.
-- Why: an EXECUTE is parsed and planned each time; a static query's plan is
-- kept for the session. Per statement (track_functions, 1-row inserts as
-- authenticated): 0.14 against 0.06 ms; a push writes tasks in up to two
-- statements (docs/performance.md, "2026-11-27: what the day's fixes cost").
-- The generic function stays for an app's own tables scoped by a list.
-- pgTAP 129-writes-judged-after-waits; tests/integration/role-loss-races.test.ts.
-- Rollback: supabase/rollbacks/20261127001600_task_writes_rechecked_by_static_query.down.sql

create function app_private.recheck_task_writes()
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
  'Trigger (after insert or update of public.tasks, per statement, with new_rows): as authenticated, the caller must still be an editor of every list the statement wrote tasks into, as last committed (require_list_role). recheck_write_into_list() with a static query.';
revoke all on function app_private.recheck_task_writes() from public, anon, authenticated, service_role;

drop trigger writer_role_rechecked_on_insert on public.tasks;
drop trigger writer_role_rechecked_on_update on public.tasks;
create trigger writer_role_rechecked_on_insert
  after insert on public.tasks referencing new table as new_rows
  for each statement execute function app_private.recheck_task_writes();
create trigger writer_role_rechecked_on_update
  after update on public.tasks referencing new table as new_rows
  for each statement execute function app_private.recheck_task_writes();
comment on trigger writer_role_rechecked_on_insert on public.tasks is
  'A task added while its writer lost the list (the foreign-key check waited for the removal) is refused (require_list_role).';
comment on trigger writer_role_rechecked_on_update on public.tasks is
  'A task moved into a list while its writer lost it is refused (require_list_role).';
