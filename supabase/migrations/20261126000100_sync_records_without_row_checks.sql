-- What: app_private.sync_records loses its two foreign keys
-- (collection → sync_tables, created_by → auth.users). What they did on the
-- referenced side is now done explicitly: disable_sync() deletes the table's
-- sync state itself, and a statement trigger on auth.users sets created_by to
-- null for the deleted users (the `on delete set null` the foreign key did).
-- Why: the sync triggers are the only writers of sync_records, and each
-- foreign key checked every written row on its own (an SPI lookup and a row
-- lock per row): 1,000 checks per 500-row insert, ~11% of a 500-row insert
-- into public.tasks (23.4 → 20.9 ms, docs/performance.md), paid by every
-- push and every direct write. The values are never unchecked in practice:
--   - collection: the trigger reads it from sync_tables in the same statement,
--     and disable_sync (which deletes it) drops the table's triggers first;
--   - created_by: it is auth.uid() of the writer, and the same statement
--     upserts that user's sync_usage row, whose foreign key to auth.users is
--     kept. So a write racing the user's deletion either fails that check
--     (the user is gone) or is ordered before the deletion by the lock it or
--     the usage row holds; the deletion's trigger below then runs after it
--     committed (a new snapshot per statement) and nulls its rows too.
--     pgTAP 123 checks both paths (deletion through the purge and directly).
-- Rollback: supabase/rollbacks/20261126000100_sync_records_without_row_checks.down.sql

alter table app_private.sync_records
  drop constraint sync_records_collection_fkey,
  drop constraint sync_records_created_by_fkey;

comment on index app_private.sync_records_created_by_idx is
  'Account deletion: app_private.forget_deleted_creators() finds the rows a deleted user created.';

create function app_private.forget_deleted_creators()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  update app_private.sync_records s
     set created_by = null
    from old_rows o
   where s.created_by = o.id;
  return null;
end;
$$;
comment on function app_private.forget_deleted_creators() is
  'Trigger (after delete on auth.users, per statement): the sync state of rows a deleted user created no longer names them (what a foreign key''s on delete set null did; sync_records has none, so that writes are not checked row by row).';
revoke all on function app_private.forget_deleted_creators() from public, anon, authenticated, service_role;

create trigger on_auth_users_deleted_forget_sync_creators
  after delete on auth.users
  referencing old table as old_rows
  for each statement execute function app_private.forget_deleted_creators();

create or replace function app_private.disable_sync(p_table regclass)
returns void
language plpgsql
security invoker
set search_path = ''
as $$
declare
  v_collection text := (select t.collection from app_private.sync_tables t where t.relation = p_table);
begin
  execute format('drop trigger if exists tidesync_track_inserts on %s', p_table);
  execute format('drop trigger if exists tidesync_track_updates on %s', p_table);
  execute format('drop trigger if exists tidesync_track_deletes on %s', p_table);
  execute format('drop trigger if exists tidesync_track_access_grants on %s', p_table);
  execute format('drop trigger if exists tidesync_track_access_losses on %s', p_table);
  delete from app_private.sync_memberships where relation = p_table;
  delete from app_private.sync_changes where collection = v_collection;
  delete from app_private.sync_records where collection = v_collection;
  delete from app_private.sync_tables where relation = p_table;
end;
$$;
