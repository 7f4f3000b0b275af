-- What: a delete of tasks, and a move of tasks out of a list, as
-- `authenticated` is judged once more by the writer's role as last committed,
-- as an insert or a move into a list is (20261127000400): the tasks' recheck
-- trigger writer_role_rechecked_on_update now references the old rows too
-- (the lists moved out of), and a new writer_role_rechecked_on_delete (old
-- rows) runs the same app_private.recheck_task_writes(), which requires
-- editor, the role of the update and delete policies, in every list the
-- statement wrote into or took rows out of. recheck_write_into_list(), the
-- generic check of an app's own tables (docs/security-model.md, step 3), does
-- the same for triggers made so: after delete, and after update with an old
-- table; an update trigger made with the earlier recipe (new rows only) still
-- judges the destination only.
-- Why: only inserts and the destination of updates were rechecked. Bob, an
-- editor of Alice's list, sends a delete of a task in it, or a move of one
-- into his own list; his statement passes its policy check, then waits for a
-- row lock (Alice editing that task); Alice removes him and commits. Both
-- writes then went through when the lock was released: her task deleted, or
-- kept by Bob in his private list, while his edit of a task in the list was
-- refused (42501) and the push refused the same delete (NOT_FOUND).
-- Cost: the transition tables are the ones the sync triggers already keep
-- (Postgres keeps one per table and event); a delete statement runs one more
-- statement trigger, and an update reads its old rows' lists beside its new.
-- A foreign key's action (a list's delete cascading to its tasks) is still
-- left out by the WHEN (20261128002000).
-- Tests: pgTAP 144-writes-out-of-a-list-rechecked;
-- tests/integration/role-loss-races.test.ts.
-- Down step: supabase/rollbacks/20261128003400_writes_out_of_a_list_rechecked.down.sql

create or replace function app_private.recheck_task_writes()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  v_lists uuid[];
begin
  if current_user = 'authenticated' then
    -- The lists written into (new_rows) and taken out of (old_rows): a move needs editor in both.
    if tg_op = 'INSERT' then
      select array_agg(distinct n.list_id) into v_lists from new_rows n;
    elsif tg_op = 'UPDATE' then
      select array_agg(distinct l.list_id) into v_lists
        from (select n.list_id from new_rows n union all select o.list_id from old_rows o) l;
    else
      select array_agg(distinct o.list_id) into v_lists from old_rows o;
    end if;
    -- The role of the tasks policies ("Editors can add / change / delete the tasks…").
    perform app_private.require_list_role(v_lists, 'editor');
  end if;
  return null;
end;
$$;
comment on function app_private.recheck_task_writes() is
  'Trigger (after insert, update or delete of public.tasks, per statement, with new_rows and/or old_rows, when (current_user = ''authenticated'')): the caller must still be an editor of every list the statement wrote tasks into or took tasks out of (deleted, moved away), as last committed (require_list_role). The WHEN, evaluated as the statement ends, leaves out a foreign key''s action (set null, set default, cascade), which Postgres runs as the table''s owner but whose triggers it fires as the user. recheck_write_into_list() with static queries.';

create or replace function app_private.recheck_write_into_list()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  v_lists uuid[];
begin
  if current_user = 'authenticated' then
    if tg_op = 'DELETE' then
      execute format('select array_agg(distinct o.%I) from old_rows o', tg_argv[1]) into v_lists;
    elsif tg_op = 'UPDATE' and exists (select 1 from pg_catalog.pg_trigger t
                                        where t.tgrelid = tg_relid and t.tgname = tg_name and t.tgoldtable is not null) then
      execute format('select array_agg(distinct l.c) from (select n.%1$I as c from new_rows n union all select o.%1$I from old_rows o) l',
                     tg_argv[1]) into v_lists;
    else
      -- An insert; or an update whose trigger, made with the earlier recipe, has no old table.
      execute format('select array_agg(distinct n.%I) from new_rows n', tg_argv[1]) into v_lists;
    end if;
    perform app_private.require_list_role(v_lists, tg_argv[0]);
  end if;
  return null;
end;
$$;
comment on function app_private.recheck_write_into_list() is
  'Trigger (after insert, update or delete of a table scoped by a list, per statement, with new_rows and/or old_rows, when (current_user = ''authenticated''); arguments: the least role, the list column): the caller must still hold that role in every list the statement wrote rows into or took rows out of (deleted, moved away: an update trigger with an old table), as last committed (require_list_role). The WHEN, evaluated as the statement ends, leaves out a foreign key''s action (set null, set default, cascade), which Postgres runs as the table''s owner but whose triggers it fires as the user (docs/security-model.md, step 3).';

-- create or replace: the update trigger keeps its oid, its comment and its order.
create or replace trigger writer_role_rechecked_on_update
  after update on public.tasks referencing old table as old_rows new table as new_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_task_writes();
comment on trigger writer_role_rechecked_on_update on public.tasks is
  'A task changed, moved into or out of a list while its writer lost that list is refused (require_list_role).';
-- Its name sorts after tidesync_track_deletes, whose locks it may wait for.
create trigger writer_role_rechecked_on_delete
  after delete on public.tasks referencing old table as old_rows
  for each statement when (current_user = 'authenticated') execute function app_private.recheck_task_writes();
comment on trigger writer_role_rechecked_on_delete on public.tasks is
  'A task deleted while its writer lost its list (the delete waited for a row lock meanwhile) is refused (require_list_role).';
