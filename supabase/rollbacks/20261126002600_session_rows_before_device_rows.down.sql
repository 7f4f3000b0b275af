-- Down step of 20261126002600_session_rows_before_device_rows.sql: the two
-- functions go; the two-argument lock_device_registration, which the
-- migration left alone, is again the one a session start takes.
drop function app_private.lock_device_registration(uuid, text, uuid);
drop function app_private.lock_registration_sessions(uuid);
