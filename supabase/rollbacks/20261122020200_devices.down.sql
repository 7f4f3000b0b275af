-- Down step of 20261122020200_devices.sql.
drop table if exists app_private.devices;
drop function if exists app_private.release_push_token_elsewhere();
drop function if exists app_private.maintain_device_state();
