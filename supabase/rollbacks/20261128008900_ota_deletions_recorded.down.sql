-- Down step of 20261128008900_ota_deletions_recorded.sql: the server forgets which updates were
-- deleted (the Expo manifest endpoint as it was then takes every update id it does not name as
-- deleted, as of the request).
drop function if exists app_private.ota_update_hidden(text, text, uuid[], uuid[]);
drop trigger if exists releases_30_record_ota_deletion on app_private.releases;
drop function if exists app_private.record_ota_deletion();
drop table if exists app_private.release_deletions;
