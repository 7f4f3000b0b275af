-- Down step of 20261122000100_app_private_and_rate_limits.sql (run by
-- scripts/test-migrations.ts as the owner role; see docs/versioning.md).
drop function if exists app_private.purge_rate_limit_counters(timestamptz, integer);
drop function if exists app_private.hit_rate_limit(uuid, text, integer);
drop table if exists app_private.rate_limit_counters;
drop schema if exists app_private;
