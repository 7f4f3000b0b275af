-- Down step of 20261126000100_sync_records_without_row_checks.sql: the two
-- foreign keys of app_private.sync_records back (their on delete actions do
-- what the trigger on auth.users and disable_sync's own delete did), and
-- disable_sync as 20261122010000_sync_engine.sql made it.
-- auth.users belongs to Supabase Auth: the owner may create a trigger on it but
-- not drop one by name; dropping the trigger's function with CASCADE drops it.
drop function app_private.forget_deleted_creators() cascade;

alter table app_private.sync_records
  add constraint sync_records_collection_fkey foreign key (collection) references app_private.sync_tables (collection) on delete cascade,
  add constraint sync_records_created_by_fkey foreign key (created_by) references auth.users (id) on delete set null;

comment on index app_private.sync_records_created_by_idx is 'Account deletion: the foreign key to auth.users.';

create or replace function app_private.disable_sync(p_table regclass)
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
