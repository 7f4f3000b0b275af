-- What: the sync engine. `app_private.enable_sync('public.tasks', 'list_id')`
-- makes an ordinary table syncable: statement-level triggers keep, for every
-- row, its version and per-field versions (field-level merge), its scope
-- (the row of the scope table it belongs to, e.g. its list) and a change
-- entry per (scope, row) with the writing transaction's id; deletes leave
-- tombstones. `app_private.enable_sync_membership('public.list_members',
-- 'list_id', 'user_id')` logs who gains or loses access to a scope. Plus the
-- ledger of processed ops (exactly-once per op_id) and per-user usage.
-- Why: POST /v1/sync/batch and GET /v1/sync/changes sync the app's own
-- tables, shared between users, with the tables' RLS policies deciding every
-- row (docs/sync.md, docs/security-model.md). The bookkeeping is written by
-- SECURITY DEFINER triggers only: users can read it where RLS allows and can
-- never write it, so what a pull reports always follows what really changed.
--
-- Commit order (docs/sync.md has the proof): a change entry carries
-- (txid = pg_current_xact_id() of its writer, seq = nextval). A reader
-- delivers entries in (txid, seq) order, only below the xmin of its own
-- snapshot: every transaction with a lower txid has ended, so no entry can
-- later appear below that bound; an overwritten entry moves above it.
--
-- Down step: supabase/rollbacks/20261122010000_sync_engine.down.sql.

create sequence app_private.sync_seq as bigint;
comment on sequence app_private.sync_seq is 'Versions of synced rows and positions of change and access entries (one sequence for all).';

-- -------------------------------------------------------------- registries
create table app_private.sync_tables (
  collection text primary key constraint sync_tables_collection_format check (collection ~ '^[a-z][a-z0-9_]{0,62}$'),
  relation regclass not null unique,
  scope_column name not null,
  created_at timestamptz not null default now()
);
comment on table app_private.sync_tables is 'Tables made syncable by app_private.enable_sync(): the collection name clients use, the table, and the column holding each row''s scope id (''id'' for the scope table itself).';

create table app_private.sync_memberships (
  relation regclass primary key,
  scope_column name not null,
  user_column name not null
);
comment on table app_private.sync_memberships is 'Membership tables registered by app_private.enable_sync_membership(): a row (scope, user) gives that user read access to the scope; inserts and deletes are logged in sync_access.';

-- ---------------------------------------------------------------- bookkeeping
create table app_private.sync_records (
  collection text not null references app_private.sync_tables (collection) on delete cascade,
  id uuid not null,
  scope_id uuid not null,
  version bigint not null check (version > 0),
  field_versions jsonb not null default '{}'::jsonb
    constraint sync_records_field_versions_object check (jsonb_typeof(field_versions) = 'object'),
  deleted boolean not null default false,
  created_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz,
  txid xid8 not null default pg_current_xact_id(),
  primary key (collection, id),
  constraint sync_records_deleted_at_iff_deleted check (deleted = (deleted_at is not null))
);
comment on table app_private.sync_records is 'Sync state of every row of every synced table, live or deleted (tombstone, kept for the retention window). Written only by the sync triggers.';
comment on column app_private.sync_records.scope_id is 'The scope the row is in (for a tombstone: the scope it was deleted from).';
comment on column app_private.sync_records.version is 'sync_seq value of the row''s latest write: server-issued, strictly increasing per row.';
comment on column app_private.sync_records.field_versions is
  'Per column {"v": version of its last change, "d": installation id of the device that wrote it, or null (direct write / unknown)}; key "*" stands for every column not listed (set by a delete). Drives field-level merge (functions/_shared/merge.ts).';
comment on column app_private.sync_records.txid is 'Transaction that last wrote the row: that transaction may read the state it produced (a push reads back the tombstone of a list it deleted).';
comment on column app_private.sync_records.created_by is 'The user whose write created the row (live-records quota); null for writes without a user (service role).';

-- No index on scope_id: the policy checks it on rows found by (collection, id).
create index sync_records_tombstones_idx on app_private.sync_records (deleted_at) where deleted;
comment on index app_private.sync_records_tombstones_idx is 'Retention purge: tombstones by age.';
create index sync_records_created_by_idx on app_private.sync_records (created_by);
comment on index app_private.sync_records_created_by_idx is 'Account deletion: the foreign key to auth.users.';

