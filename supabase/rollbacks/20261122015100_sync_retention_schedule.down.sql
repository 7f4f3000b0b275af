-- Down step of 20261122015100_sync_retention_schedule.sql: unschedule the job
-- where pg_cron exists (elsewhere the migration scheduled nothing). Nested
-- IFs: cron.job may only be named once pg_cron is known to exist.
do $$
begin
  if exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
    if exists (select 1 from cron.job where jobname = 'tidesync-purge-sync-retention') then
      perform cron.unschedule('tidesync-purge-sync-retention');
    end if;
  end if;
end
$$;
