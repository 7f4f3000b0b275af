-- Down step of 20261122040100_release_feedback.sql.
drop table if exists app_private.release_feedback;
