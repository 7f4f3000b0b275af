-- What: sync storage. Per user a head (the sequence allocator and its lock),
-- the records of every collection (with per-field versions for field-level
-- merge), and the ledger of processed ops (exactly-once per op_id).
-- Why: POST /v1/sync/batch and GET /v1/sync/changes (api-v1.md). The api
-- function reaches these tables only as role `authenticated` inside a
-- transaction carrying the verified claims, so the policies below decide.
--
-- THE commit-order guarantee the pull side relies on:
--   every transaction that writes a user's records first updates that user's
--   sync_heads row (insert ... on conflict do update) and keeps its row lock
--   until commit, and only then takes change_seq values above the head's
--   last_seq (the trigger records_check_write refuses a version above
--   last_seq). So per user, two writers are serialized by the head lock: the
--   later one gets its seqs only after the earlier one committed or rolled
--   back. Hence, per user, change_seq order == commit order, and a reader
--   that has seen seq N will never later see a committed seq <= N appear.
--   Seqs may have gaps (rolled-back batches; intermediate versions of a record
--   written twice in one batch), so readers must never assume contiguity.
--
-- rollback:
--   drop table if exists app_private.sync_ops;
--   drop table if exists app_private.records;
--   drop function if exists app_private.records_check_write();
--   drop table if exists app_private.sync_heads;

-- ---------------------------------------------------------------- sync_heads
create table app_private.sync_heads (
  user_id uuid primary key references auth.users (id) on delete cascade,
  last_seq bigint not null default 0 check (last_seq >= 0),
  purged_through_seq bigint not null default 0 check (purged_through_seq >= 0),
  live_records integer not null default 0 check (live_records >= 0),
  updated_at timestamptz not null default now(),
  constraint sync_heads_purged_not_ahead check (purged_through_seq <= last_seq)
);
comment on table app_private.sync_heads is
  'One row per syncing user: the per-user change_seq allocator. Every write of a user''s records locks this row first (insert ... on conflict do update) and holds it until commit, so per user change_seq order equals commit order.';
comment on column app_private.sync_heads.last_seq is 'Highest change_seq handed out for this user (seqs may have gaps; never reused).';
comment on column app_private.sync_heads.purged_through_seq is 'Tombstones with change_seq <= this were purged; a pull cursor below it must resync (410).';
comment on column app_private.sync_heads.live_records is 'Number of this user''s non-deleted records, kept by the push for the live-records quota.';

alter table app_private.sync_heads enable row level security;
revoke all on app_private.sync_heads from public, anon, authenticated, service_role;
grant select, insert, update on app_private.sync_heads to authenticated;

create policy "Users can read their own sync head"
  on app_private.sync_heads for select to authenticated
  using (user_id = (select auth.uid()));
comment on policy "Users can read their own sync head" on app_private.sync_heads is 'A user sees only their own sequence head.';

create policy "Users can create their own sync head"
  on app_private.sync_heads for insert to authenticated
  with check (user_id = (select auth.uid()));
comment on policy "Users can create their own sync head" on app_private.sync_heads is 'The first push of a user creates their head.';

create policy "Users can advance their own sync head"
  on app_private.sync_heads for update to authenticated
  using (user_id = (select auth.uid()))
  with check (user_id = (select auth.uid()));
comment on policy "Users can advance their own sync head" on app_private.sync_heads is 'A push locks and advances only its own user''s head; it cannot move it to another user.';

create function app_private.sync_heads_check_update()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  if new.user_id <> old.user_id then
    raise exception 'sync_heads.user_id cannot change' using errcode = 'check_violation';
  end if;
  if new.last_seq < old.last_seq or new.purged_through_seq < old.purged_through_seq then
    raise exception 'sync_heads sequences never move backwards' using errcode = 'check_violation';
  end if;
  return new;
end;
$$;
comment on function app_private.sync_heads_check_update() is
  'Trigger: a head keeps its owner, and last_seq / purged_through_seq only grow (seqs are never reused).';
revoke all on function app_private.sync_heads_check_update() from public, anon, authenticated, service_role;

create trigger sync_heads_check_update
  before update on app_private.sync_heads
  for each row execute function app_private.sync_heads_check_update();

