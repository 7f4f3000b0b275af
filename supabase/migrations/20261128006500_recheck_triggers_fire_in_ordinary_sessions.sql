-- What: app_private.list_writes_not_rechecked() counts a recheck trigger only
-- when it fires in an ordinary session: enabled (origin) or enabled always,
-- no longer one set to ENABLE REPLICA.
-- Why: such a trigger fires only under session_replication_role = replica;
-- PostgREST and the api function write in origin mode, so a table whose
-- trigger had been set so took writes unrechecked while the check (and
-- npm run generate) said nothing was missing (DBA review).
-- Tests: pgTAP 165-list-writes-rechecked-everywhere (a replica-only trigger is
-- named missing).
-- Rollback: supabase/rollbacks/20261128006500_recheck_triggers_fire_in_ordinary_sessions.down.sql.

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
                       where g.tgrelid = t.relation and g.tgname = e.name and g.tgenabled in ('O', 'A') -- fires in ordinary sessions (not replica-only, not disabled)
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
  'Every synced table scoped by a list (scope column a foreign key to public.lists; membership tables aside) lacking one of docs/security-model.md step 3''s recheck triggers (writer_role_rechecked_on_insert with new rows, _on_update with old and new rows, _on_delete with old rows; after, per statement, when (current_user = ''authenticated''), firing in ordinary sessions: enabled, or enabled always; not disabled nor replica-only), with its scope column and the names it lacks. Without them a member removed while his write waited for a lock still wrote into the list. npm run generate refuses such a table by it; pgTAP 165 asserts it answers nothing. No API role may run it.';
