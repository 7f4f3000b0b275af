-- Down step of 20261122010000_sync_engine.sql (synced tables were disabled by their own down steps).
drop function if exists app_private.sync_apply(jsonb);
drop function if exists app_private.disable_sync(regclass);
drop function if exists app_private.enable_sync_membership(regclass, name, name);
drop function if exists app_private.enable_sync(regclass, name);
drop table if exists app_private.sync_ops;
drop table if exists app_private.sync_horizon;
drop table if exists app_private.sync_usage;
-- sync_changes first: its select policy reads sync_access
drop table if exists app_private.sync_changes;
drop table if exists app_private.sync_access;
drop table if exists app_private.sync_records;
drop table if exists app_private.sync_memberships;
drop table if exists app_private.sync_tables;
drop function if exists app_private.track_sync_access();
drop function if exists app_private.track_sync_changes();
drop function if exists app_private.visible_scope_ids();
drop sequence if exists app_private.sync_seq;