create table app_private.sync_changes (
  scope_id uuid not null,
  -- no foreign key to sync_tables: it would need an index that only disable_sync uses
  collection text not null,
  id uuid not null,
  present boolean not null,
  seq bigint not null,
  txid xid8 not null,
  since_seq bigint not null,
  changed_at timestamptz not null default now(),
  primary key (scope_id, collection, id)
);
comment on table app_private.sync_changes is
  'The latest change of each row in each scope it has been in: present (the row is in this scope) or not (deleted, or moved to another scope). Pulls walk it per visible scope in (txid, seq) order.';
comment on column app_private.sync_changes.txid is 'pg_current_xact_id() of the writing transaction: a reader stops below the xmin of its snapshot (commit order).';
comment on column app_private.sync_changes.since_seq is 'seq when the row first entered this scope (kept when it leaves and comes back): a member who loses access is told to remove the rows that were there before, never rows that only arrived later.';

create index sync_changes_scope_position_idx on app_private.sync_changes (scope_id, txid, seq);
comment on index app_private.sync_changes_scope_position_idx is 'Incremental pulls: a scope''s changes after a cursor, in commit order.';
create index sync_changes_departed_idx on app_private.sync_changes (changed_at) where not present;
comment on index app_private.sync_changes_departed_idx is 'Retention purge: entries of deleted or moved rows by age.';

create table app_private.sync_access (
  user_id uuid not null references auth.users (id) on delete cascade,
  scope_id uuid not null,
  granted boolean not null,
  seq bigint not null,
  txid xid8 not null,
  changed_at timestamptz not null default now(),
  primary key (user_id, scope_id)
);
comment on table app_private.sync_access is 'Per user and scope, the latest access change (granted: became a member; not granted: lost membership). A pull delivers a newly granted scope in full and removes a lost one.';
create index sync_access_user_position_idx on app_private.sync_access (user_id, txid, seq);
comment on index app_private.sync_access_user_position_idx is 'Pulls: the caller''s access changes after a cursor.';
create index sync_access_revoked_idx on app_private.sync_access (changed_at) where not granted;
comment on index app_private.sync_access_revoked_idx is 'Retention purge: old revocations.';

create table app_private.sync_usage (
  user_id uuid primary key references auth.users (id) on delete cascade,
  live_records integer not null default 0 check (live_records >= 0)
);
comment on table app_private.sync_usage is 'Live rows each user created across all synced tables (the max_live_records_per_user quota). Kept by the sync triggers.';

create table app_private.sync_horizon (
  singleton boolean primary key default true check (singleton),
  purged_txid xid8 not null default '0'::xid8
);
comment on table app_private.sync_horizon is 'The highest txid of a purged change or access entry: a pull cursor at or below it may have missed a purged delete (410 RESYNC_REQUIRED).';
insert into app_private.sync_horizon default values;

create table app_private.sync_ops (
  user_id uuid not null references auth.users (id) on delete cascade,
  op_id uuid not null,
  device_id uuid,
  collection text check (collection ~ '^[a-z][a-z0-9_]{0,62}$'),
  record_id uuid not null,
  type text not null check (type in ('upsert', 'delete')),
  status text not null check (status in ('applied', 'conflict', 'rejected')),
  version bigint,
  error jsonb constraint sync_ops_error_bounded check (error is null or (jsonb_typeof(error) = 'object' and octet_length(error::text) <= 8192)),
  created_at timestamptz not null default now(),
  primary key (user_id, op_id),
  constraint sync_ops_error_iff_rejected check ((status = 'rejected') = (error is not null))
);
comment on table app_private.sync_ops is
  'Ledger of every op a user''s batches processed, unique per (user, op_id): a retried op answers "duplicate" with its original status, version and error instead of running again. Kept for the retention window.';
comment on column app_private.sync_ops.collection is 'Collection the op named, when it was a known one (null for an op rejected for an unknown collection).';
comment on column app_private.sync_ops.version is 'Row version the op resulted in (applied) or saw (conflict).';
comment on column app_private.sync_ops.error is 'Why the op was rejected (code, message, at most a few details; bounded).';
create index sync_ops_created_at_idx on app_private.sync_ops (created_at);
comment on index app_private.sync_ops_created_at_idx is 'Retention purge: oldest ledger rows first.';

