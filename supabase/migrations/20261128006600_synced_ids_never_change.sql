-- What: an update that changes the id of a row of a synced table is refused by
-- a BEFORE UPDATE OF id row trigger, tidesync_ids_kept
-- (app_private.refuse_synced_id_change), with the error the sync trigger gave
-- (23514 "the id of a synced row cannot change (table …)"), for every role.
-- enable_sync installs it on every synced table and disable_sync drops it;
-- installed here on the tables already synced. track_sync_changes keeps its
-- own check.
-- Why: authenticated may name id in an update of public.lists and
-- public.tasks (20261128001700: supabase-js upsert sends SET id =
-- excluded.id), and only the AFTER statement trigger refused a change, after
-- Postgres had checked the primary key: `update public.tasks set id = X`
-- answered 23505 (tasks_pkey) when X was a live task, in a list the caller
-- cannot see too, and 23514 when X was deleted or never existed. A member
-- removed from a list learnt, id by id, which of its tasks were still there
-- (hostile review). Refused before the key and the policies are checked,
-- every new id answers alike. An id set to itself (the upsert) passes: the
-- trigger's WHEN clause compares the two.
-- Tests: pgTAP 168-synced-ids-never-change (and 110-lists: a list's id change
-- is now this 23514, not the policy's 42501).
-- Down step: supabase/rollbacks/20261128006600_synced_ids_never_change.down.sql

create function app_private.refuse_synced_id_change()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  -- Worded as track_sync_changes words it: the answer is the same whatever the new id is.
  raise exception 'the id of a synced row cannot change (table %)', tg_relid::regclass using errcode = 'check_violation';
end;
$$;
comment on function app_private.refuse_synced_id_change() is
  'Trigger (before update of id on every synced table, per row, when the id changes; installed by enable_sync): refuses the change (23514, as track_sync_changes does) before the primary key and the policies are checked. Refused only after them, the answer told a taken id (23505, a live row in a scope the caller cannot see too) from a free or deleted one.';
revoke all on function app_private.refuse_synced_id_change() from public, anon, authenticated, service_role;

-- The tables already synced.
do $$
declare
  v_table regclass;
begin
  for v_table in select t.relation from app_private.sync_tables t loop
    execute format('create trigger tidesync_ids_kept before update of id on %s for each row '
                   'when (new.id is distinct from old.id) execute function app_private.refuse_synced_id_change()', v_table);
  end loop;
end
$$;

create or replace function app_private.enable_sync(p_table regclass, p_scope_column name)
returns void
language plpgsql
security invoker
set search_path = ''
as $$
declare
  v_collection text;
  v_schema name;
  v_table name;
  v_creator text;
  v_scope_attnum smallint;
  v_index regclass;
begin
  select n.nspname, c.relname into v_schema, v_table
    from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
   where c.oid = p_table and c.relkind = 'r';
  if v_table is null then
    raise exception 'enable_sync: % is not a table', p_table using errcode = 'invalid_parameter_value';
  end if;
  v_collection := v_table;
  if not exists (
    select 1 from pg_catalog.pg_attribute a
     where a.attrelid = p_table and a.attname = 'id' and a.atttypid = 'uuid'::regtype and not a.attisdropped
  ) or not exists (
    select 1 from pg_catalog.pg_constraint k
     where k.conrelid = p_table and k.contype = 'p'
       and k.conkey = array[(select a.attnum from pg_catalog.pg_attribute a where a.attrelid = p_table and a.attname = 'id')]
  ) then
    raise exception 'enable_sync: % needs a uuid primary key named id', p_table using errcode = 'invalid_parameter_value';
  end if;
  if not exists (
    select 1 from pg_catalog.pg_attribute a
     where a.attrelid = p_table and a.attname = p_scope_column and a.atttypid = 'uuid'::regtype and a.attnotnull and not a.attisdropped
  ) then
    raise exception 'enable_sync: the scope column %.% must be a uuid column that is not null', p_table, p_scope_column
      using errcode = 'invalid_parameter_value';
  end if;
  if not (select c.relrowsecurity from pg_catalog.pg_class c where c.oid = p_table) then
    raise exception 'enable_sync: enable row level security on % first (its policies decide who syncs what)', p_table
      using errcode = 'invalid_parameter_value';
  end if;

  insert into app_private.sync_tables (collection, relation, scope_column) values (v_collection, p_table, p_scope_column);

  execute format('create trigger tidesync_track_inserts after insert on %s referencing new table as new_rows '
                 'for each statement execute function app_private.track_sync_changes()', p_table);
  execute format('create trigger tidesync_track_updates after update on %s referencing old table as old_rows new table as new_rows '
                 'for each statement execute function app_private.track_sync_changes()', p_table);
  execute format('create trigger tidesync_track_deletes after delete on %s referencing old table as old_rows '
                 'for each statement execute function app_private.track_sync_changes()', p_table);
  -- TRUNCATE fires none of those: refused (use DELETE).
  -- (or replace: a membership table may be synced too)
  execute format('create or replace trigger tidesync_refuse_truncate before truncate on %s '
                 'for each statement execute function app_private.refuse_sync_truncate()', p_table);
  -- An id never changes, whatever the new one (refused before the primary key could tell it taken).
  execute format('create trigger tidesync_ids_kept before update of id on %s for each row '
                 'when (new.id is distinct from old.id) execute function app_private.refuse_synced_id_change()', p_table);
  -- A scope table: a deleted scope's id is created again only by someone who could read its history.
  if p_scope_column = 'id' then
    execute format('create trigger tidesync_scope_history_kept before insert on %s '
                   'for each row execute function app_private.refuse_hidden_scope_history()', p_table);
  else
    -- Any other synced table: the id of a row the caller cannot see, live or deleted, answers as taken.
    execute format('create trigger tidesync_hidden_ids_taken before insert on %s '
                   'for each row execute function app_private.refuse_hidden_record_id(%L)', p_table, v_collection);
  end if;

  -- The scope column is indexed unless an index (not partial) starts with it:
  -- the policies filter on it, and the scope's delete cascades through it.
  v_scope_attnum := (select a.attnum from pg_catalog.pg_attribute a where a.attrelid = p_table and a.attname = p_scope_column);
  if not exists (select 1 from pg_catalog.pg_index i
                  where i.indrelid = p_table and i.indkey[0] = v_scope_attnum and i.indpred is null) then
    execute format('create index on %s (%I)', p_table, p_scope_column);
    select i.indexrelid::regclass into v_index from pg_catalog.pg_index i
     where i.indrelid = p_table and i.indkey[0] = v_scope_attnum and i.indpred is null;
    execute format('comment on index %s is %L', v_index,
                   format('Created by app_private.enable_sync: the scope column %I of a synced table (its policies filter on it, the scope''s delete '
                          'cascades through it). app_private.disable_sync drops it.', p_scope_column));
  end if;

  -- Rows that exist already become version-1-of-their-own entries. Their
  -- creator is who the table's created_by column (uuid) names, if it has one
  -- and that user exists (the trigger stamps the writer of an insert); each
  -- counts in that creator's usage, as an insert would have. A membership
  -- table's rows have no creator (nor does the trigger give them one).
  v_creator := case when exists (
      select 1 from pg_catalog.pg_attribute a
       where a.attrelid = p_table and a.attname = 'created_by' and a.atttypid = 'uuid'::regtype and not a.attisdropped)
      and not exists (select 1 from app_private.sync_memberships m where m.relation = p_table)
    then 't.created_by' else 'null::uuid' end;
  execute format($sql$
    with existing as (
      select (to_jsonb(t) ->> 'id')::uuid as id, to_jsonb(t) - 'id' as data,
             (to_jsonb(t) ->> %L)::uuid as scope_id, %s as created_by, nextval('app_private.sync_seq') as seq
        from %s t
    ), recorded as (
      insert into app_private.sync_records (collection, id, scope_id, version, field_versions, created_by)
      select %L, e.id, e.scope_id, e.seq,
             (select coalesce(jsonb_object_agg(k, jsonb_build_object('v', e.seq, 'd', null)), '{}'::jsonb) from jsonb_object_keys(e.data) k),
             (select u.id from auth.users u where u.id = e.created_by)
        from existing e
      returning created_by
    ), counted as (
      insert into app_private.sync_usage as u (user_id, live_records)
      select r.created_by, count(*) from recorded r where r.created_by is not null group by r.created_by
      on conflict (user_id) do update set live_records = u.live_records + excluded.live_records
    )
    insert into app_private.sync_changes (scope_id, collection, id, present, seq, txid, since_seq)
    select e.scope_id, %L, e.id, true, e.seq, pg_current_xact_id(), e.seq from existing e
  $sql$, p_scope_column, v_creator, p_table, v_collection, v_collection);
end;
$$;
comment on function app_private.enable_sync(regclass, name) is
  'Makes a table syncable as the collection named like the table: needs a uuid primary key `id`, a not-null uuid scope column (''id'' for a scope table such as lists) and RLS enabled. A scope table needs a membership table registered by enable_sync_membership in the same transaction, before or after (its scope column a foreign key to the scope table''s id on delete cascade, restrict or no action): checked at commit, 22023 otherwise. Installs the change-tracking triggers (and one refusing TRUNCATE, which they cannot see; tidesync_ids_kept: refuse_synced_id_change, refusing an id change before the primary key is checked; on a scope table, tidesync_scope_history_kept: refuse_hidden_scope_history; on any other, tidesync_hidden_ids_taken: refuse_hidden_record_id), indexes the scope column when no index starts with it (named <table>_<column>_idx, dropped again by disable_sync), and records existing rows (their creator: the table''s created_by column, when it has one and the table is no membership table; counted in that user''s usage). A membership table made syncable too (public.list_members) is registered by enable_sync_membership first. Run it in a migration, then `npm run generate`.';
revoke all on function app_private.enable_sync(regclass, name) from public, anon, authenticated, service_role;

create or replace function app_private.disable_sync(p_table regclass)
returns void
language plpgsql
security invoker
set search_path = ''
as $$
declare
  v_collection text := (select t.collection from app_private.sync_tables t where t.relation = p_table);
  v_index regclass;
begin
  execute format('drop trigger if exists tidesync_track_inserts on %s', p_table);
  execute format('drop trigger if exists tidesync_track_updates on %s', p_table);
  execute format('drop trigger if exists tidesync_track_deletes on %s', p_table);
  execute format('drop trigger if exists tidesync_track_access_grants on %s', p_table);
  execute format('drop trigger if exists tidesync_track_access_losses on %s', p_table);
  execute format('drop trigger if exists tidesync_refuse_truncate on %s', p_table);
  execute format('drop trigger if exists tidesync_scope_history_kept on %s', p_table);
  execute format('drop trigger if exists tidesync_hidden_ids_taken on %s', p_table);
  execute format('drop trigger if exists tidesync_ids_kept on %s', p_table);
  -- The table's live rows leave their creators' usage (the triggers are gone:
  -- no write of the table changes the counts from here on).
  update app_private.sync_usage u
     set live_records = greatest(0, u.live_records - r.n)
    from (select s.created_by, count(*) as n
            from app_private.sync_records s
           where s.collection = v_collection and not s.deleted and s.created_by is not null
           group by s.created_by) r
   where u.user_id = r.created_by;
  -- The scope column's index, if enable_sync made it (its comment says so).
  for v_index in
    select i.indexrelid::regclass from pg_catalog.pg_index i
     where i.indrelid = p_table
       and pg_catalog.obj_description(i.indexrelid, 'pg_class') like 'Created by app_private.enable_sync%'
  loop
    execute format('drop index %s', v_index);
  end loop;
  delete from app_private.sync_memberships where relation = p_table;
  delete from app_private.sync_changes where collection = v_collection;
  delete from app_private.sync_records where collection = v_collection;
  delete from app_private.sync_tables where relation = p_table;
  -- A device may hold the table's rows, and its cursor cannot see what happens to them while sync is
  -- off (no change entries) nor after enable_sync again (which lists present rows, never removals):
  -- every cursor issued before this commits gets 410 RESYNC_REQUIRED (the pull compares the count
  -- its cursor carries). A count, not the purge's txid horizon: a pull whose snapshot sees this
  -- transaction may still have an xmin below its txid (an older transaction still running), and
  -- would be refused again and again.
  if v_collection is not null then
    update app_private.sync_horizon set resyncs = resyncs + 1;
  end if;
end;
$$;
comment on function app_private.disable_sync(regclass) is
  'Undoes enable_sync / enable_sync_membership for a table (down migrations): drops its triggers and its bookkeeping, takes its live rows out of their creators'' usage (sync_usage), drops the scope column''s index if enable_sync created it and counts itself in sync_horizon.resyncs, so that every pull cursor issued before it gets 410 RESYNC_REQUIRED.';
revoke all on function app_private.disable_sync(regclass) from public, anon, authenticated, service_role;
