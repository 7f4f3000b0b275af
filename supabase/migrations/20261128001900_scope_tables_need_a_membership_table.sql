-- What: a scope table (enable_sync(…, 'id')) must have a membership table
-- registered (enable_sync_membership) whose scope column is a foreign key to
-- its id that keeps no membership past its scope row (on delete cascade,
-- restrict or no action). Checked when the transaction that registers it
-- commits (deferred constraint triggers on app_private.sync_tables and
-- sync_memberships), so either order works in one migration: the sample's
-- (enable_sync('public.lists', 'id'), then enable_sync_membership for
-- list_members) as well as membership first. Refused: 22023 "enable_sync: the
-- scope table … has no membership table", with a hint naming what to add.
-- Scope tables synced before this without one are named in a WARNING.
-- Why: the engine learns that a user lost a scope only from a deleted
-- membership row (app_private.sync_access), and a deleted scope row is visible
-- to nobody (visible_scope_ids() reads the scope tables through their select
-- policies), so neither its change entries nor its tombstones were read
-- again. A personal board synced with enable_sync('public.boards', 'id') and
-- a `created_by = auth.uid()` select policy (docs/security-model.md step 4
-- presented it as supported): its delete reached no device (an incremental
-- pull listed neither the board nor its notes, even a note's delete an earlier
-- pull had listed; a full sync listed none, so devices kept them until a 410),
-- and its owner could not create its id again (refuse_hidden_scope_history
-- finds no loss of hers: NOT_FOUND, 23505 through the Data API). Who else
-- could read the row, the engine cannot tell from a policy; a membership
-- table names them. A scope of one user is a membership table with one owner
-- row, written by a trigger as lists_add_creator_as_owner does.
-- Tests: pgTAP 134-scope-table-needs-membership; integration
-- tests/integration/scope-table-membership.test.ts.
-- Down step: supabase/rollbacks/20261128001900_scope_tables_need_a_membership_table.down.sql

create function app_private.scope_tables_without_membership()
returns setof regclass
language sql
stable
security invoker
set search_path = ''
as $$
  select t.relation
    from app_private.sync_tables t
   where t.scope_column = 'id'
     and not exists (
       select 1
         from app_private.sync_memberships m
         join pg_catalog.pg_constraint c on c.conrelid = m.relation and c.contype = 'f' and c.confrelid = t.relation
         join pg_catalog.pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
         join pg_catalog.pg_attribute k on k.attrelid = c.confrelid and k.attnum = c.confkey[1]
        -- set null / set default would keep the membership row, and no loss would be written
        where cardinality(c.conkey) = 1 and a.attname = m.scope_column and k.attname = 'id'
          and c.confdeltype in ('c', 'r', 'a'))
   order by t.relation::text
$$;
comment on function app_private.scope_tables_without_membership() is
  'The scope tables (sync_tables.scope_column = ''id'') that no registered membership table grants access to: none whose scope column is a foreign key to the table''s id on delete cascade, restrict or no action. The engine records a lost scope only when a membership row is deleted, so such a table''s deleted rows would stay on devices. Read by refuse_scope_table_without_membership().';
revoke all on function app_private.scope_tables_without_membership() from public, anon, authenticated, service_role;

create function app_private.refuse_scope_table_without_membership()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
declare
  v_table regclass;
begin
  -- The registry as it is at commit (the triggers are deferred): a membership table registered
  -- later in the migration counts, a scope table disabled again does not.
  select s into v_table from app_private.scope_tables_without_membership() s limit 1;
  if v_table is not null then
    raise exception 'enable_sync: the scope table % has no membership table', v_table
      using errcode = 'invalid_parameter_value',
            detail = 'A user''s loss of a scope is recorded only when their membership row is deleted: without one, a deleted scope row and '
                     'the rows in it stay on every device that synced them, and its owner cannot create its id again.',
            hint = format('In the same migration, register a table of (scope, user) rows whose scope column references %s (id) on delete cascade: '
                          'select app_private.enable_sync_membership(''<table>'', ''<scope column>'', ''<user column>''). A scope of one user '
                          'is such a table with one owner row (docs/security-model.md, "Making a new table syncable", step 4).', v_table);
  end if;
  return null;
end;
$$;
comment on function app_private.refuse_scope_table_without_membership() is
  'Constraint trigger (deferred to commit) on sync_tables (a scope table registered) and sync_memberships (a membership table unregistered): refuses the transaction, 22023, while a scope table has no membership table (scope_tables_without_membership()).';
revoke all on function app_private.refuse_scope_table_without_membership() from public, anon, authenticated, service_role;

create constraint trigger tidesync_scope_tables_have_members
  after insert on app_private.sync_tables
  deferrable initially deferred
  for each row when (new.scope_column = 'id')
  execute function app_private.refuse_scope_table_without_membership();
comment on trigger tidesync_scope_tables_have_members on app_private.sync_tables is
  'A scope table registered by enable_sync needs a membership table by the time the transaction commits (refuse_scope_table_without_membership).';
create constraint trigger tidesync_scope_tables_have_members
  after delete on app_private.sync_memberships
  deferrable initially deferred
  for each row
  execute function app_private.refuse_scope_table_without_membership();
comment on trigger tidesync_scope_tables_have_members on app_private.sync_memberships is
  'A membership table unregistered (disable_sync) while its scope table stays synced is refused at commit (refuse_scope_table_without_membership).';

comment on function app_private.enable_sync(regclass, name) is
  'Makes a table syncable as the collection named like the table: needs a uuid primary key `id`, a not-null uuid scope column (''id'' for a scope table such as lists) and RLS enabled. A scope table needs a membership table registered by enable_sync_membership in the same transaction, before or after (its scope column a foreign key to the scope table''s id on delete cascade, restrict or no action): checked at commit, 22023 otherwise. Installs the change-tracking triggers (and one refusing TRUNCATE, which they cannot see; on a scope table, tidesync_scope_history_kept: refuse_hidden_scope_history), indexes the scope column when no index starts with it (named <table>_<column>_idx, dropped again by disable_sync), and records existing rows (their creator: the table''s created_by column, when it has one and the table is no membership table; counted in that user''s usage). A membership table made syncable too (public.list_members) is registered by enable_sync_membership first. Run it in a migration, then `npm run generate`.';

-- Scope tables synced before this check: not refused (this migration would stop the upgrade), named.
do $$
declare
  v_table text;
begin
  for v_table in
    select format('%I.%I', n.nspname, c.relname)
      from app_private.scope_tables_without_membership() s
      join pg_catalog.pg_class c on c.oid = s
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
  loop
    raise warning 'the scope table % has no membership table: its deleted rows stay on devices (docs/security-model.md, "Making a new table syncable", step 4)', v_table;
  end loop;
end
$$;
