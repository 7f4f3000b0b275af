-- Down step of 20261126001400_release_webhook_reads.sql.
drop table if exists app_private.release_webhook_reads;
