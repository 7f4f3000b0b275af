-- What: drops app_private.lock_device_registration(uuid, text), the
-- two-argument form migration 20261126001900 made.
-- Why: nothing calls it any more. A session start takes the three-argument
-- form (functions/api/devices/device-store.ts), which since migration
-- 20261128001300 takes its token locks through lock_installation_push_tokens
-- instead of through it; yet authenticated could still execute it, taking the
-- device lock and the push-token locks of any user id it was given, which
-- only the api function's session start should take. pgTAP 301 pins that it
-- is gone and what the three-argument form may do.
-- Down step: supabase/rollbacks/20261128002510_two_argument_device_lock_dropped.down.sql

drop function app_private.lock_device_registration(uuid, text);
