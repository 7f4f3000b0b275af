-- Down step of 20261122010000_sync_records_and_ops.sql. Dropping a table drops
-- its triggers; their functions are dropped after them.
drop table if exists app_private.sync_ops;
drop table if exists app_private.records;
drop function if exists app_private.records_check_write();
drop table if exists app_private.sync_heads;
drop function if exists app_private.sync_heads_check_update();
