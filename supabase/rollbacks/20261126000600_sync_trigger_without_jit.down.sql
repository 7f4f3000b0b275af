-- Down step of 20261126000600_sync_trigger_without_jit.sql: the trigger
-- function plans with the session's JIT setting again.
alter function app_private.track_sync_changes() reset jit;
