-- Down step of 20261122040000_test_builds.sql.
drop table if exists app_private.release_webhook_deliveries;
drop table if exists app_private.release_update_policies;
drop table if exists app_private.releases;
drop table if exists app_private.tester_group_channels;
drop table if exists app_private.tester_group_members;
drop table if exists app_private.tester_groups;
drop function if exists app_private.receivable_release_channels();
drop function if exists app_private.maintain_release();
revoke usage on schema app_private from anon;
