-- Down step of 20261128002300_ota_rollbacks_outlive_their_release.sql: the
-- server forgets a rollback once no rolled-back release shows it again (an
-- update offered after it is served as published to the devices it sent to
-- their embedded bundle, which do not take it).
drop trigger if exists releases_20_remember_past_rollback on app_private.releases;
drop function if exists app_private.remember_past_rollback();
drop table if exists app_private.release_past_rollbacks;
