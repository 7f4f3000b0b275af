-- Down step of 20261128006500_recheck_triggers_fire_in_ordinary_sessions: the
-- check again counts every trigger not disabled (a replica-only one too), as
-- 20261128005600 defined it.

create or replace function app_private.list_writes_not_rechecked()
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