-- ------------------------------------------------------------------- records
create table app_private.records (
  user_id uuid not null references auth.users (id) on delete cascade,
  collection text not null constraint records_collection_format check (collection ~ '^[a-z][a-z0-9_]{0,62}$'),
  id uuid not null,
  version bigint not null check (version > 0),
  change_seq bigint not null,
  data jsonb,
  field_versions jsonb not null default '{}'::jsonb
    constraint records_field_versions_object check (jsonb_typeof(field_versions) = 'object'),
  deleted boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz,
  primary key (user_id, collection, id),
  constraint records_user_change_seq_key unique (user_id, change_seq),
  constraint records_change_seq_is_version check (change_seq = version),
  constraint records_data_object check (data is null or jsonb_typeof(data) = 'object'),
  -- 64 KiB = the contract's default max_record_data_bytes, measured the way
  -- functions/_shared/record-size.ts measures it (Postgres' jsonb text form).
  constraint records_data_size check (data is null or octet_length(data::text) <= 65536),
  constraint records_deleted_iff_no_data check (deleted = (data is null)),
  constraint records_deleted_at_iff_deleted check (deleted = (deleted_at is not null))
);
comment on table app_private.records is
  'Every user''s synced records of every collection; deletes are tombstones (deleted, data null) kept for the retention window.';
comment on column app_private.records.collection is 'Collection name, declared in functions/_shared/collections.ts.';
comment on column app_private.records.id is 'Client-generated record id; unique per user and collection (another user may use the same id for their own record).';
comment on column app_private.records.version is 'The user''s change_seq of this record''s latest write: server-issued, per-user monotonic, strictly increasing per record.';
comment on column app_private.records.change_seq is 'Equal to version; the pull cursor walks (user_id, change_seq), whose order is commit order per user (see sync_heads).';
comment on column app_private.records.data is 'The record''s fields (collection schema), null for a tombstone.';
comment on column app_private.records.field_versions is
  'Per field {"v": change_seq of its last write, "d": device installation id or null}; key "*" stands for every field not listed (set by a delete). Drives field-level merge (functions/_shared/merge.ts).';
comment on column app_private.records.deleted_at is 'When the record was deleted (tombstone age for the retention purge).';

alter table app_private.records enable row level security;
revoke all on app_private.records from public, anon, authenticated, service_role;
-- No delete: users delete through tombstones; only the retention purge removes rows.
grant select, insert, update on app_private.records to authenticated;

create policy "Users can read their own sync records"
  on app_private.records for select to authenticated
  using (user_id = (select auth.uid()));
comment on policy "Users can read their own sync records" on app_private.records is 'A user sees only their own records; another user''s id looks unknown.';

create policy "Users can create their own sync records"
  on app_private.records for insert to authenticated
  with check (user_id = (select auth.uid()));
comment on policy "Users can create their own sync records" on app_private.records is 'A push can only create records owned by the caller.';

create policy "Users can update their own sync records"
  on app_private.records for update to authenticated
  using (user_id = (select auth.uid()))
  with check (user_id = (select auth.uid()));
comment on policy "Users can update their own sync records" on app_private.records is 'A push changes only the caller''s records and cannot hand one to another user.';

create function app_private.records_check_write()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
declare
  head_seq bigint;
begin
  if tg_op = 'UPDATE' then
    if new.user_id <> old.user_id or new.collection <> old.collection or new.id <> old.id then
      raise exception 'a record keeps its owner, collection and id' using errcode = 'check_violation';
    end if;
    if new.version <= old.version then
      raise exception 'record version must increase (% -> %)', old.version, new.version using errcode = 'check_violation';
    end if;
    if new.created_at <> old.created_at then
      raise exception 'records.created_at cannot change' using errcode = 'check_violation';
    end if;
  end if;
  -- The writer must have allocated this seq from its (locked) head first:
  -- this is what makes change_seq order equal commit order per user.
  select h.last_seq into head_seq from app_private.sync_heads h where h.user_id = new.user_id;
  if head_seq is null or new.version > head_seq then
    raise exception 'record version % was not allocated from the user''s sync head', new.version using errcode = 'check_violation';
  end if;
  return new;
end;
$$;
comment on function app_private.records_check_write() is
  'Trigger: owner, collection and id never change, version strictly increases, created_at is fixed, and every version was first allocated from the user''s sync_heads row.';
revoke all on function app_private.records_check_write() from public, anon, authenticated, service_role;

create trigger records_check_write
  before insert or update on app_private.records
  for each row execute function app_private.records_check_write();

-- ------------------------------------------------------------------ sync_ops
create table app_private.sync_ops (
  user_id uuid not null references auth.users (id) on delete cascade,
  op_id uuid not null,
  device_id text check (device_id is null or length(device_id) <= 64),
  collection text not null check (length(collection) between 1 and 64),
  record_id uuid not null,
  type text not null check (type in ('upsert', 'delete')),
  status text not null check (status in ('applied', 'conflict', 'rejected')),
  result jsonb not null constraint sync_ops_result_object check (jsonb_typeof(result) = 'object'),
  version bigint,
  created_at timestamptz not null default now(),
  primary key (user_id, op_id),
  constraint sync_ops_version_iff_applied check ((status = 'applied') = (version is not null))
);
comment on table app_private.sync_ops is
  'Ledger of every op a user''s batches processed, unique per (user, op_id): a retried op answers "duplicate" with the stored result instead of running again. Kept for the retention window.';
comment on column app_private.sync_ops.device_id is 'Installation id the batch named (device_id), if any.';
comment on column app_private.sync_ops.collection is 'Collection the op named (may be unknown when the op was rejected for it).';
comment on column app_private.sync_ops.result is 'The per-op result exactly as first returned to the client (op_id, status, record/error).';
comment on column app_private.sync_ops.version is 'Record version the op resulted in (applied only).';

create index sync_ops_created_at_idx on app_private.sync_ops (created_at);
comment on index app_private.sync_ops_created_at_idx is 'Retention purge: oldest ledger rows first.';

alter table app_private.sync_ops enable row level security;
revoke all on app_private.sync_ops from public, anon, authenticated, service_role;
-- No update or delete: a processed op is immutable for its user.
grant select, insert on app_private.sync_ops to authenticated;

create policy "Users can read their own sync ops"
  on app_private.sync_ops for select to authenticated
  using (user_id = (select auth.uid()));
comment on policy "Users can read their own sync ops" on app_private.sync_ops is 'A user sees only their own op results (duplicate detection).';

create policy "Users can record their own sync ops"
  on app_private.sync_ops for insert to authenticated
  with check (user_id = (select auth.uid()));
comment on policy "Users can record their own sync ops" on app_private.sync_ops is 'A push records op results only under the caller.';
