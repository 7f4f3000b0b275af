-- Down step of 20261126001300_device_registrations_in_turn.sql.
drop function app_private.lock_user_devices(uuid);