-- --------------------------------------------------------------------- grants
revoke all on app_private.sync_tables, app_private.sync_memberships, app_private.sync_records, app_private.sync_changes,
  app_private.sync_access, app_private.sync_usage, app_private.sync_horizon, app_private.sync_ops
  from public, anon, authenticated, service_role;
revoke all on sequence app_private.sync_seq from public, anon, authenticated, service_role;
grant select on app_private.sync_tables, app_private.sync_memberships, app_private.sync_records, app_private.sync_changes,
  app_private.sync_access, app_private.sync_usage, app_private.sync_horizon to authenticated;
-- The ledger is the one table a user writes (through the push, as themselves).
grant select, insert on app_private.sync_ops to authenticated;

alter table app_private.sync_tables enable row level security;
alter table app_private.sync_memberships enable row level security;
alter table app_private.sync_records enable row level security;
alter table app_private.sync_changes enable row level security;
alter table app_private.sync_access enable row level security;
alter table app_private.sync_usage enable row level security;
alter table app_private.sync_horizon enable row level security;
alter table app_private.sync_ops enable row level security;

-- ------------------------------------------------------------------ scopes
create function app_private.visible_scope_ids()
returns uuid[]
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  v_table regclass;
  v_ids uuid[] := '{}';
  v_more uuid[];
begin
  -- A scope table is a synced table whose scope is its own id. Read as the
  -- caller, so the scope table's own RLS policies decide.
  for v_table in select t.relation from app_private.sync_tables t where t.scope_column = 'id' order by t.collection loop
    execute format('select coalesce(array_agg(s.id), ''{}'') from %s s', v_table) into v_more;
    v_ids := v_ids || v_more;
  end loop;
  return v_ids;
end;
$$;
comment on function app_private.visible_scope_ids() is
  'The ids of every scope row (e.g. list) the caller can read under the scope tables'' own RLS policies. Used by the sync policies and pulls as an InitPlan: (select app_private.visible_scope_ids()).';
revoke all on function app_private.visible_scope_ids() from public, anon, authenticated, service_role;
grant execute on function app_private.visible_scope_ids() to authenticated;

create policy "Signed-in users can read which tables sync"
  on app_private.sync_tables for select to authenticated using (true);
comment on policy "Signed-in users can read which tables sync" on app_private.sync_tables is 'The registry holds table names only (GET /v1/meta publishes them).';

create policy "Signed-in users can read which tables grant access"
  on app_private.sync_memberships for select to authenticated using (true);
comment on policy "Signed-in users can read which tables grant access" on app_private.sync_memberships is 'The registry holds table names only.';

create policy "Users can read the sync state of rows in scopes they can see"
  on app_private.sync_records for select to authenticated
  using (scope_id in (select unnest(app_private.visible_scope_ids())) or txid = pg_current_xact_id_if_assigned());
comment on policy "Users can read the sync state of rows in scopes they can see" on app_private.sync_records is
  'Versions and tombstones follow the scope: a member of a list sees those of its rows, nobody else does; a transaction also sees the state its own writes produced (e.g. the tombstone of the list it just deleted).';

create policy "Users can read changes in scopes they can see or have just lost"
  on app_private.sync_changes for select to authenticated
  using (
    scope_id in (select unnest(app_private.visible_scope_ids()))
    or exists (
      select 1 from app_private.sync_access a
      where a.user_id = (select auth.uid()) and a.scope_id = sync_changes.scope_id
        and not a.granted and sync_changes.since_seq <= a.seq
    )
  );
comment on policy "Users can read changes in scopes they can see or have just lost" on app_private.sync_changes is
  'Members read the change entries of their scopes; a former member still reads the entries of rows that were in the scope before they lost access (ids only matter: their devices must remove those rows), never of rows added later.';

create policy "Users can read their own access changes"
  on app_private.sync_access for select to authenticated
  using (user_id = (select auth.uid()));
comment on policy "Users can read their own access changes" on app_private.sync_access is 'A user sees when they gained or lost access, nobody else''s.';

create policy "Users can read their own usage"
  on app_private.sync_usage for select to authenticated
  using (user_id = (select auth.uid()));
