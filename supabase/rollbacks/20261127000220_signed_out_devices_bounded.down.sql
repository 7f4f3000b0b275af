-- Down step of 20261127000220_signed_out_devices_bounded.sql: signed-out
-- devices are kept until the account goes, as before.
drop trigger devices_30_prune_signed_out on app_private.devices;
drop function app_private.prune_signed_out_devices();
drop function app_private.signed_out_devices_kept();
