-- Down step of 20261122020400_notification_preferences.sql.
drop table if exists app_private.notification_preferences;
drop function if exists app_private.maintain_notification_preference_version();
drop function if exists app_private.notification_categories_are_valid(jsonb);
drop function if exists app_private.required_notification_categories();
drop function if exists app_private.notification_channel_names();
drop function if exists app_private.notification_category_names();
