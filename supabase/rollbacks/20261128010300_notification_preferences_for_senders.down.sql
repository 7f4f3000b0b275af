-- Down step of 20261128010300_notification_preferences_for_senders.sql: the
-- sender's three functions go, and notification_preference_document(row) is
-- again for no API role. Senders are back to reading
-- app_private.notification_preferences, where a user who never saved has no row.

drop function app_private.in_quiet_hours(jsonb, timestamptz);
drop function app_private.effective_notification_preferences(uuid);
drop function app_private.notification_preference_defaults();
revoke execute on function app_private.notification_preference_document(app_private.notification_preferences) from service_role;
