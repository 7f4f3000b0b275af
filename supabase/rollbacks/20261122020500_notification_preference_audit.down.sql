-- Down step of 20261122020500_notification_preference_audit.sql. The trigger
-- on notification_preferences (which stays) goes before its function.
drop trigger if exists notification_preferences_record_change on app_private.notification_preferences;
drop function if exists app_private.record_notification_preference_change();
drop table if exists app_private.notification_preference_audit;
drop function if exists app_private.forbid_audit_rewrite();
drop function if exists app_private.notification_preference_document(app_private.notification_preferences);
