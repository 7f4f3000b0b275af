-- Down step of 20261126002100_live_records_quota_in_database.sql: the quota is the push planner's alone again
-- (its limit back in functions/_shared/limits.ts as in the code before).
drop trigger if exists sync_usage_10_live_records_quota on app_private.sync_usage;
drop function if exists app_private.refuse_live_records_over_quota();
drop function if exists app_private.max_live_records_per_user();
