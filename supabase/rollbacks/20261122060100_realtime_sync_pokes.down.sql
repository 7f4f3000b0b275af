-- Down step of 20261122060100_realtime_sync_pokes.sql (run by
-- scripts/test-migrations.ts as the owner role; see docs/versioning.md).
drop trigger tidesync_poke_access_updated on app_private.sync_access;
drop trigger tidesync_poke_access_inserted on app_private.sync_access;
drop trigger tidesync_poke_changes_updated on app_private.sync_changes;
drop trigger tidesync_poke_changes_inserted on app_private.sync_changes;
drop function app_private.send_sync_pokes();
drop policy "Members receive the sync pokes of their lists and their own" on realtime.messages;
drop function app_private.may_receive_poke(text);
