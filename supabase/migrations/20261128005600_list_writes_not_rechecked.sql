-- What: app_private.list_writes_not_rechecked(): every synced table scoped by
-- a list (its scope column a foreign key to public.lists; not a membership
-- table) that lacks one of docs/security-model.md step 3's recheck triggers
-- (writer_role_rechecked_on_insert with its new rows, _on_update with its old
-- and new rows, _on_delete with its old rows; each after, per statement, when
-- (current_user = 'authenticated'), enabled), with the names it lacks.
-- Why: RLS judges a write on the snapshot it started with; without the
-- triggers, an editor removed from a list while his insert waited for the
-- list's lock (the foreign-key check waits for the removal) still added a row
-- to it, counted in his quota. docs/sync.md's recipe left them out and nothing
-- noticed: `npm run generate` now refuses such a table by this function,
-- naming it and the triggers to add, and pgTAP 165 asserts it answers nothing.
-- The triggers stay the developer's (each with the role of its command's
-- policy, any function: tasks runs a static one), so enable_sync does not make
-- them. Lists only: require_list_role, which the triggers call, answers for
-- list roles alone.
-- Rollback: supabase/rollbacks/20261128005600_list_writes_not_rechecked.down.sql.

create function app_private.list_writes_not_rechecked()
returns table (table_name text, scope_column text, missing text[])
language sql
stable
set search_path = ''
as $$
  select x.table_name, x.scope_column, x.missing
    from (
      select format('%I.%I', n.nspname, c.relname) as table_name, t.scope_column::text as scope_column,
             array(select e.name::text
                     from (values (1, 'writer_role_rechecked_on_insert'::name, 4, false, true),
                                  (2, 'writer_role_rechecked_on_update'::name, 16, true, true),
                                  (3, 'writer_role_rechecked_on_delete'::name, 8, true, false)) e (nth, name, event, old_rows, new_rows)
                    where not exists (
                      select 1 from pg_catalog.pg_trigger g
                       where g.tgrelid = t.relation and g.tgname = e.name and g.tgenabled <> 'D'
                         and g.tgtype & 3 = 0 -- after, per statement
                         and g.tgtype & e.event <> 0
                         and (g.tgoldtable is not null) = e.old_rows and (g.tgnewtable is not null) = e.new_rows
                         and pg_catalog.pg_get_triggerdef(g.oid) like '% FOR EACH STATEMENT WHEN ((CURRENT_USER = ''authenticated''::name)) EXECUTE %')
                    order by e.nth) as missing
        from app_private.sync_tables t
        join pg_catalog.pg_class c on c.oid = t.relation
        join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       where t.scope_column <> 'id'
         and not exists (select 1 from app_private.sync_memberships m where m.relation = t.relation)
         and exists (select 1 from pg_catalog.pg_constraint f
                      join pg_catalog.pg_attribute a on a.attrelid = f.conrelid and a.attname = t.scope_column
                     where f.conrelid = t.relation and f.contype = 'f' and f.conkey = array[a.attnum]
                       and f.confrelid = pg_catalog.to_regclass('public.lists'))
    ) x
   where pg_catalog.cardinality(x.missing) > 0
   order by x.table_name
$$;
comment on function app_private.list_writes_not_rechecked() is
  'Every synced table scoped by a list (scope column a foreign key to public.lists; membership tables aside) lacking one of docs/security-model.md step 3''s recheck triggers (writer_role_rechecked_on_insert with new rows, _on_update with old and new rows, _on_delete with old rows; after, per statement, when (current_user = ''authenticated''), enabled), with its scope column and the names it lacks. Without them a member removed while his write waited for a lock still wrote into the list. npm run generate refuses such a table by it; pgTAP 165 asserts it answers nothing. No API role may run it.';
revoke all on function app_private.list_writes_not_rechecked() from public, anon, authenticated, service_role;
