-- Down step of 20261122015000_sync_retention_purge.sql.
drop function if exists app_private.purge_sync_retention(timestamptz, integer, integer);
drop index if exists app_private.records_tombstones_deleted_at_idx;