comment on policy "Users can read their own usage" on app_private.sync_usage is 'The live-records count of the caller (quota).';

create policy "Signed-in users can read the purge horizon"
  on app_private.sync_horizon for select to authenticated using (true);
comment on policy "Signed-in users can read the purge horizon" on app_private.sync_horizon is 'One global number: how far the retention purge has gone.';

create policy "Users can read their own sync ops"
  on app_private.sync_ops for select to authenticated
  using (user_id = (select auth.uid()));
comment on policy "Users can read their own sync ops" on app_private.sync_ops is 'A user sees only their own op results (duplicate detection).';

create policy "Users can record their own sync ops"
  on app_private.sync_ops for insert to authenticated
  with check (user_id = (select auth.uid()));
comment on policy "Users can record their own sync ops" on app_private.sync_ops is 'A push records op results only under the caller.';

-- ------------------------------------------------------------ change tracking
create function app_private.track_sync_changes()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_collection text;
  v_scope text;
  v_device text := nullif(current_setting('tidesync.device_id', true), '');
  v_actor uuid := auth.uid();
  v_txid xid8 := pg_current_xact_id();
  v_pairs integer;
  v_rows integer;
begin
  select t.collection, t.scope_column into v_collection, v_scope
    from app_private.sync_tables t where t.relation = tg_relid;
  if v_collection is null then
    return null;
  end if;

  if tg_op = 'INSERT' then
    with written as (
      select j.id, j.data, (case when v_scope = 'id' then j.id::text else j.data ->> v_scope end)::uuid as scope_id,
             nextval('app_private.sync_seq') as seq
        from (select (to_jsonb(n) ->> 'id')::uuid as id, to_jsonb(n) - 'id' as data from new_rows n) j
    ), recorded as (
      insert into app_private.sync_records as s (collection, id, scope_id, version, field_versions, deleted, created_by, created_at, updated_at, deleted_at, txid)
      select v_collection, w.id, w.scope_id, w.seq,
             (select coalesce(jsonb_object_agg(k, jsonb_build_object('v', w.seq, 'd', v_device)), '{}'::jsonb) from jsonb_object_keys(w.data) k),
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
    with pairs as (
      select (to_jsonb(n) ->> 'id')::uuid as id, to_jsonb(n) - 'id' as new_data, to_jsonb(o) - 'id' as old_data
        from new_rows n join old_rows o on (to_jsonb(o) ->> 'id') = (to_jsonb(n) ->> 'id')
    ), changed as (
      select p.id, p.new_data, p.old_data,
             array(select e.key from jsonb_each(p.new_data) e where p.old_data -> e.key is distinct from e.value order by e.key) as fields
        from pairs p
    ), written as (
      select c.id, c.fields,
             (case when v_scope = 'id' then c.id::text else c.new_data ->> v_scope end)::uuid as scope_id,
             (case when v_scope = 'id' then c.id::text else c.old_data ->> v_scope end)::uuid as old_scope_id,
             nextval('app_private.sync_seq') as seq
        from changed c
       where cardinality(c.fields) > 0
    ), recorded as (
      update app_private.sync_records s
         set version = w.seq, scope_id = w.scope_id, updated_at = now(), txid = v_txid,
             field_versions = s.field_versions
               || (select jsonb_object_agg(f, jsonb_build_object('v', w.seq, 'd', v_device)) from unnest(w.fields) f)
        from written w
       where s.collection = v_collection and s.id = w.id
    ), departed as (
      update app_private.sync_changes c
         set present = false, seq = w.seq, txid = v_txid, changed_at = now()
        from written w
       where w.old_scope_id is distinct from w.scope_id
         and c.scope_id = w.old_scope_id and c.collection = v_collection and c.id = w.id
    ), arrived as (
      insert into app_private.sync_changes as c (scope_id, collection, id, present, seq, txid, since_seq, changed_at)
      select w.scope_id, v_collection, w.id, true, w.seq, v_txid, w.seq, now() from written w
      on conflict (scope_id, collection, id) do update
        set present = true, seq = excluded.seq, txid = excluded.txid, changed_at = excluded.changed_at
    )
    select count(*) into v_pairs from pairs;
    if v_pairs <> v_rows then
      raise exception 'the id of a synced row cannot change (table %)', tg_relid::regclass using errcode = 'check_violation';
    end if;

  elsif tg_op = 'DELETE' then
    with written as (
      select j.id, (case when v_scope = 'id' then j.id::text else j.data ->> v_scope end)::uuid as scope_id,
             nextval('app_private.sync_seq') as seq
        from (select (to_jsonb(o) ->> 'id')::uuid as id, to_jsonb(o) - 'id' as data from old_rows o) j
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
  'Trigger (after insert/update/delete, per statement, transition tables new_rows/old_rows) of every synced table: bumps versions and per-field versions of the changed columns (stamped with the device in tidesync.device_id, if any), moves change entries between scopes, writes tombstones and keeps the live-records usage. SECURITY DEFINER: users never write bookkeeping themselves.';
revoke all on function app_private.track_sync_changes() from public, anon, authenticated, service_role;

create function app_private.track_sync_access()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_scope text;
  v_user text;
  v_granted boolean := tg_op = 'INSERT';
begin
  select m.scope_column, m.user_column into v_scope, v_user
    from app_private.sync_memberships m where m.relation = tg_relid;
  if v_scope is null then
    return null;
  end if;
  -- Transition tables exist only for their own event, hence two statements.
  if v_granted then
    insert into app_private.sync_access as a (user_id, scope_id, granted, seq, txid, changed_at)
    select (to_jsonb(n) ->> v_user)::uuid, (to_jsonb(n) ->> v_scope)::uuid, true,
           nextval('app_private.sync_seq'), pg_current_xact_id(), now()
      from new_rows n
    on conflict (user_id, scope_id) do update
      set granted = true, seq = excluded.seq, txid = excluded.txid, changed_at = excluded.changed_at;
  else
    insert into app_private.sync_access as a (user_id, scope_id, granted, seq, txid, changed_at)
    select c.user_id, c.scope_id, false, nextval('app_private.sync_seq'), pg_current_xact_id(), now()
      from (select (to_jsonb(o) ->> v_user)::uuid as user_id, (to_jsonb(o) ->> v_scope)::uuid as scope_id from old_rows o) c
     -- a user being deleted (the cascade from auth.users) needs no access history
     where exists (select 1 from auth.users u where u.id = c.user_id)
    on conflict (user_id, scope_id) do update
      set granted = false, seq = excluded.seq, txid = excluded.txid, changed_at = excluded.changed_at;
  end if;
  return null;
end;
$$;
comment on function app_private.track_sync_access() is
  'Trigger (after insert/delete, per statement) of a membership table: logs that a user gained (insert) or lost (delete) access to a scope, so their next pull delivers or removes the scope''s rows. SECURITY DEFINER: an owner removing a member writes the member''s access entry.';
revoke all on function app_private.track_sync_access() from public, anon, authenticated, service_role;

-- ------------------------------------------------------------- enable / disable
create function app_private.enable_sync(p_table regclass, p_scope_column name)
returns void
language plpgsql
security invoker
set search_path = ''
as $$
declare
  v_collection text;
  v_schema name;
  v_table name;
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

  -- Rows that exist already become version-1-of-their-own entries.
  execute format($sql$
    with existing as (
      select (to_jsonb(t) ->> 'id')::uuid as id, to_jsonb(t) - 'id' as data,
             (to_jsonb(t) ->> %L)::uuid as scope_id, nextval('app_private.sync_seq') as seq
        from %s t
    ), recorded as (
      insert into app_private.sync_records (collection, id, scope_id, version, field_versions)
      select %L, e.id, e.scope_id, e.seq,
             (select coalesce(jsonb_object_agg(k, jsonb_build_object('v', e.seq, 'd', null)), '{}'::jsonb) from jsonb_object_keys(e.data) k)
        from existing e
    )
    insert into app_private.sync_changes (scope_id, collection, id, present, seq, txid, since_seq)
    select e.scope_id, %L, e.id, true, e.seq, pg_current_xact_id(), e.seq from existing e
  $sql$, p_scope_column, p_table, v_collection, v_collection);
end;
$$;
comment on function app_private.enable_sync(regclass, name) is
  'Makes a table syncable as the collection named like the table: needs a uuid primary key `id`, a not-null uuid scope column (''id'' for a scope table such as lists) and RLS enabled. Installs the change-tracking triggers and records existing rows. Run it in a migration, then `npm run generate`.';
revoke all on function app_private.enable_sync(regclass, name) from public, anon, authenticated, service_role;

create function app_private.enable_sync_membership(p_table regclass, p_scope_column name, p_user_column name)
returns void
language plpgsql
security invoker
set search_path = ''
as $$
begin
  insert into app_private.sync_memberships (relation, scope_column, user_column) values (p_table, p_scope_column, p_user_column);
  execute format('create trigger tidesync_track_access_grants after insert on %s referencing new table as new_rows '
                 'for each statement execute function app_private.track_sync_access()', p_table);
  execute format('create trigger tidesync_track_access_losses after delete on %s referencing old table as old_rows '
                 'for each statement execute function app_private.track_sync_access()', p_table);
end;
$$;
comment on function app_private.enable_sync_membership(regclass, name, name) is
  'Registers a membership table: inserting (scope, user) grants the user access to the scope, deleting it takes it away; both are logged for pulls. A role change (update) is not an access change.';
revoke all on function app_private.enable_sync_membership(regclass, name, name) from public, anon, authenticated, service_role;

create function app_private.disable_sync(p_table regclass)
returns void
language plpgsql
security invoker
set search_path = ''
as $$
begin
  execute format('drop trigger if exists tidesync_track_inserts on %s', p_table);
  execute format('drop trigger if exists tidesync_track_updates on %s', p_table);
  execute format('drop trigger if exists tidesync_track_deletes on %s', p_table);
  execute format('drop trigger if exists tidesync_track_access_grants on %s', p_table);
  execute format('drop trigger if exists tidesync_track_access_losses on %s', p_table);
  delete from app_private.sync_memberships where relation = p_table;
  delete from app_private.sync_changes where collection = (select t.collection from app_private.sync_tables t where t.relation = p_table);
  -- cascades to the table's sync_records
  delete from app_private.sync_tables where relation = p_table;
end;
$$;
comment on function app_private.disable_sync(regclass) is 'Undoes enable_sync / enable_sync_membership for a table (down migrations): drops its triggers and its bookkeeping.';
revoke all on function app_private.disable_sync(regclass) from public, anon, authenticated, service_role;

-- ------------------------------------------------------------------ the push
create function app_private.sync_apply(p_writes jsonb)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_group jsonb;
  v_rows jsonb;
  v_row jsonb;
  v_kind text;
  v_collection text;
  v_table regclass;
  v_columns text[];
  v_sql text;
  v_done jsonb;
  v_failed jsonb := '[]'::jsonb;
  v_keys jsonb := '[]'::jsonb;
  v_records jsonb := '[]'::jsonb;
  v_part jsonb;
  v_state text;
  v_constraint text;
  v_column text;
  v_message text;
begin
  -- p_writes: [{collection, kind: insert|update|delete, columns: [...], rows: [{id, ...}]}], planned by
  -- functions/api/sync/plan-batch.ts. Runs as the caller: the table's RLS policies, grants and
  -- constraints decide. A group is written in one statement; when the database refuses it, its rows
  -- are retried one by one (each in its own subtransaction) so that only the rows it refuses fail.
  for v_group in select g from jsonb_array_elements(p_writes) g loop
    v_kind := v_group ->> 'kind';
    v_collection := v_group ->> 'collection';
    v_rows := v_group -> 'rows';
    select t.relation into v_table from app_private.sync_tables t where t.collection = v_collection;
    if v_table is null then
      raise exception 'sync_apply: unknown collection %', v_collection using errcode = 'invalid_parameter_value';
    end if;
    select coalesce(array_agg(c), '{}') into v_columns from jsonb_array_elements_text(coalesce(v_group -> 'columns', '[]'::jsonb)) c;

    if v_kind = 'insert' then
      v_sql := format(
        -- no RETURNING: it would apply the SELECT policies to a row whose access rows an AFTER trigger adds
        'with w as (insert into %1$s (id%2$s) select id%2$s from jsonb_populate_recordset(null::%1$s, $1)) '
        'select jsonb_agg(x.id) from jsonb_to_recordset($1) as x(id uuid)',
        v_table, (select coalesce(string_agg(', ' || quote_ident(c), ''), '') from unnest(v_columns) c));
    elsif v_kind = 'update' then
      v_sql := format(
        'with w as (update %1$s t set %2$s from jsonb_populate_recordset(null::%1$s, $1) v where t.id = v.id returning t.id) '
        'select coalesce(jsonb_agg(w.id), ''[]'') from w',
        v_table, (select string_agg(format('%1$I = v.%1$I', c), ', ') from unnest(v_columns) c));
    elsif v_kind = 'delete' then
      v_sql := format(
        'with w as (delete from %1$s t using jsonb_to_recordset($1) as v(id uuid) where t.id = v.id returning t.id) '
        'select coalesce(jsonb_agg(w.id), ''[]'') from w',
        v_table);
    else
      raise exception 'sync_apply: unknown kind %', v_kind using errcode = 'invalid_parameter_value';
    end if;

    begin
      execute v_sql using v_rows into v_done;
    -- What a row may be refused for; anything else (timeouts, deadlocks, bugs) aborts the batch.
    exception when integrity_constraint_violation or data_exception or insufficient_privilege or raise_exception then
      v_done := '[]'::jsonb;
      for v_row in select r from jsonb_array_elements(v_rows) r loop
        begin
          execute v_sql using jsonb_build_array(v_row) into v_part;
          v_done := v_done || coalesce(v_part, '[]'::jsonb);
        exception when integrity_constraint_violation or data_exception or insufficient_privilege or raise_exception then
          get stacked diagnostics v_state = returned_sqlstate, v_constraint = constraint_name,
                                  v_column = column_name, v_message = message_text;
          v_failed := v_failed || jsonb_build_object(
            'collection', v_collection, 'id', v_row ->> 'id', 'kind', v_kind, 'sqlstate', v_state,
            'constraint', nullif(v_constraint, ''), 'column', nullif(v_column, ''), 'message', left(v_message, 200));
        end;
      end loop;
    end;
    -- Rows an update or delete left alone: the caller can see them but the
    -- policies do not let them write (e.g. a viewer).
    v_failed := v_failed || coalesce((
      select jsonb_agg(jsonb_build_object('collection', v_collection, 'id', r ->> 'id', 'kind', v_kind, 'sqlstate', 'not_permitted'))
        from jsonb_array_elements(v_rows) r
       where not v_done @> jsonb_build_array(r -> 'id')
         and not exists (select 1 from jsonb_array_elements(v_failed) f
                          where f ->> 'collection' = v_collection and f ->> 'id' = r ->> 'id')), '[]'::jsonb);
    v_keys := v_keys || jsonb_build_object('collection', v_collection, 'table', v_table::text, 'ids', v_done);
  end loop;

  -- The state every written row is in now (as the caller sees it).
  for v_group in select k from jsonb_array_elements(v_keys) k where jsonb_array_length(k -> 'ids') > 0 loop
    execute format(
      'select coalesce(jsonb_agg(jsonb_build_object(''collection'', s.collection, ''id'', s.id, ''version'', s.version, '
      '''deleted'', s.deleted, ''updated_at'', to_char(s.updated_at at time zone ''UTC'', ''YYYY-MM-DD"T"HH24:MI:SS.US"Z"''), '
      '''data'', case when s.deleted then null else to_jsonb(t) - ''id'' end)), ''[]'') '
      'from app_private.sync_records s left join %s t on t.id = s.id '
      'where s.collection = $1 and s.id in (select jsonb_array_elements_text($2)::uuid)',
      v_group ->> 'table')
      using v_group ->> 'collection', v_group -> 'ids' into v_part;
    v_records := v_records || v_part;
  end loop;

  return jsonb_build_object('failed', v_failed, 'records', v_records);
end;
$$;
comment on function app_private.sync_apply(jsonb) is
  'The write of POST /v1/sync/batch: inserts, updates and deletes the planned rows of synced tables as the caller (RLS, grants and constraints decide), isolating rows the database refuses (each reported with its SQLSTATE, constraint and column) and rows the policies leave unwritten; returns those failures and the new state of every written row.';
revoke all on function app_private.sync_apply(jsonb) from public, anon, authenticated, service_role;
grant execute on function app_private.sync_apply(jsonb) to authenticated;
