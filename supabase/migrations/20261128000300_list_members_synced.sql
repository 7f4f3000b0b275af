-- What: public.list_members is a synced collection too, as the contract's
-- "Shared data" names it (sample app: lists, list_members, tasks): a device
-- pulls the memberships of its lists (who shares each list, with which role),
-- and an owner's role change or a member's leaving can be a push op, decided
-- by the same policies as the Data API's. For that the table gets a uuid
-- primary key `id` (what enable_sync needs); (list_id, user_id) stays unique,
-- so every `on conflict (list_id, user_id)` and every Data API filter on the
-- two columns is unchanged. New members still join only through invites
-- (users have no INSERT on the table: a create op is refused).
-- A membership counts in nobody's live-records usage: it is made by an invite
-- or a list's creation, not by the member's writes (a user at the quota can
-- still join a list); track_sync_changes() and enable_sync() leave such rows
-- without a creator, and enable_sync_membership() must come first.
-- enable_sync and enable_sync_membership both install tidesync_refuse_truncate:
-- each now replaces it.
-- Why: list_members was only a membership table: a device offline could not
-- show who shares a list, and the wire contract names it a synced collection.
-- Tests: pgTAP 100-sync-engine, 131-list-members-synced; integration
-- tests/integration/list-members-sync.test.ts.
-- Rollback: supabase/rollbacks/20261128000300_list_members_synced.down.sql

create or replace function app_private.track_sync_changes()
returns trigger
language plpgsql
security definer
set search_path = ''
set jit = off
as $$
declare
  v_collection text;
  v_scope text;
  v_device text := nullif(current_setting('tidesync.device_id', true), '');
  v_actor uuid;
  v_txid xid8 := pg_current_xact_id();
  v_pairs integer;
  v_rows integer;
  v_ids uuid[];
  v_scopes uuid[];
begin
  -- An insert's creator is its writer, except in a membership table: a
  -- membership is made by an invite or a list's creation, in nobody's usage.
  select t.collection, t.scope_column,
         case when not exists (select 1 from app_private.sync_memberships m where m.relation = t.relation) then auth.uid() end
    into v_collection, v_scope, v_actor
    from app_private.sync_tables t where t.relation = tg_relid;
  if v_collection is null then
    return null;
  end if;

  if tg_op = 'INSERT' then
    -- Every synced table has a uuid primary key named id (enable_sync checks it), read as
    -- such; the scope column's name varies, so it is read by one small dynamic statement
    -- (never a JSON copy of every row: that was ~12% of a 500-row insert).
    if v_scope = 'id' then
      select array_agg(n.id), array_agg(n.id) into v_ids, v_scopes from new_rows n;
    else
      execute format('select array_agg(n.id), array_agg(n.%I) from new_rows n', v_scope) into v_ids, v_scopes;
    end if;
    if v_ids is null then
      return null; -- no row (e.g. the insert half of an INSERT … ON CONFLICT that only updated)
    end if;
    with written as (
      select w.id, w.scope_id, nextval('app_private.sync_seq') as seq
        from unnest(v_ids, v_scopes) as w(id, scope_id)
    ), recorded as (
      insert into app_private.sync_records as s (collection, id, scope_id, version, field_versions, deleted, created_by, created_at, updated_at, deleted_at, txid)
      select v_collection, w.id, w.scope_id, w.seq,
             jsonb_build_object('*', jsonb_build_object('v', w.seq, 'd', v_device)),
             false, v_actor, now(), now(), null, v_txid
        from written w
      on conflict (collection, id) do update
        set txid = excluded.txid, scope_id = excluded.scope_id, version = excluded.version, field_versions = excluded.field_versions,
            deleted = false, deleted_at = null, created_by = excluded.created_by, updated_at = excluded.updated_at
      returning s.created_by
    ), counted as (
      insert into app_private.sync_usage as u (user_id, live_records)
      select r.created_by, count(*) from recorded r where r.created_by is not null group by r.created_by
      on conflict (user_id) do update set live_records = u.live_records + excluded.live_records
    )
    insert into app_private.sync_changes as c (scope_id, collection, id, present, seq, txid, since_seq, changed_at)
    select w.scope_id, v_collection, w.id, true, w.seq, v_txid, w.seq, now() from written w
    -- since_seq stays where the row FIRST entered the scope (a row that left and came back
    -- was there before a later revocation, and a former member's device may still hold it)
    on conflict (scope_id, collection, id) do update
      set present = true, seq = excluded.seq, txid = excluded.txid, changed_at = excluded.changed_at;

  elsif tg_op = 'UPDATE' then
    select count(*) into v_rows from new_rows;
    if v_rows = 0 then
      return null; -- no row (e.g. the update half of an INSERT … ON CONFLICT that only inserted)
    end if;
    with pairs as (
      -- Each row becomes jsonb once (offset 0: not once per use below) and its
      -- changed columns are listed once, in no particular order (they become
      -- keys of field_versions).
      select d.id, d.new_data ->> v_scope as new_scope, d.old_data ->> v_scope as old_scope,
             array(select e.key from jsonb_each(d.new_data) e where d.old_data -> e.key is distinct from e.value) as fields
        from (select n.id, to_jsonb(n) - 'id' as new_data, to_jsonb(o) - 'id' as old_data
                from new_rows n join old_rows o on o.id = n.id offset 0) d
    ), written as (
      select p.id, p.fields,
             (case when v_scope = 'id' then p.id::text else p.new_scope end)::uuid as scope_id,
             (case when v_scope = 'id' then p.id::text else p.old_scope end)::uuid as old_scope_id,
             nextval('app_private.sync_seq') as seq
        from pairs p
       where cardinality(p.fields) > 0
    ), recorded as (
      update app_private.sync_records s
         set version = w.seq, scope_id = w.scope_id, updated_at = now(), txid = v_txid,
             field_versions = s.field_versions
               || (select jsonb_object_agg(f, jsonb_build_object('v', w.seq, 'd', v_device)) from unnest(w.fields) f)
        from written w
       where s.collection = v_collection and s.id = w.id
    ), stayed as (
      -- A row that stays in its scope: its entry there is updated in place.
      update app_private.sync_changes c
         set present = true, seq = w.seq, txid = v_txid, changed_at = now()
        from written w
       where w.old_scope_id is not distinct from w.scope_id
         and c.scope_id = w.scope_id and c.collection = v_collection and c.id = w.id
      returning c.id
    ), departed as (
      update app_private.sync_changes c
         set present = false, seq = w.seq, txid = v_txid, changed_at = now()
        from written w
       where w.old_scope_id is distinct from w.scope_id
         and c.scope_id = w.old_scope_id and c.collection = v_collection and c.id = w.id
    ), arrived as (
      -- A row that moved arrives in its new scope; so does any row whose entry
      -- was not found above (never the case while the triggers keep them).
      insert into app_private.sync_changes as c (scope_id, collection, id, present, seq, txid, since_seq, changed_at)
      select w.scope_id, v_collection, w.id, true, w.seq, v_txid, w.seq, now() from written w
       where w.id not in (select stayed.id from stayed)
      on conflict (scope_id, collection, id) do update
        set present = true, seq = excluded.seq, txid = excluded.txid, changed_at = excluded.changed_at
    )
    select count(*) into v_pairs from pairs;
    if v_pairs <> v_rows then
      raise exception 'the id of a synced row cannot change (table %)', tg_relid::regclass using errcode = 'check_violation';
    end if;

  elsif tg_op = 'DELETE' then
    if v_scope = 'id' then
      select array_agg(o.id), array_agg(o.id) into v_ids, v_scopes from old_rows o;
    else
      execute format('select array_agg(o.id), array_agg(o.%I) from old_rows o', v_scope) into v_ids, v_scopes;
    end if;
    if v_ids is null then
      -- A delete that deleted nothing: keep_a_list_owner's, for instance, once
      -- per new membership. Its statements below have a cached plan that may
      -- scan the whole collection's bookkeeping (made while it was small).
      return null;
    end if;
    with written as (
      select w.id, w.scope_id, nextval('app_private.sync_seq') as seq
        from unnest(v_ids, v_scopes) as w(id, scope_id)
    ), recorded as (
      update app_private.sync_records s
         set deleted = true, version = w.seq, scope_id = w.scope_id, updated_at = now(), deleted_at = now(), txid = v_txid,
             field_versions = jsonb_build_object('*', jsonb_build_object('v', w.seq, 'd', v_device))
        from written w
       where s.collection = v_collection and s.id = w.id and not s.deleted
      returning s.created_by
    ), counted as (
      update app_private.sync_usage u
         set live_records = greatest(0, u.live_records - r.n)
        from (select r.created_by, count(*) as n from recorded r where r.created_by is not null group by r.created_by) r
       where u.user_id = r.created_by
    )
    update app_private.sync_changes c
       set present = false, seq = w.seq, txid = v_txid, changed_at = now()
      from written w
     where c.scope_id = w.scope_id and c.collection = v_collection and c.id = w.id;
  end if;
  return null;
end;
$$;
comment on function app_private.track_sync_changes() is
  'Trigger (after insert/update/delete, per statement, transition tables new_rows/old_rows) of every synced table: bumps versions and per-field versions (an insert stamps "*", an update each changed column; stamped with the device in tidesync.device_id, if any), moves change entries between scopes, writes tombstones and keeps the live-records usage (an insert counts for its writer; a membership table''s rows count for nobody). SECURITY DEFINER: users never write bookkeeping themselves.';

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
  'Makes a table syncable as the collection named like the table: needs a uuid primary key `id`, a not-null uuid scope column (''id'' for a scope table such as lists) and RLS enabled. Installs the change-tracking triggers (and one refusing TRUNCATE, which they cannot see), indexes the scope column when no index starts with it (named <table>_<column>_idx, dropped again by disable_sync), and records existing rows (their creator: the table''s created_by column, when it has one and the table is no membership table; counted in that user''s usage). A membership table made syncable too (public.list_members) is registered by enable_sync_membership first. Run it in a migration, then `npm run generate`.';
revoke all on function app_private.enable_sync(regclass, name) from public, anon, authenticated, service_role;

create or replace function app_private.enable_sync_membership(p_table regclass, p_scope_column name, p_user_column name)
returns void
language plpgsql
security invoker
set search_path = ''
as $$
begin
  -- Its rows count in nobody's usage; enable_sync, run first, would have counted them.
  if exists (select 1 from app_private.sync_tables t where t.relation = p_table) then
    raise exception 'enable_sync_membership: % is synced already; register it with enable_sync_membership first, then enable_sync', p_table
      using errcode = 'invalid_parameter_value';
  end if;
  insert into app_private.sync_memberships (relation, scope_column, user_column) values (p_table, p_scope_column, p_user_column);
  execute format('create trigger tidesync_track_access_grants after insert on %s referencing new table as new_rows '
                 'for each statement execute function app_private.track_sync_access()', p_table);
  execute format('create trigger tidesync_track_access_losses after delete on %s referencing old table as old_rows '
                 'for each statement execute function app_private.track_sync_access()', p_table);
  -- TRUNCATE fires neither: refused (use DELETE).
  -- (or replace: a membership table may be synced too)
  execute format('create or replace trigger tidesync_refuse_truncate before truncate on %s '
                 'for each statement execute function app_private.refuse_sync_truncate()', p_table);
end;
$$;
comment on function app_private.enable_sync_membership(regclass, name, name) is
  'Registers a membership table: inserting (scope, user) grants the user access to the scope, deleting it takes it away; both are logged for pulls. A role change (update) is not an access change. TRUNCATE, which no trigger logs, is refused. To sync the table as a collection too, run enable_sync after it.';
revoke all on function app_private.enable_sync_membership(regclass, name, name) from public, anon, authenticated, service_role;

-- ---------------------------------------------------------------- the table
alter table public.list_members add column id uuid not null default gen_random_uuid();
comment on column public.list_members.id is 'The membership''s id (its record id in sync); a membership is also unique by (list_id, user_id).';
alter table public.list_members drop constraint list_members_pkey;
alter table public.list_members add constraint list_members_pkey primary key (id);
alter table public.list_members add constraint list_members_list_id_user_id_key unique (list_id, user_id);
comment on constraint list_members_list_id_user_id_key on public.list_members is 'One membership per user and list; the scope column''s index for the policies and the list''s delete cascade.';

select app_private.enable_sync('public.list_members', 'list_id');
